#!/usr/bin/env bash
# Installs the module from a configured build folder to a temporary prefix, then configures,
# builds and runs a user's project (utils/user-project, with scratch/first-simulation.cc as
# its program) against the installed package with find_package. Prints "test-install: OK"
# when the program ran and printed its bandwidth line. CTest runs it
# (Install.UserProjectBuildsAndRuns).
#
#   bash utils/test-install.sh [BUILD_DIR]     (default: <repo>/build)

set -euo pipefail

IB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$IB_REPO/build}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ib-test-install.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "test-install: cmake --install $BUILD --prefix $WORK/prefix"
cmake --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.log"
test -f "$WORK/prefix/include/ns3/infiniband-module.h"
echo "test-install: $(find "$WORK/prefix/include/ns3" -name '*.h' | wc -l) headers installed"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$IB_REPO/utils/user-project" -B "$WORK/project" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_PREFIX_PATH="$WORK/prefix" -DIB_USER_SOURCE="$IB_REPO/scratch/first-simulation.cc" \
  >"$WORK/configure.log" || { cat "$WORK/configure.log"; exit 1; }
cmake --build "$WORK/project" >"$WORK/build.log" || { cat "$WORK/build.log"; exit 1; }
out=$(LD_LIBRARY_PATH="$WORK/prefix/lib:$WORK/prefix/lib/$(gcc -print-multiarch 2>/dev/null || true)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$WORK/project/first-simulation")
echo "$out"
grep -Eq '^65536 B: [0-9.]+ Gb/s$' <<<"$out"
echo "test-install: OK"
