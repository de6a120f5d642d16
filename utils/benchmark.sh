#!/usr/bin/env bash
# Builds the module in Release (asserts off, -O3) in <repo>/build-release and runs the
# benchmark program utils/ib-benchmark.cc. Extra arguments go to the program, e.g.
#   bash utils/benchmark.sh --scenario=link-chain --csv=bench.csv
#
# Environment: JOBS (parallel build jobs, default: number of cores).

set -euo pipefail

IB_UTILS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IB_REPO=$(cd "$IB_UTILS_DIR/.." && pwd)
IB_BUILD_DIR="$IB_REPO/build-release"

# shellcheck source=utils/install-deps.sh
source "$IB_UTILS_DIR/install-deps.sh"

if [[ ! -f "$IB_BUILD_DIR/build.ninja" ]]; then
  cmake -S "$IB_REPO" -B "$IB_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$IB_BUILD_DIR" -j "${JOBS:-$(nproc)}" --target ib-benchmark
"$IB_BUILD_DIR/ib-benchmark" "$@"
