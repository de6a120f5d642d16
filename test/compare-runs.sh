#!/usr/bin/env bash
# Determinism and replications of the module's programs: run a program twice and compare
# what it prints on standard output, wall-clock lines left out.
#   compare-runs.sh same   PROGRAM ARGS...              two runs, identical output
#   compare-runs.sh differ PROGRAM ARGS... --vs ARGS...  the second arguments change it
set -u
mode=$1
prog=$2
shift 2
a=()
b=()
seen=0
for x in "$@"; do
  if [[ $x == --vs ]]; then
    seen=1
  elif [[ $seen -eq 0 ]]; then
    a+=("$x")
  else
    b+=("$x")
  fi
done
if [[ $mode == same ]]; then
  b=("${a[@]}")
fi
one=$(mktemp)
two=$(mktemp)
trap 'rm -f "$one" "$two"' EXIT
"$prog" "${a[@]}" 2>/dev/null | grep -vi "wall" >"$one" || { echo "first run failed"; exit 1; }
"$prog" "${b[@]}" 2>/dev/null | grep -vi "wall" >"$two" || { echo "second run failed"; exit 1; }
if [[ ! -s $one ]]; then
  echo "no output"
  exit 1
fi
if [[ $mode == same ]]; then
  if ! cmp -s "$one" "$two"; then
    echo "two runs with the same arguments differ:"
    diff "$one" "$two" | head -20
    exit 1
  fi
else
  if cmp -s "$one" "$two"; then
    echo "the output did not change with: ${b[*]}"
    exit 1
  fi
fi
exit 0
