#!/usr/bin/env bash
# Sourced by the scripts that fetch Debian packages or sources outside apt's own lists
# (utils/build-in-tree.sh, utils/build-newer-ns3.sh). Defines ib_debian_mirror, which prints
# the Debian archive this machine's apt is configured with (its sources.list entries, one-line
# or deb822 format), so that a user behind a local mirror stays on it. No host is named here.

# Prints the URI of the first enabled Debian archive entry whose suite is this machine's
# release (VERSION_CODENAME), without a trailing slash; prints nothing and returns 1 if apt's
# sources have none.
ib_debian_mirror() {
  local codename uri
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [[ -n $codename ]] || return 1
  # One-line format: deb [options] URI suite component...
  uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v c="$codename" '
    $1 == "deb" || $1 == "deb-src" {
      i = 2
      if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      if ($(i + 1) == c) { print $i; exit }
    }')
  if [[ -z $uri ]]; then
    # deb822 format (*.sources): stanzas separated by blank lines.
    uri=$(awk -v c="$codename" '
      function flush() { if (suite && !off && u != "") { print u; done = 1 } u = ""; suite = 0; off = 0 }
      done { next }
      /^[[:space:]]*$/ { flush(); next }
      /^URIs:/ { u = $2 }
      /^Enabled:[[:space:]]*no/ { off = 1 }
      /^Suites:/ { for (j = 2; j <= NF; j++) if ($j == c) suite = 1 }
      END { if (!done) flush() }' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
  fi
  [[ -n $uri ]] || return 1
  echo "${uri%/}"
}
