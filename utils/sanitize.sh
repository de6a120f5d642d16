#!/usr/bin/env bash
# Builds the GoogleTest suite and four programs with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-sanitize/ (the module's code, its tests and the
# programs; ns-3 and Boost are Debian's, not instrumented), runs the suite and the programs
# at their defaults and with a hardware profile. Any memory error, leak in the module's
# code or undefined behaviour fails the run.
#
# Environment: SANITIZE (default address,undefined), GTEST_FILTER (default: the whole
# suite but the tests that time the scheduler or run the ns-3 harness), JOBS.
set -euo pipefail

IB_UTILS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IB_REPO=$(cd "$IB_UTILS_DIR/.." && pwd)
BUILD="$IB_REPO/build-sanitize"

if [[ ! -f "$BUILD/build.ninja" ]]; then
  # -O1 keeps the instrumented suite fast enough for CI; -g1 gives the reports their
  # source lines at a fraction of full debug information's compile time.
  cmake -S "$IB_REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DIB_SANITIZE="${SANITIZE:-address,undefined}" >/dev/null
fi
echo "sanitize: building infiniband-gtest with -fsanitize=${SANITIZE:-address,undefined}"
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target infiniband-gtest ib-perftest \
  ib-allreduce ib-fat-tree ib-ibnetdiscover

# allocator_may_return_null: a refused huge allocation throws std::bad_alloc, as without
# ASan, so the tests of oversized memory regions see the module's own message.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$IB_UTILS_DIR/sanitize-lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$IB_UTILS_DIR/sanitize-ubsan.supp:${UBSAN_OPTIONS:-}"
filter="${GTEST_FILTER:--IbRouting.LargeFatTreeTiming:IbScheduler*Timing*}"
echo "sanitize: infiniband-gtest --gtest_filter=$filter"
cd "$BUILD"
status=0
./infiniband-gtest --gtest_filter="$filter" --gtest_brief=1 || status=1
if [[ -z ${GTEST_FILTER:-} ]]; then
  run() {
    echo "sanitize: $*"
    "$@" >/dev/null || { echo "sanitize: FAILED: $*"; status=1; }
  }
  run ./ib-perftest
  run ./ib-perftest --test=write_bw --speed=HDR --profile=hdr-cx6-mpi
  run ./ib-perftest --test=read_lat --switches=1 --profile=edr-cx4-mpi
  run ./ib-allreduce --hosts=8 -e=1M --check=true --profile=ndr-cx7-nccl --speed=NDR
  run ./ib-allreduce --algo=sharp --hosts=8 -e=64K --check=true
  run ./ib-fat-tree
  run ./ib-ibnetdiscover
fi
exit $status
