# Bad command-line input to the module's programs, and the message each must answer it with
# (exit status 1, no abort trace, no hang: test/expect-error.sh and CTest's timeout). Each
# case is a defect found by probing the programs as a new user would (issue 35): a crash,
# a hang, a wrapped negative value, a silent failure or a message naming internals.
#   ib_expect_error(NAME PROGRAM REGEX ARGS...)

ib_expect_error(perftest-iters-negative ib-perftest "--iters=-1 is not a whole number" --iters=-1)
ib_expect_error(perftest-iters-huge ib-perftest "--iters=4000000000: 0 .* or 5 to 100000000"
                --iters=4000000000)
ib_expect_error(perftest-iters-float ib-perftest "--iters=4e9 is not a whole number" --iters=4e9)
ib_expect_error(perftest-atomic-size ib-perftest "atomic_lat always moves 8 bytes"
                --test=atomic_lat --sizes=16)
ib_expect_error(perftest-speed ib-perftest "--speed=FOO: use one of SDR" --speed=FOO)
ib_expect_error(perftest-txdepth ib-perftest "--txDepth=0: use 1 to 15000" --txDepth=0)
ib_expect_error(perftest-cqmod ib-perftest "--cqMod=0: use 1 to 1024" --cqMod=0)
ib_expect_error(perftest-mtu ib-perftest "--mtu=3000: use 256, 512" --mtu=3000)
ib_expect_error(perftest-profile ib-perftest "--profile: unknown profile 'cx9'; use one of"
                --profile=cx9)
ib_expect_error(allreduce-iters-negative ib-allreduce "--iters=-1 is not a whole number"
                --iters=-1 -e=1K)
ib_expect_error(allreduce-factor-negative ib-allreduce "--f=-2 is not a whole number" -f=-2
                -e=1K)
ib_expect_error(allreduce-chunk ib-allreduce "--chunk=0: a chunk is at least 1 byte" --chunk=0)
ib_expect_error(benchmark-simms-negative ib-benchmark "--simMs=-1: give a simulated time above 0"
                --scenario=link-chain --simMs=-1 --p2p=false)
ib_expect_error(benchmark-simms-zero ib-benchmark "--simMs=0: give a simulated time above 0"
                --simMs=0)
ib_expect_error(benchmark-fattree-negative ib-benchmark "--fatTreeUs=-1: give a simulated time"
                --scenario=fat-tree --fatTreeUs=-1)
ib_expect_error(benchmark-csv ib-benchmark "--csv=/nonexistent/x.csv: cannot write the file"
                --csv=/nonexistent/x.csv)
ib_expect_error(fat-tree-routing ib-fat-tree "--routing=bogus: use minhop, updn, ftree or dfsssp"
                --routing=bogus)
ib_expect_error(fat-tree-window ib-fat-tree "statistics window is shorter than the simulator"
                --duration=0.001 --warmup=0)
ib_expect_error(ibnetdiscover-routing ib-ibnetdiscover "--routing=bogus: use minhop"
                --routing=bogus)
ib_expect_error(vs-ethernet-bytes-negative ib-vs-ethernet "--bytes=-1 is not a whole number"
                --bytes=-1)
ib_expect_error(vs-ethernet-flowmon ib-vs-ethernet "--flowmonXml=/nonexistent/x.xml: cannot write"
                --flowmonXml=/nonexistent/x.xml)
ib_expect_error(link-payload-negative ib-link "--payload=-1 is not a whole number" --payload=-1)
ib_expect_error(link-payload-large ib-link "--payload=5000: use 1 to 4096" --payload=5000)
ib_expect_error(link-drain-rate ib-link "--drainRate=fast: not a data rate" --drainRate=fast)
ib_expect_error(training-servers-negative ai-training-fabrics "--servers=-1 is not a whole number"
                --servers=-1)
ib_expect_error(training-nvlink ai-training-fabrics "--nvlink=fast: not a data rate"
                --nvlink=fast --quick)
ib_expect_error(workload-nvlink ai-workload "--nvlink=fast: not a data rate" --nvlink=fast)
ib_expect_error(gpu-collectives-servers-negative gpu-cluster-collectives
                "--servers=-2 is not a whole number" --servers=-2)
ib_expect_error(ai-cluster-servers-negative ai-cluster "--servers=-1 is not a whole number"
                --servers=-1)
ib_expect_error(roce-vs-ib-hosts-negative roce-vs-ib "--hosts=-4 is not a whole number" --hosts=-4)
ib_expect_error(incast-victim-negative ib-incast-victim "is not a number|is not a whole number"
                --us=abc)
ib_expect_error(ibnetdiscover-dev-zero ib-ibnetdiscover "a line of more than 65536 bytes"
                --topology=/dev/zero)

# Determinism: the same arguments give byte-identical output (wall-clock lines aside), and
# --RngRun gives another replication of a program's random choices.
#   ib_compare_runs(NAME same|differ PROGRAM ARGS... [--vs ARGS...])
ib_compare_runs(fat-tree-deterministic same ib-fat-tree --hosts=16 --radix=8
                --pattern=permutation --duration=50 --warmup=10)
ib_compare_runs(allreduce-deterministic same ib-allreduce --hosts=8 -e=64K --fabric=all)
ib_compare_runs(fat-tree-rngrun differ ib-fat-tree --hosts=16 --radix=8 --pattern=permutation
                --duration=50 --warmup=10 --vs --hosts=16 --radix=8 --pattern=permutation
                --duration=50 --warmup=10 --RngRun=2)
ib_compare_runs(roce-vs-ib-rngrun differ roce-vs-ib --hosts=8 --radix=4 --us=40 --vs --hosts=8
                --radix=4 --us=40 --RngRun=3)
ib_expect_error(ibnetdiscover-credit-loop ib-ibnetdiscover
                "--routing=minhop gives this topology a credit loop .*--allowCreditLoop=true"
                --topology=${CMAKE_CURRENT_SOURCE_DIR}/examples/topologies/switch-ring-8.ibnd
                --routing=minhop --pattern=all-to-all)
ib_expect_error(ibnetdiscover-deadlock ib-ibnetdiscover
                "deadlock at .* waiting for each other's credits in a cycle"
                --topology=${CMAKE_CURRENT_SOURCE_DIR}/examples/topologies/switch-ring-8.ibnd
                --routing=minhop --pattern=all-to-all --allowCreditLoop=true --duration=5000)
