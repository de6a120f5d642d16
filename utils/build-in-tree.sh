#!/usr/bin/env bash
# Builds this module in-tree, as contrib/infiniband of an ns-3 source tree (Debian 12's
# ns-3 3.37 source by default, or one you give), then runs there the module's GoogleTest
# binary, ns-3's test.py on the module's suite and its examples-to-run list, and one example.
#
#   bash utils/build-in-tree.sh [--ns3=PATH] [--mpi] [--all-tests] [--fresh] [--fetch-only]
#
#   --ns3=PATH    an ns-3 source tree to use: a folder (ns-3.48/, say) or a release tarball
#                 (ns-3.48.tar.bz2, ns-3.48-trimmed.tar.gz), unpacked once under
#                 $NS3_SRC_DIR; default: Debian's ns-3 3.37 source (apt-get source ns3)
#   --mpi         configure ns-3 with --enable-mpi (installs libopenmpi-dev if missing)
#   --all-tests   build the examples and tests of every enabled ns-3 module, not only
#                 this module's (slower)
#   --fresh       delete ns-3's build and cmake-cache folders first
#   --fetch-only  stop once the ns-3 tree is fetched and the module copied into it
#
# Environment:
#   NS3_SRC_DIR   where Debian's ns-3 source is fetched (default /work/ns3-src); reused if
#                 it is already there (`apt-get source ns3` runs only once)
#   JOBS          parallel build jobs (default 2)
#   IB_EXAMPLE    example to run, with arguments (default "ib-link --pcap=true")
#   IB_TESTPY     0: skip test.py (default 1)
#
# Fetching the source needs root once: it adds a deb-src line for Debian's main archive
# (/etc/apt/sources.list.d/debian-src.list) if none is configured, and runs apt-get update.

set -euo pipefail

IB_UTILS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IB_REPO=$(cd "$IB_UTILS_DIR/.." && pwd)

NS3_SRC_DIR=${NS3_SRC_DIR:-/work/ns3-src}
JOBS=${JOBS:-2}
IB_EXAMPLE=${IB_EXAMPLE:-ib-link --pcap=true}
# csma: ns-3 3.37's own src/test (test-runner, built with --enable-tests) compiles
# ns3tcp-socket-test-suite.cc, which uses CsmaHelper, whenever applications and
# point-to-point are enabled, without enabling csma: test-runner then fails to link.
NS3_MODULES='infiniband;core;network;internet;internet-apps;point-to-point;applications;flow-monitor;csma'

opt_mpi=0 opt_all_tests=0 opt_fresh=0 opt_fetch_only=0 opt_ns3=
for arg in "$@"; do
  case "$arg" in
    --ns3=*) opt_ns3=${arg#--ns3=} ;;
    --mpi) opt_mpi=1 ;;
    --all-tests) opt_all_tests=1 ;;
    --fresh) opt_fresh=1 ;;
    --fetch-only) opt_fetch_only=1 ;;
    -h | --help)
      sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "build-in-tree: unknown option $arg (try --help)" >&2
      exit 2
      ;;
  esac
done

t_start=$(date +%s)
step() { echo; echo "=== build-in-tree [$(($(date +%s) - t_start))s]: $*"; }

# ------------------------------------------------------------------ dependencies
step "checking packages"
IB_EXTRA_DEPS="dpkg-dev ${IB_EXTRA_DEPS:-}"
if ((opt_mpi)); then
  IB_EXTRA_DEPS+=" libopenmpi-dev openmpi-bin"
  NS3_MODULES+=';mpi'
fi
export IB_EXTRA_DEPS
# shellcheck source=utils/install-deps.sh
source "$IB_UTILS_DIR/install-deps.sh"
# shellcheck source=utils/apt-mirror.sh
source "$IB_UTILS_DIR/apt-mirror.sh"

