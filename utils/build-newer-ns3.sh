#!/usr/bin/env bash
# Builds this module, its tests, examples and utils against a newer ns-3 than Debian 12's
# 3.37, the libns3-dev and libns3 packages of Debian 13 (trixie, ns-3 3.43), unpacked into
# a private folder (nothing is installed on the system), in C++20 (ns-3 3.41 and later
# need it) or the standard given, and runs the test suite and the examples against them.
#
# Checks, in order:
# - no source compiled against Debian 12's own ns-3 headers in /usr/include/ns3 (an
#   include that 3.43 no longer has would fall back to them): the folder is hidden in a
#   private mount namespace when one can be made, and the compilers' dependency lists are
#   searched for it in any case;
# - every ns-3 symbol the module's binaries use is defined by the 3.43 libraries;
# - the test suite passes. Trixie's ns-3 libraries need trixie's C and C++ runtime
#   libraries, which are unpacked beside them: a copy of the test program is given
#   trixie's dynamic loader and library path (patchelf; installed from Debian if
#   missing), so that it and the children it starts for death tests run with them while
#   the system's programs it calls (tshark) run with Debian 12's;
# - the examples run with their default arguments (ai-training-fabrics with --quick).
#
#   bash utils/build-newer-ns3.sh [--std=20|23] [--fresh] [--no-run]
#
# Environment:
#   NS3_NEWER_DIR   where the packages are unpacked (default /work/ns3-newer)
#   NS3_NEWER_SUITE Debian suite to take them from (default trixie)
#   BUILD_DIR       the build folder (default <repo>/build-ns3-newer)
#   JOBS            parallel build jobs (default 2)
#
# About 20 minutes on two cores. The packages come from the Debian archive that apt's
# sources on this machine already use (utils/apt-mirror.sh), with the suite set above.

set -euo pipefail

IB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NEWER=${NS3_NEWER_DIR:-/work/ns3-newer}
SUITE=${NS3_NEWER_SUITE:-trixie}
BUILD=${BUILD_DIR:-$IB_REPO/build-ns3-newer}
JOBS=${JOBS:-2}
STD=20
FRESH=0
RUN=1
for arg in "$@"; do
  case "$arg" in
    --std=*) STD=${arg#--std=} ;;
    --fresh) FRESH=1 ;;
    --no-run) RUN=0 ;;
    -h | --help)
      sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "build-newer-ns3: unknown option '$arg'; use --std=20, --std=23, --fresh or --no-run" >&2
      exit 2
      ;;
  esac
done
case "$STD" in
  20 | 23) ;;
  *)
    echo "build-newer-ns3: --std=$STD: use 20 or 23 (ns-3 3.41 and later need C++20)" >&2
    exit 2
    ;;
esac

log() { echo "=== build-newer-ns3: $*"; }

