#!/usr/bin/env bash
# Run a program with bad input and check it is answered as the module promises: exit status
# 1, the expected message on standard error, no abort trace, within the time CTest allows.
#   expect-error.sh PROGRAM REGEX [ARGS...]
set -u
prog=$1
regex=$2
shift 2
out=$(mktemp)
"$prog" "$@" >"$out" 2>&1
rc=$?
status=0
if [[ $rc -ne 1 ]]; then
  echo "expected exit status 1, got $rc"
  status=1
fi
if ! grep -Eq -- "$regex" "$out"; then
  echo "expected a message matching: $regex"
  status=1
fi
if grep -Eq -- "terminate called|aborted\. cond=|Aborted|std::bad_alloc" "$out"; then
  echo "an abort trace instead of a message"
  status=1
fi
if [[ $status -ne 0 ]]; then
  echo "--- output of $prog $*"
  tail -20 "$out"
fi
rm -f "$out"
exit $status
