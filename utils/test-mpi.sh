#!/usr/bin/env bash
# Distributed-simulation test: runs the fat-tree example ib-fat-tree-mpi
#   1. as one process without MPI (the reference),
#   2. on 1 MPI rank (DistributedSimulatorImpl),
#   3. on IB_MPI_NP ranks with DistributedSimulatorImpl (granted time windows),
#   4. on IB_MPI_NP ranks with NullMessageSimulatorImpl (--nullmsg=true),
# each writing its results (per-flow packets, bytes, first and last arrival; per-port
# packets, bytes, flow-control packets and credit stall time; per-switch forwarded
# packets) as sorted lines, one file per rank. The files of a run are concatenated and
# sorted; every run must give exactly the reference's lines. Prints the totals and the
# wall times, then PASS or FAIL.
#
#   bash utils/test-mpi.sh /path/to/ib-fat-tree-mpi-binary
#
# utils/build-mpi.sh builds the binary (ns-3 with --enable-mpi) and calls this script.
#
# Environment:
#   IB_MPI_NP         ranks of the distributed runs (default 2)
#   IB_MPI_WORKDIR    where result files and logs go (default: a new temporary folder)
#   IB_MPI_SCENARIOS  example arguments, one scenario per line (default: a 2-level tree
#                     split by leaf groups, a 3-level tree split by pods, a larger
#                     3-level tree for the wall times, and 150 ns cables into switches
#                     with no forwarding latency, where a cross-rank packet arrives one
#                     lookahead after it is sent: the null-message engine's promises
#                     must then be made from the current time; then the Ethernet/RoCE
#                     fabric (--fabric=roce, EthRemoteChannel) on a 2-level and a 3-level
#                     tree, and an incast into small switch buffers, where PFC frames
#                     and ECN-marked frames cross between ranks)

set -euo pipefail

example=${1:?usage: test-mpi.sh EXAMPLE_BINARY}
[[ -x "$example" ]] || {
  echo "test-mpi: $example is not an executable" >&2
  exit 2
}
np=${IB_MPI_NP:-2}
work=${IB_MPI_WORKDIR:-$(mktemp -d /tmp/ib-test-mpi.XXXXXX)}
mkdir -p "$work"
default_scenarios='--levels=2 --radix=8 --hosts=32 --packets=200 --partition=leaf
--levels=3 --radix=8 --hosts=64 --packets=100 --partition=pod --seed=3
--levels=3 --radix=16 --hosts=512 --packets=100 --partition=pod --seed=7
--levels=2 --radix=8 --hosts=32 --packets=100 --partition=leaf --delay=150 --ns3::IbSwitch::ForwardingLatency=0ns
--fabric=roce --levels=2 --radix=8 --hosts=32 --packets=100 --partition=leaf --ns3::EthSwitch::OrderSimultaneousArrivals=true
--fabric=roce --levels=3 --radix=8 --hosts=64 --packets=50 --partition=pod --seed=3 --ns3::EthSwitch::OrderSimultaneousArrivals=true
--fabric=roce --levels=2 --radix=8 --hosts=32 --packets=50 --partition=leaf --pattern=incast --ns3::EthSwitch::BufferSize=600000 --ns3::EthSwitch::OrderSimultaneousArrivals=true'
scenarios=${IB_MPI_SCENARIOS:-$default_scenarios}