# 1. The packages, unpacked.
ROOT=$NEWER/root
CONFIG_DIR=$ROOT/usr/lib/x86_64-linux-gnu/cmake/ns3
if [[ ! -f $CONFIG_DIR/ns3Config.cmake ]]; then
  log "fetching libns3-dev and libns3 from Debian $SUITE"
  mkdir -p "$NEWER/apt/lists/partial" "$NEWER/debs"
  # shellcheck source=utils/apt-mirror.sh
  source "$IB_REPO/utils/apt-mirror.sh"
  if ! mirror=$(ib_debian_mirror); then
    echo "build-newer-ns3: apt's sources name no Debian archive to take $SUITE's packages" >&2
    echo "  from; configure one in /etc/apt/sources.list(.d) and run this again" >&2
    exit 1
  fi
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "$mirror $SUITE main" >"$NEWER/apt/sources.list"
  APT=(-o "Dir::Etc::SourceList=$NEWER/apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::State::Lists=$NEWER/apt/lists" -o "Dir::Cache=$NEWER/apt")
  apt-get "${APT[@]}" update >/dev/null
  version=$(apt-cache "${APT[@]}" show libns3-dev | sed -n 's/^Version: //p' | sort -V | tail -1)
  runtime=$(apt-cache "${APT[@]}" show "libns3-dev=$version" |
    sed -n 's/^Depends: \(libns3[.0-9]*\) .*/\1/p')
  if [[ -z $version || -z $runtime ]]; then
    echo "build-newer-ns3: no libns3-dev in Debian $SUITE" >&2
    exit 1
  fi
  log "libns3-dev $version, $runtime"
  (cd "$NEWER/debs" && apt-get "${APT[@]}" download "libns3-dev=$version" "$runtime=$version")
  for deb in "$NEWER"/debs/*.deb; do
    dpkg-deb -x "$deb" "$ROOT"
  done
fi
# The C and C++ runtime and GSL the ns-3 libraries were built against, for running them.
RT=$NEWER/runtime
RT_LIBS=$RT/usr/lib/x86_64-linux-gnu
if ((RUN)) && [[ ! -f $RT_LIBS/ld-linux-x86-64.so.2 || ! -f $RT_LIBS/libgsl.so.28 ]]; then
  log "fetching Debian $SUITE's C and C++ runtime and GSL to run the tests"
  mkdir -p "$NEWER/apt/lists/partial" "$NEWER/rtdebs"
  APT=(-o "Dir::Etc::SourceList=$NEWER/apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::State::Lists=$NEWER/apt/lists" -o "Dir::Cache=$NEWER/apt")
  (cd "$NEWER/rtdebs" && apt-get "${APT[@]}" download libc6 libgcc-s1 libstdc++6 libgsl28 \
    libgslcblas0)
  for deb in "$NEWER"/rtdebs/*.deb; do
    dpkg-deb -x "$deb" "$RT"
  done
fi

# 2. Make the package configuration usable from a private folder: the programs it names
#    (tap and raw-socket creators, in another package) get empty stand-ins, and an include
#    folder of a Python this system does not have is replaced by one it has.
TARGETS=$CONFIG_DIR/ns3Targets.cmake
# shellcheck disable=SC2016 # the literal text ${_IMPORT_PREFIX} of the CMake file
grep -ho '"${_IMPORT_PREFIX}[^"]*"' "$CONFIG_DIR"/ns3Targets-*.cmake | tr -d '"' |
  sed "s#\${_IMPORT_PREFIX}#$ROOT/usr#" | while read -r f; do
  if [[ ! -e $f ]]; then
    mkdir -p "$(dirname "$f")"
    touch "$f"
  fi
done
grep -o '/usr/include/python3\.[0-9]*' "$TARGETS" | sort -u | while read -r inc; do
  if [[ ! -d $inc ]]; then
    here=$(find /usr/include -maxdepth 1 -name 'python3.*' -type d | sort | head -1)
    if [[ -z $here ]]; then
      echo "build-newer-ns3: $TARGETS names $inc; install python3-dev" >&2
      exit 1
    fi
    sed -i "s#$inc#$here#g" "$TARGETS"
  fi
done

# 3. Configure and build, Debian 12's ns-3 headers hidden if a mount namespace can be made.
if ((FRESH)); then
  rm -rf "$BUILD"
fi
mkdir -p "$BUILD"
LINK="-Wl,--unresolved-symbols=ignore-in-shared-libs" # the libraries' own glibc symbols
cmake -S "$IB_REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -Dns3_DIR="$CONFIG_DIR" \
  -DCMAKE_CXX_STANDARD="$STD" -DIB_USE_PCH=OFF -DCMAKE_EXE_LINKER_FLAGS="$LINK" \
  -DCMAKE_SHARED_LINKER_FLAGS="$LINK" >"$BUILD/newer-ns3-cmake.log" 2>&1 || {
  cat "$BUILD/newer-ns3-cmake.log" >&2
  exit 1
}
grep "ns-3 " "$BUILD/newer-ns3-cmake.log" || true
# The test program cannot run here, so CMake's test discovery after linking fails: build
# every other target, then the test program's objects and its link without the discovery.
# (infiniband-test-runner, which only wraps the test program for ns-3's harness and whose
# objects wait for it, is not built here.)
programs=$(ninja -C "$BUILD" -t targets all |
  sed -n 's/^\([^:/\[]*\): CXX_EXECUTABLE_LINKER__.*/\1/p' |
  grep -v -e '^infiniband-gtest$' -e '^infiniband-test-runner$' || true)
targets="ns3-infiniband $programs"
hidden=0
build() {
  if unshare -m --propagation private true 2>/dev/null && [[ -d /usr/include/ns3 ]]; then
    mkdir -p "$NEWER/empty"
    unshare -m --propagation private bash -c \
      "mount --bind '$NEWER/empty' /usr/include/ns3 && ninja -C '$BUILD' -j$JOBS $*"
    hidden=1
  else
    ninja -C "$BUILD" -j"$JOBS" "$@"
  fi
}
log "building against $(grep -o 'ns-3 [0-9.]*' "$BUILD/newer-ns3-cmake.log" | head -1), C++$STD"
# shellcheck disable=SC2086
build $targets
for t in infiniband-gtest; do
  objs=$(ninja -C "$BUILD" -t query "$t" | sed -n '/input:/,/outputs:/p' |
    grep -o 'CMakeFiles/[^ ]*\.o' || true)
  # shellcheck disable=SC2086
  build $objs
  # The program's link line, as CMake wrote it, without the test discovery step.
  (cd "$BUILD" && ninja -t commands "$t" | tail -1 | sed 's/ && cd .*//' | bash)
done

# 4. Checks.
status=0
mixed=$(cd "$BUILD" && find . -name '*.o' | while read -r o; do
  if ninja -t deps "$o" | grep -q '^    /usr/include/ns3/'; then echo "$o"; fi
done)
if [[ -n $mixed ]]; then
  echo "build-newer-ns3: compiled with Debian 12's ns-3 headers (/usr/include/ns3):" >&2
  echo "$mixed" >&2
  status=1
