#!/usr/bin/env bash
# Builds everything (utils/build.sh) and runs the GoogleTest suite through CTest.
# Exits with ctest's status.
#
# Environment: JOBS (parallel build jobs and parallel tests; build default: all cores,
#              tests default: 2), BUILD_TYPE, CMAKE_CXX_STANDARD (see utils/build.sh).
# Extra arguments are passed to ctest, e.g. `bash utils/test.sh -R Crc`.

set -euo pipefail

IB_UTILS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IB_REPO=$(cd "$IB_UTILS_DIR/.." && pwd)

bash "$IB_UTILS_DIR/build.sh"

echo "test: ctest --test-dir $IB_REPO/build --output-on-failure --no-tests=error -j ${JOBS:-2} $*"
status=0
ctest --test-dir "$IB_REPO/build" --output-on-failure --no-tests=error -j "${JOBS:-2}" "$@" || status=$?
exit "$status"