command -v mpirun >/dev/null || {
  echo "test-mpi: mpirun not found (apt-get install openmpi-bin)" >&2
  exit 2
}
# Root in a container: OpenMPI refuses root without this, and more ranks than cores
# need --oversubscribe. Shared-memory single copy (CMA) needs ptrace rights that
# containers often lack: use the plain copy mechanism. A rank waiting for the others
# yields its core instead of spinning: on a machine with few cores, or busy with other
# work, a spinning rank slows down the rank it waits for (several times over, measured).
mpirun_cmd=(mpirun --allow-run-as-root --oversubscribe)
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# run NAME RANKS(0 = no MPI) ARGS... : runs the example, merges its result files into
# $work/NAME.all.txt; prints the wall time. Returns the example's status.
run() {
  local name=$1 ranks=$2
  shift 2
  rm -f "$work/$name".rank*.txt "$work/$name.all.txt"
  local cmd=("$example" "$@" "--results=$work/$name")
  if ((ranks > 0)); then
    cmd=("${mpirun_cmd[@]}" -np "$ranks" "${cmd[@]}")
  else
    cmd+=(--mpi=false)
  fi
  echo "${cmd[*]}" >"$work/$name.log"
  local t0 t1 status=0
  t0=$(now)
  # mpirun forwards its stdin to rank 0: keep it away from the list of scenarios.
  "${cmd[@]}" >>"$work/$name.log" 2>&1 </dev/null || status=$?
  t1=$(now)
  wall[$name]=$(elapsed "$t0" "$t1")
  # Largest per-rank Simulator::Run wall time.
  runwall[$name]=$(sed -n 's/.* run \([0-9.e+-]*\) s wall$/\1/p' "$work/$name.log" |
    sort -g | tail -n 1)
  files=("$work/$name".rank*.txt)
  nfiles[$name]=0
  [[ -e "${files[0]}" ]] && nfiles[$name]=${#files[@]}
  if ((nfiles[$name] > 0)); then
    LC_ALL=C sort "${files[@]}" >"$work/$name.all.txt"
  fi
  return "$status"
}

# totals FILE: one line of totals from merged result lines.
totals() {
  awk '
    $1 == "flow" && $5 == "completed" { roce = 1; flows++; pk += $6; if ($8 > last) last = $8; next }
    $1 == "flow" { flows++; pk += $6; by += $8; if ($12 > last) last = $12 }
    $1 == "rx" { rx += $6; by += $8 }
    $1 == "port" { tx += $5; fc += $9 }
    $1 == "switch" { fw += $4; if (roce) ecn += $6 }
    END {
      if (roce) {
        printf "%d flows, %d WRITEs completed, last at %.3f us; hosts received %d frames (%d bytes); ", flows, pk, last / 1e6, rx, by
        printf "ports sent %d frames, %d of them PFC; switches forwarded %d, marked %d\n", tx, fc, fw, ecn
      } else {
        printf "%d flows, %d data packets (%d wire bytes) received, last at %.3f us; ", flows, pk, by, last / 1e6
        printf "ports sent %d data and %d flow-control packets; switches forwarded %d\n", tx, fc, fw
      }
    }' "$1"
}

declare -A wall runwall nfiles
failures=0
fail() {
  echo "test-mpi: FAIL: $*"
  failures=$((failures + 1))
}

scenario_no=0
while IFS= read -r line; do
  [[ -n "${line// /}" ]] || continue
  scenario_no=$((scenario_no + 1))
  read -r -a args <<<"$line"
  s="s$scenario_no"
  echo
  echo "=== scenario $scenario_no: ${args[*]}"

  if ! run "$s-seq" 0 "${args[@]}"; then
    fail "scenario $scenario_no: the one-process run failed (see $work/$s-seq.log)"
    tail -n 20 "$work/$s-seq.log"
    continue
  fi
  ref="$work/$s-seq.all.txt"
  if [[ ! -s "$ref" ]] || ! grep -q '^flow ' "$ref"; then
    fail "scenario $scenario_no: the one-process run wrote no results"
    continue
  fi
  incomplete=$(grep '^flow ' "$ref" | awk -v n="$(sed -n 's/.*flows of \([0-9]*\) x.*/\1/p' "$work/$s-seq.log")" '$6 != n' | wc -l)
  ((incomplete == 0)) || fail "scenario $scenario_no: $incomplete flows did not complete (raise --stop)"
  sed -n '/^partition:/,/^build:/p' "$work/$s-seq.log" | grep -v '^build:' | sed 's/^/  /'
  echo "  one process:      $(totals "$ref")"

  for variant in "np1:1:" "np$np:$np:" "np$np-nullmsg:$np:--nullmsg=true"; do
    IFS=: read -r vname vranks vflag <<<"$variant"
    name="$s-$vname"
    vargs=("${args[@]}")
    [[ -n "$vflag" ]] && vargs+=("$vflag")
    if ! run "$name" "$vranks" "${vargs[@]}"; then
      fail "scenario $scenario_no, $vname: the run failed (see $work/$name.log)"
      tail -n 20 "$work/$name.log"
      continue
    fi
    if ((nfiles[$name] != vranks)); then
      fail "scenario $scenario_no, $vname: ${nfiles[$name]} result files for $vranks ranks"
      continue
    fi
    if ((vranks > 1)) && grep -q '^partition: .* 0 of .* cables cut' "$work/$name.log"; then
      fail "scenario $scenario_no, $vname: no cable crosses ranks (nothing distributed)"
    fi
    if diff -u "$ref" "$work/$name.all.txt" >"$work/$name.diff"; then
      echo "  $(printf '%-17s' "$vname:") identical to the one-process run ($(wc -l <"$ref") lines)"
    else
      fail "scenario $scenario_no, $vname: results differ from the one-process run ($(grep -c '^[-+][^-+]' "$work/$name.diff") lines, $work/$name.diff):"
      head -n 20 "$work/$name.diff"
    fi
  done

  echo "  wall times (s): whole run / Simulator::Run (slowest rank)"
  for v in seq np1 "np$np" "np$np-nullmsg"; do
    name="$s-$v"
    [[ -n "${wall[$name]:-}" ]] || continue
    printf '    %-14s %8s / %s\n' "$v" "${wall[$name]}" "${runwall[$name]:-?}"
  done
done <<<"$scenarios"

echo
echo "test-mpi: results and logs in $work"
if ((failures == 0 && scenario_no > 0)); then
  echo "test-mpi: PASS ($scenario_no scenarios, 1 process = 1 rank = $np ranks with both engines)"
  exit 0
fi
echo "test-mpi: FAIL ($failures failures)"
exit 1
