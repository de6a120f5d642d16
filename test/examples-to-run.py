#! /usr/bin/env python3
# ns-3's test.py reads this file in an ns-3 source tree (contrib/infiniband/test/): each entry
# is (example name and arguments, condition to run it, condition to run it under valgrind).
# `./test.py --example=ib-link` runs one; `./test.py` runs them all with the module's suites.
# Each argument set is a quick one (a few seconds at most in a release build).

cpp_examples = [
    ("ib-link", "True", "True"),
    ("ib-link --pcap=true", "True", "False"),
    ("ib-fat-tree --hosts=16 --radix=8", "True", "False"),
    ("ib-fat-tree --routing=dfsssp --pattern=all-to-all --hosts=16 --radix=8", "True", "False"),
    (
        "ib-fat-tree --transport=rc --pattern=permutation --adaptive --cc --hosts=16 --radix=8",
        "True",
        "False",
    ),
    (
        "ib-fat-tree --transport=rc --timeout=8 --duration=1500 --hosts=16 --radix=8 "
        "--failLink=leaf-0:5@100us",
        "True",
        "False",
    ),
    ("ib-ibnetdiscover", "True", "False"),
    ("ib-incast-victim --us=2500 --from=1000", "True", "False"),
    ("ib-perftest", "True", "False"),
    ("ib-perftest --test=read_lat --switches=3", "True", "False"),
    ("ib-perftest --roce --switches=1", "True", "False"),
    ("ib-perftest --test=write_bw --speed=HDR --profile=hdr-cx6-mpi", "True", "False"),
    ("ib-vs-ethernet --hosts=4 --bytes=100000", "True", "False"),
    ("ib-allreduce --hosts=8 --e=1M", "True", "False"),
    ("ib-allreduce --algo=sharp --hosts=8 --e=64K", "True", "False"),
    ("ib-allreduce --fabric=tcp --hosts=4 --e=64K", "True", "False"),
    ("ib-allreduce --fabric=roce --hosts=8 --e=1M", "True", "False"),
    ("ib-allreduce --fabric=all --hosts=8 --b=64K --e=256K", "True", "False"),
    ("ib-allreduce --hosts=8 --e=256K --ibCc=true", "True", "False"),
    ("ib-allreduce --hosts=8 --e=1M --check=true --speed=NDR --profile=ndr-cx7-nccl", "True", "False"),
    (
        "ib-allreduce --hosts=8 --b=1M --e=1M --iters=3 --check=true --timeout=8 "
        "--failLink=leaf-0:5@40us",
        "True",
        "False",
    ),
    (
        "ib-allreduce --algo=sharp --hosts=8 --b=1M --e=1M --iters=3 --check=true --timeout=8 "
        "--failLink=leaf-0:5@40us",
        "True",
        "False",
    ),
    (
        "gpu-cluster-collectives --servers=2 --gpus=4 --radix=8 --b=64K --e=1M --check=true",
        "True",
        "False",
    ),
    (
        "gpu-cluster-collectives --coll=alltoall --fabric=all --servers=2 --gpus=4 --radix=8 "
        "--b=64K --e=256K --check=true",
        "True",
        "False",
    ),
    ("ai-workload --gpus=16", "True", "False"),
    ("ai-workload --model=resnet50 --gpus=16 --fabric=all", "True", "False"),
    ("ai-workload --gpus=32 --fabric=ib-flow", "True", "False"),
    ("ai-cluster --fabric=ib,ib-flow --layers=1 --hidden=1024 --seq=512", "True", "False"),
    (
        "gpu-cluster-collectives --coll=alltoallv --topology=rail-only --fabric=all --servers=2 "
        "--gpus=4 --radix=8 --b=64K --e=256K --check=true",
        "True",
        "False",
    ),
    (
        "ai-workload --model=moe --gpus=32 --layers=2 --pp=2 --microbatches=2 --hidden=1024 "
        "--seq=256 --zero=1",
        "True",
        "False",
    ),
    (
        "ai-cluster --servers=4 --gpus-per-server=2 --tp=2 --gpus=4 --others=1 --other-gpus=4 "
        "--layers=2 --hidden=1024 --seq=256 --fabric=ib,ib-sharp,roce --pp=2 --microbatches=2 "
        "--background=0.1",
        "True",
        "False",
    ),
    (
        "ai-cluster --servers=4 --gpus-per-server=2 --tp=2 --gpus=4 --others=1 --other-gpus=4 "
        "--layers=1 --hidden=1024 --seq=256 --topology=rail-only --channels=2",
        "True",
        "False",
    ),
    ("roce-vs-ib --hosts=16 --radix=8 --us=50 --warmUs=20", "True", "False"),
    ("ib-fat-tree-mpi --mpi=false --hosts=16 --packets=20", "True", "False"),
    ("ib-fat-tree-mpi --mpi=false --fabric=roce --hosts=16 --packets=20", "True", "False"),
    (
        "ai-training-fabrics --quick --models=resnet50 "
        "--fabrics=eth-100,tcp-eth-100,roce-100,ib-hdr,ib-hdr-sharp "
        "--iterations=1",
        "True",
        "False",
    ),
]

python_examples = []
