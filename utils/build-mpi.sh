#!/usr/bin/env bash
# Builds this module in-tree, as contrib/infiniband of Debian 12's ns-3 3.37 source tree
# configured with --enable-mpi (OpenMPI from Debian), in an ns-3 tree of its own so that
# the non-MPI in-tree build (utils/build-in-tree.sh) stays as it is; then runs the
# distributed-simulation test (utils/test-mpi.sh: 1 process vs 2 MPI ranks with both of
# ns-3's distributed engines) and prints PASS or FAIL.
#
#   bash utils/build-mpi.sh [--fresh] [--test-only]
#
#   --fresh       delete the MPI tree's build and cmake-cache folders first
#   --test-only   do not build; run the test on what was built before
#
# Environment:
#   NS3_SRC_DIR   the MPI build's ns-3 source folder (default /work/ns3-src-mpi)
#   NS3_SRC_FROM  where an already fetched ns-3 3.37 source is copied from if NS3_SRC_DIR
#                 has none (default /work/ns3-src, where utils/build-in-tree.sh fetches
#                 it); if neither has one, build-in-tree.sh fetches it with apt-get source
#   JOBS          parallel build jobs (default 2)
#   IB_MPI_NP     ranks of the distributed runs (default 2)
#
# The build takes 10-20 minutes on two cores (ns-3's core, network, internet, internet-apps,
# point-to-point, applications, flow-monitor, csma and mpi modules, then this module).

set -euo pipefail

IB_UTILS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

export NS3_SRC_DIR=${NS3_SRC_DIR:-/work/ns3-src-mpi}
NS3_SRC_FROM=${NS3_SRC_FROM:-/work/ns3-src}
export JOBS=${JOBS:-2}

opt_fresh=() opt_test_only=0
for arg in "$@"; do
  case "$arg" in
    --fresh) opt_fresh=(--fresh) ;;
    --test-only) opt_test_only=1 ;;
    -h | --help)
      sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "build-mpi: unknown option $arg (try --help)" >&2
      exit 2
      ;;
  esac
done

t_start=$(date +%s)
step() { echo; echo "=== build-mpi [$(($(date +%s) - t_start))s]: $*"; }

find_tree() {
  local d
  for d in "$1"/ns3-3.37*/ns-3.37; do
    if [[ -x "$d/ns3" && -f "$d/CMakeLists.txt" ]]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

# ------------------------------------------------------------------ ns-3 source copy
if ! NS3_TREE=$(find_tree "$NS3_SRC_DIR"); then
  if SRC_TREE=$(find_tree "$NS3_SRC_FROM"); then
    rel=${SRC_TREE#"$NS3_SRC_FROM"/}
    step "copying the ns-3 source $SRC_TREE to $NS3_SRC_DIR/$rel (without its builds)"
    mkdir -p "$NS3_SRC_DIR/$rel"
    # Only the sources: the other tree's build outputs are for a configuration without
    # MPI (NS3_MPI changes every compile command), and its contrib/infiniband is stale.
    tar -C "$SRC_TREE" --exclude=./build --exclude=./cmake-cache \
      --exclude=./contrib/infiniband --exclude=./configure.log -cf - . |
      tar -C "$NS3_SRC_DIR/$rel" -xf -
    NS3_TREE="$NS3_SRC_DIR/$rel"
  else
    step "no ns-3 source in $NS3_SRC_DIR or $NS3_SRC_FROM: build-in-tree.sh fetches it"
  fi
else
  step "reusing the MPI ns-3 tree $NS3_TREE"
fi

# ------------------------------------------------------------------ build
bt_status=0
if ((!opt_test_only)); then
  step "NS3_SRC_DIR=$NS3_SRC_DIR utils/build-in-tree.sh --mpi ${opt_fresh[*]}"
  # build-in-tree.sh also runs the GoogleTest suite and one example (one process); its
  # status is reported, and the distributed test runs whenever the example was built.
  IB_EXAMPLE="ib-fat-tree-mpi --mpi=false" \
    bash "$IB_UTILS_DIR/build-in-tree.sh" --mpi "${opt_fresh[@]}" || bt_status=$?
  NS3_TREE=$(find_tree "$NS3_SRC_DIR")
fi

if ! grep -qs 'NS3_MPI:BOOL=ON' "$NS3_TREE/cmake-cache/CMakeCache.txt"; then
  echo "build-mpi: $NS3_TREE is not configured with --enable-mpi" >&2
  echo "build-mpi: FAIL"
  exit 1
fi
example=$(find "$NS3_TREE/build/contrib/infiniband/examples" -maxdepth 1 -type f \
  -name 'ns3*-ib-fat-tree-mpi-*' -perm -u+x 2>/dev/null | head -n 1)
if [[ -z "$example" ]]; then
  echo "build-mpi: the example ib-fat-tree-mpi was not built (build-in-tree status $bt_status)" >&2
  echo "build-mpi: FAIL"
  exit 1
fi

# ------------------------------------------------------------------ distributed test
step "utils/test-mpi.sh $example"
export LD_LIBRARY_PATH="$NS3_TREE/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
test_status=0
IB_MPI_WORKDIR="$NS3_TREE/build/infiniband-run/mpi" bash "$IB_UTILS_DIR/test-mpi.sh" "$example" ||
  test_status=$?

step "done: build-in-tree status $bt_status (GoogleTest suite and one-process example), distributed test status $test_status"
if ((test_status == 0)); then
  echo "build-mpi: PASS"
else
  echo "build-mpi: FAIL"
fi
exit "$test_status"