fi
LIBS=$ROOT/usr/lib/x86_64-linux-gnu
defined=$(mktemp)
nm -D --defined-only "$LIBS"/libns3-*.so.* "$BUILD/libns3-infiniband.so" 2>/dev/null |
  awk '{print $NF}' | sort -u >"$defined"
binaries=("$BUILD/libns3-infiniband.so" "$BUILD/infiniband-gtest")
for t in $programs; do
  binaries+=("$BUILD/$t")
done
missing=$(for b in "${binaries[@]}"; do nm -D --undefined-only "$b"; done | awk '{print $NF}' |
  sort -u | comm -23 - "$defined" | c++filt | grep 'ns3::' || true)
rm -f "$defined"
if [[ -n $missing ]]; then
  echo "build-newer-ns3: ns-3 symbols used but not in the newer ns-3's libraries:" >&2
  echo "$missing" >&2
  status=1
fi
log "${#binaries[@]} binaries; Debian 12's ns-3 headers $( ((hidden)) && echo hidden ||
  echo 'visible (no mount namespace), checked')"

# 5. The test suite and the examples, with trixie's runtime.
tests="not run (--no-run)"
examples="not run (--no-run)"
if ((RUN && status == 0)); then
  if ! command -v patchelf >/dev/null; then
    log "installing patchelf (Debian package) to give the programs trixie's loader"
    apt-get install -y patchelf >/dev/null
  fi
  # One folder with copies of the ns-3 libraries and of this module's, and trixie's runtime
  # beside them: the ns-3 libraries look for their dependencies in their own folder
  # ($ORIGIN in their RUNPATH), so GSL 2.8 and the C library must be found there. The
  # programs get trixie's dynamic loader and that folder, then Debian 12's (Boost).
  RUN_DIR=$BUILD/run-newer
  LIB_DIR=$RUN_DIR/lib
  rm -rf "$LIB_DIR"
  mkdir -p "$LIB_DIR"
  cp "$LIBS"/libns3*.so.* "$BUILD/libns3-infiniband.so" "$LIB_DIR/"
  for f in "$RT_LIBS"/*.so*; do
    ln -sf "$f" "$LIB_DIR/"
  done
  patchelf --force-rpath --set-rpath "$LIB_DIR" "$LIB_DIR/libns3-infiniband.so"
  run_programs=(infiniband-gtest)
  for t in $programs; do
    case "$t" in
      ib-benchmark | ib-microbench) ;; # timing programs, minutes long: not a check
      *) run_programs+=("$t") ;;
    esac
  done
  for t in "${run_programs[@]}"; do
    cp "$BUILD/$t" "$RUN_DIR/"
    # DT_RPATH (--force-rpath), not RUNPATH: it also serves this module's library.
    patchelf --set-interpreter "$RT_LIBS/ld-linux-x86-64.so.2" --force-rpath \
      --set-rpath "$LIB_DIR:/usr/lib/x86_64-linux-gnu" "$RUN_DIR/$t"
  done
  log "running the test suite against ns-3 3.43"
  if (cd "$RUN_DIR" && ./infiniband-gtest --gtest_brief=1 >"$RUN_DIR/tests.log" 2>&1); then
    tests=$(grep -E '^\[  (PASSED|SKIPPED) +\] [0-9]+ test' "$RUN_DIR/tests.log" |
      sed 's/^\[ *\([A-Z]*\) *\] \([0-9]*\).*/\2 \1/' | tr '[:upper:]' '[:lower:]' |
      paste -sd ',' - | sed 's/,/, /')
  else
    tail -40 "$RUN_DIR/tests.log" >&2
    echo "build-newer-ns3: the test suite failed against ns-3 3.43 ($RUN_DIR/tests.log)" >&2
    tests="failed"
    status=1
  fi
  # Every example with its default arguments (ai-training-fabrics and ai-cluster: a short
  # run; their defaults take minutes in this unoptimized build).
  ran=0
  failed=()
  for t in "${run_programs[@]:1}"; do
    args=()
    if [[ $t == ai-training-fabrics ]]; then args=(--quick); fi
    if [[ $t == ai-cluster ]]; then args=(--layers=1 --hidden=1024 --seq=512); fi
    log "running $t ${args[*]}"
    if (cd "$RUN_DIR" && "./$t" "${args[@]}" >"$RUN_DIR/$t.log" 2>&1); then
      ran=$((ran + 1))
    else
      tail -20 "$RUN_DIR/$t.log" >&2
      failed+=("$t")
    fi
  done
  examples="$ran ran"
  if ((${#failed[@]} > 0)); then
    echo "build-newer-ns3: failed against ns-3 3.43: ${failed[*]} (logs in $RUN_DIR)" >&2
    examples="$ran ran, failed: ${failed[*]}"
    status=1
  fi
fi
if ((status == 0)); then
  log "PASS: compiled, linked, every ns-3 symbol found; tests: $tests; examples: $examples"
else
  log "FAIL"
fi
exit $status
