#!/usr/bin/env bash
# Installs (as root, on Debian 12) the packages this module needs to build, test and run
# its demo. Idempotent: only missing packages are installed, and `apt-get update` runs
# at most once per invocation, only when something is missing.
#
#   bash utils/install-deps.sh          # run directly
#   source utils/install-deps.sh        # from another script (utils/build.sh does this)
#
# Extra packages can be requested with IB_EXTRA_DEPS="pkg1 pkg2" (used by
# utils/build-in-tree.sh, e.g. for dpkg-dev or MPI).
# Not root and something missing: prints the apt command to run and exits 1.

set -euo pipefail

ib_install_deps() {
  local pkgs=(
    build-essential cmake ninja-build ccache pkg-config
    libns3-dev ns3 libgsl-dev libsqlite3-dev libxml2-dev
    libboost-dev libboost-graph-dev libgtest-dev libbenchmark-dev
    tshark gnuplot-nox python3 python3-dev
    clang libclang-rt-14-dev
  )
  # shellcheck disable=SC2206  # word splitting of the extra list is intended
  pkgs+=(${IB_EXTRA_DEPS:-})

  local missing=() p status
  for p in "${pkgs[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    if [[ "$status" != ii* ]]; then
      missing+=("$p")
    fi
  done

  if ((${#missing[@]} == 0)); then
    echo "install-deps: all ${#pkgs[@]} required packages are installed"
    return 0
  fi

  echo "install-deps: missing packages: ${missing[*]}"
  local needs_tshark=0
  for p in "${missing[@]}"; do
    [[ "$p" == tshark ]] && needs_tshark=1
  done

  if [[ "$(id -u)" -ne 0 ]]; then
    echo "install-deps: not root; run this as root, then retry:" >&2
    if ((needs_tshark)); then
      echo "  echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections" >&2
    fi
    echo "  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi

  if ((needs_tshark)); then
    # Answer wireshark-common's "allow non-superusers to capture?" question up front so
    # that the install never waits for input.
    echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
  fi
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" </dev/null
  echo "install-deps: installed ${missing[*]}"
}

ib_install_deps
