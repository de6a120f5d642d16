#!/usr/bin/env bash
# Builds the libFuzzer targets of the readers with clang (coverage, AddressSanitizer,
# UndefinedBehaviorSanitizer; -DIB_FUZZ=ON) into build-fuzz/ and runs each for a given
# time on a corpus seeded from the shipped samples:
#   fuzz-netdiscover  ibnetdiscover / ibsim topology files (examples/topologies)
#   fuzz-lft-dump     opensm-lfts.dump LFT files (a minhop dump of the target's fabric)
#   fuzz-packet       raw IBA packets, RoCEv2 frames, ERF records
#   fuzz-workload     ASTRA-sim 1.0 / SimAI workload files (examples/workloads)
# Usage: bash utils/fuzz.sh [SECONDS per target, default 20] [TARGET...]
# A crash leaves its input in build-fuzz/crashes/ and fails the run. Each target's last
# lines (executions, coverage) are printed.
set -euo pipefail

IB_UTILS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IB_REPO=$(cd "$IB_UTILS_DIR/.." && pwd)
BUILD="$IB_REPO/build-fuzz"
# shellcheck source=install-deps.sh
source "$IB_UTILS_DIR/install-deps.sh" # clang and libFuzzer (libclang-rt-14-dev)
seconds=${1:-20}
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(fuzz-netdiscover fuzz-lft-dump fuzz-packet fuzz-workload)
fi

if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -S "$IB_REPO" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DIB_FUZZ=ON >/dev/null
fi
echo "fuzz: building ${targets[*]}"
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target "${targets[@]}"

export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$IB_UTILS_DIR/sanitize-lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
mkdir -p "$BUILD/crashes"
status=0
for t in "${targets[@]}"; do
  corpus="$BUILD/corpus/$t"
  mkdir -p "$corpus"
  case $t in
    fuzz-netdiscover) cp -n "$IB_REPO"/examples/topologies/* "$corpus"/ 2>/dev/null || true ;;
    fuzz-workload) cp -n "$IB_REPO"/examples/workloads/*.txt "$corpus"/ 2>/dev/null || true ;;
    fuzz-lft-dump) export IB_FUZZ_SEED_DIR="$corpus" ;;
  esac
  echo "fuzz: $t for $seconds s (corpus $corpus: $(ls "$corpus" | wc -l) inputs)"
  log="$BUILD/$t.log"
  if ! "$BUILD/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$BUILD/crashes/$t-" -print_final_stats=1 "$corpus" >"$log" 2>&1; then
    echo "fuzz: $t FAILED (input in $BUILD/crashes/, log $log):"
    grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$log" | head -10
    status=1
  fi
  unset IB_FUZZ_SEED_DIR
  grep -E "^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss|cov:" "$log" |
    tail -3
done
exit $status
