#!/usr/bin/env bash
# Builds everything (utils/build.sh) and runs the main demo program. Extra arguments are
# appended to the program's command line, e.g. `bash utils/demo.sh --duration=0.01`.
# Output files (pcap, traces) are written to <repo>/build/demo/.

set -euo pipefail

# Demo program (in <repo>/build) and its default arguments: change here to switch demos.
IB_DEMO=(ib-link --pcap=true)

IB_UTILS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IB_REPO=$(cd "$IB_UTILS_DIR/.." && pwd)

bash "$IB_UTILS_DIR/build.sh"

prog="$IB_REPO/build/${IB_DEMO[0]}"
if [[ ! -x "$prog" ]]; then
  echo "demo: $prog was not built (is examples/${IB_DEMO[0]}.cc there?)" >&2
  exit 1
fi

out_dir="$IB_REPO/build/demo"
mkdir -p "$out_dir"
stamp="$out_dir/.started"
touch "$stamp"

echo "demo: running (in $out_dir): ${IB_DEMO[*]} $*"
cd "$out_dir"
"$prog" "${IB_DEMO[@]:1}" "$@"

mapfile -t pcaps < <(find "$out_dir" -name '*.pcap' -newer "$stamp" | sort)
if ((${#pcaps[@]} > 0)); then
  echo "demo: pcap files written:"
  printf '  %s\n' "${pcaps[@]}"
  echo "demo: decode with: tshark -V -r ${pcaps[0]}   (or open it in Wireshark)"
else
  echo "demo: no pcap file was written in $out_dir"
fi