# ------------------------------------------------------------------ ns-3 source
find_ns3_tree() {
  local d
  for d in "$NS3_SRC_DIR"/ns3-3.37*/ns-3.37; do
    if [[ -x "$d/ns3" && -f "$d/CMakeLists.txt" ]]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

have_deb_src() {
  grep -qsE '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list ||
    grep -qsE '^[[:space:]]*Types:.*[[:space:]]deb-src([[:space:]]|$)' /etc/apt/sources.list.d/*.sources
}

# A tree the user gave: a folder, or a tarball unpacked once under $NS3_SRC_DIR.
user_ns3_tree() {
  local path=$1 name dir
  if [[ -d $path ]]; then
    (cd "$path" && pwd)
    return 0
  fi
  if [[ ! -f $path ]]; then
    echo "build-in-tree: --ns3=$path: no such folder or file; give an ns-3 source folder or" \
      "release tarball" >&2
    return 1
  fi
  name=$(basename "$path")
  name=${name%.tar.*}
  name=${name%.tgz}
  dir="$NS3_SRC_DIR/$name"
  if [[ ! -d $dir ]]; then
    mkdir -p "$dir"
    tar -C "$dir" -xf "$path"
  fi
  local top
  for top in "$dir" "$dir"/*/; do
    if [[ -x "$top/ns3" && -f "$top/CMakeLists.txt" ]]; then
      (cd "$top" && pwd)
      return 0
    fi
  done
  echo "build-in-tree: --ns3=$path: no ns-3 source tree (a folder with ./ns3 and" \
    "CMakeLists.txt) inside it" >&2
  return 1
}

if [[ -n $opt_ns3 ]]; then
  NS3_TREE=$(user_ns3_tree "$opt_ns3")
  step "using ns-3 source tree $NS3_TREE"
elif ! NS3_TREE=$(find_ns3_tree); then
  step "fetching Debian's ns-3 3.37 source into $NS3_SRC_DIR"
  if [[ "$(id -u)" -ne 0 ]] && ! have_deb_src; then
    echo "build-in-tree: no deb-src entry in apt's sources; run this script as root (it adds" >&2
    echo "  one for the Debian archive apt already uses), or add a deb-src line yourself" >&2
    exit 1
  fi
  if ! have_deb_src; then
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    if ! mirror=$(ib_debian_mirror); then
      echo "build-in-tree: apt's sources name no Debian archive for $codename to take the" >&2
      echo "  ns-3 source from; add a deb-src line for your mirror and run this again" >&2
      exit 1
    fi
    echo "deb-src $mirror $codename main" >/etc/apt/sources.list.d/debian-src.list
    echo "build-in-tree: added /etc/apt/sources.list.d/debian-src.list"
    apt-get update
  elif ! apt-cache showsrc ns3 2>/dev/null | grep -q '^Package: ns3$'; then
    apt-get update
  fi
  mkdir -p "$NS3_SRC_DIR"
  # Debian 12 has 3.37; pick its source version explicitly so a newer Debian release
  # configured here does not silently change it.
  src_version=$(apt-cache showsrc ns3 | sed -n 's/^Version: \(3\.37-.*\)$/\1/p' | head -n 1)
  if [[ -z "$src_version" ]]; then
    echo "build-in-tree: apt knows no ns3 3.37 source package" >&2
    exit 1
  fi
  # apt-get source unpacks and applies Debian's patches (dpkg-source -x).
  (cd "$NS3_SRC_DIR" && apt-get source "ns3=$src_version" </dev/null)
  NS3_TREE=$(find_ns3_tree) || {
    echo "build-in-tree: no ns-3.37 tree found under $NS3_SRC_DIR after apt-get source" >&2
    exit 1
  }
else
  step "reusing ns-3 source tree $NS3_TREE"
fi

# ------------------------------------------------------------------ copy the module
DEST="$NS3_TREE/contrib/infiniband"
step "copying $IB_REPO to $DEST"
list_files() {
  if git -C "$IB_REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # Tracked and untracked-but-not-ignored files (.gitignore excludes build/).
    git -C "$IB_REPO" ls-files -z --cached --others --exclude-standard
  else
    (cd "$IB_REPO" && find . -path ./build -prune -o -path './build-*' -prune -o \
      -path ./.git -prune -o -type f -print0)
  fi
}
rm -rf "$DEST"
mkdir -p "$DEST"
# tar keeps modification times, so unchanged files are not recompiled.
list_files | (cd "$IB_REPO" && while IFS= read -r -d '' f; do
  [[ -f "$f" ]] && printf '%s\0' "$f"
done) | tar -C "$IB_REPO" --null -T - -cf - | tar -C "$DEST" -xf -
echo "build-in-tree: copied $(find "$DEST" -type f | wc -l) files"

if ((opt_fetch_only)); then
  step "done (--fetch-only): ns-3 tree at $NS3_TREE"
  exit 0
fi

# ------------------------------------------------------------------ configure & build
cd "$NS3_TREE"
if ((opt_fresh)); then
  step "removing $NS3_TREE/build and cmake-cache (--fresh)"
  rm -rf build cmake-cache
fi

# ns-3 writes a stub build/include/ns3/<name>.h per module header at configure time and
# never rewrites an existing one: drop this module's stubs so renamed or moved headers
# get fresh ones.
if [[ -d build/include/ns3 ]]; then
  grep -lZ 'contrib/infiniband/' build/include/ns3/*.h 2>/dev/null | xargs -0 -r rm -f
fi

configure_args=(configure -G Ninja -d default --enable-examples --enable-tests --disable-werror
  "--enable-modules=$NS3_MODULES")
if ((!opt_all_tests)); then
  configure_args+=("--filter-module-examples-and-tests=infiniband")
fi
if ((opt_mpi)); then
  configure_args+=(--enable-mpi)
fi
step "./ns3 ${configure_args[*]}"
./ns3 "${configure_args[@]}" | tee "$NS3_TREE/configure.log"

if ! grep -A 40 'Modules configured to be built' "$NS3_TREE/configure.log" | grep -qw infiniband; then
  echo "build-in-tree: ns-3 did not list 'infiniband' among the modules to build" >&2
  exit 1
fi
echo "build-in-tree: ns-3 recognised contrib/infiniband as module 'infiniband'"

# `./ns3 build -j N` of ns-3 3.37 caps N at (cores - 1), i.e. 1 on a 2-core machine, so
# the build runs `cmake --build cmake-cache` directly, which is what ./ns3 build runs.
# ns-3's own libraries first: that they build is independent of this module's state.
ns3_libs=()
IFS=';' read -r -a mods <<<"$NS3_MODULES"
# ns-3 3.37 names its library targets libcore, ...; 3.43 and later core, ...
lib_prefix=lib
if ! ninja -C cmake-cache -t targets all 2>/dev/null | grep -q '^libcore:'; then
  lib_prefix=
fi
for m in "${mods[@]}"; do
  [[ "$m" == infiniband ]] || ns3_libs+=("$lib_prefix$m")
done
step "building ns-3's libraries: cmake --build cmake-cache -j $JOBS --target ${ns3_libs[*]}"
cmake --build cmake-cache -j "$JOBS" --target "${ns3_libs[@]}"
echo "build-in-tree: ns-3's libraries built"

# `-k 0` (ninja): keep going past a failing file, to report every compile error at once.
step "building everything (module, its GoogleTest binary, examples): cmake --build cmake-cache -j $JOBS -- -k 0"
cmake --build cmake-cache -j "$JOBS" -- -k 0

# ------------------------------------------------------------------ run tests & example
run_dir="$NS3_TREE/build/infiniband-run"
mkdir -p "$run_dir"
export LD_LIBRARY_PATH="$NS3_TREE/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

status=0
gtest="$NS3_TREE/build/infiniband-gtest"
if [[ -x "$gtest" ]]; then
  step "running $gtest (in $run_dir)"
  (cd "$run_dir" && "$gtest") || status=$?
  echo "build-in-tree: infiniband-gtest exit status $status"
else
  echo "build-in-tree: $gtest was not built (no test/*-test.cc?)" >&2
  status=1
fi

if [[ ${IB_TESTPY:-1} != 0 ]]; then
  # ns-3's own harness: the module's TestSuite (which runs the GoogleTest suites, one test
  # case per test file) and every example of test/examples-to-run.py.
  step "./test.py --no-build --suite=infiniband"
  py_status=0
  python3 ./test.py --no-build --suite=infiniband || py_status=$?
  echo "build-in-tree: test.py --suite=infiniband exit status $py_status"
  ((py_status == 0)) || status=$py_status
  step "./test.py --no-build --constrain=example (test/examples-to-run.py)"
  py_status=0
  python3 ./test.py --no-build --constrain=example || py_status=$?
  echo "build-in-tree: test.py --constrain=example exit status $py_status"
  ((py_status == 0)) || status=$py_status
fi

example_name=${IB_EXAMPLE%% *}
if [[ -f "$DEST/examples/$example_name.cc" ]]; then
  step "./ns3 run --no-build '$IB_EXAMPLE' (in $run_dir)"
  stamp="$run_dir/.started"
  touch "$stamp"
  ex_status=0
  ./ns3 run --no-build --cwd "$run_dir" "$IB_EXAMPLE" || ex_status=$?
  echo "build-in-tree: example exit status $ex_status"
  find "$run_dir" -name '*.pcap' -newer "$stamp" -print | sed 's/^/  pcap: /'
  ((ex_status == 0)) || status=$ex_status
else
  echo "build-in-tree: examples/$example_name.cc does not exist; example not run" >&2
  status=1
fi

step "done (status $status): ns-3 tree at $NS3_TREE"
exit "$status"
