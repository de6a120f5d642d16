#!/usr/bin/env bash
# Installs missing dependencies, configures <repo>/build (Ninja, once) and builds the
# module, its GoogleTest suite, examples and utils programs.
#
# Environment: BUILD_TYPE (default RelWithDebInfo; used at first configure only),
#              JOBS (default: number of cores),
#              CMAKE_CXX_STANDARD (17, 20 or 23; used at first configure only).
# To reconfigure from scratch: rm -rf build

set -euo pipefail

IB_UTILS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IB_REPO=$(cd "$IB_UTILS_DIR/.." && pwd)
IB_BUILD_DIR="$IB_REPO/build"

# shellcheck source=utils/install-deps.sh
source "$IB_UTILS_DIR/install-deps.sh"

if [[ ! -f "$IB_BUILD_DIR/CMakeCache.txt" || ! -f "$IB_BUILD_DIR/build.ninja" ]]; then
  cmake_args=(-S "$IB_REPO" -B "$IB_BUILD_DIR" -G Ninja
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}")
  if [[ -n "${CMAKE_CXX_STANDARD:-}" ]]; then
    cmake_args+=("-DCMAKE_CXX_STANDARD=${CMAKE_CXX_STANDARD}")
  fi
  echo "build: cmake ${cmake_args[*]}"
  cmake "${cmake_args[@]}"
fi

JOBS=${JOBS:-$(nproc)}
echo "build: cmake --build $IB_BUILD_DIR -j $JOBS"
cmake --build "$IB_BUILD_DIR" -j "$JOBS"
