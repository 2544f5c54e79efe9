#!/usr/bin/env bash
# Benchmark: host speed of the simulated cluster (lib/sim/cluster) against one
# chip doing the same work, in simulated cycles per second.
#
#  1. Netlists: scripts/bench-inputs/cluster-2chip.yaml (an add on chip 0 read
#     op to op by a matmul on chip 1 of the default wormhole_b0 pair, 128
#     inputs) and cluster-1chip.yaml (the same ops on one chip). Each is built
#     and checked once (`loader run`), then run RUNS times with
#     `loader deploy --profile` at -j 1 and -j 2; the line printed is the
#     loader's `profile (sim)` figure (cycles over the time inside the
#     simulator). Target: the 2-chip rate at least 80% of the 1-chip rate.
#  2. Streams only: the hidden [.bench] case of unit-tests-simchip (64 cores
#     copying between DRAM rams on one chip, against 32 + 32 on two chips
#     coupled over a link) at -j 1 and -j 2: the cluster's synchronisation
#     cost when the chips have little else to do.
#
#  3. --mpi: threads against MPI ranks (loader --mpi, docs/loader.md "MPI").
#     Each NETLIST (default: the lit test's pair, test/lit/loader-sim/Inputs/
#     mc-mpi-2chip.yaml) is built and checked once, then run RUNS times with
#     `loader deploy --profile` at -j 1, at -j 2 and as `mpirun -np 2 ...
#     --mpi -j 1` (one chip per rank for a pair): the wall time of the whole
#     command (MPI start-up included) and the profile's simulated cycles per
#     second. The perf reports of the three must be the same bytes.
#
# Record the figures in docs/performance.md ("Several chips").
#
#   scripts/bench-cluster.sh [RUNS]                  (BUILD_DIR=... to pick a build; default build/)
#   scripts/bench-cluster.sh --mpi [RUNS] [NETLIST...]   (SKIP_BUILD=1: no ninja)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
mpi=0
if [[ "${1:-}" == "--mpi" ]]; then mpi=1; shift; fi
runs="${1:-3}"
[[ $# -gt 0 ]] && shift
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  targets=(loader net2hlks hlkc net2pipe pipegen blobgen)
  [[ $mpi == 1 ]] || targets+=(unit-tests-simchip)
  ninja -C "$build" -j"${JOBS:-$(nproc)}" "${targets[@]}" >/dev/null
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
rate() { sed -n 's/.*(\([0-9.e+]*\) cycles\/s).*/\1/p'; }
if [[ $mpi == 1 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
  loader="$build/tools/loader/loader"
  [[ $# -gt 0 ]] || set -- "$root/test/lit/loader-sim/Inputs/mc-mpi-2chip.yaml"
  for netlist in "$@"; do
    name="$(basename "$netlist" .yaml)"
    "$loader" run "$netlist" --build-dir "$work/$name" --tools-dir "$build" --hlkc-cache-dir "$work/cache" \
      >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 1; }
    tail -1 "$work/$name.log" | grep -q PASS || { cat "$work/$name.log"; exit 1; }
    echo "$name:"
    for mode in "-j 1" "-j 2" "mpirun -np 2"; do
      for k in $(seq "$runs"); do
        if [[ "$mode" == mpirun* ]]; then
          cmd=(mpirun --oversubscribe --bind-to none -np 2 "$loader" deploy "$work/$name" -j 1 --mpi)
        else
          cmd=("$loader" deploy "$work/$name" $mode)
        fi
        start=$(date +%s.%N)
        line="$("${cmd[@]}" --profile --perf-report "$work/perf-$k.json" | grep '^profile (sim): [0-9]* epoch')"
        end=$(date +%s.%N)
        [[ -f "$work/perf-ref.json" ]] || cp "$work/perf-$k.json" "$work/perf-ref.json"
        cmp -s "$work/perf-ref.json" "$work/perf-$k.json" || { echo "perf report of '$mode' differs"; exit 1; }
        cycles="$(echo "$line" | sed -n 's/.* epochs, \([0-9]*\) cycles.*/\1/p')"
        python3 -c "print('  %-13s %s cycles, wall %6.2f s, simulator %s cycles/s' % ('$mode', '$cycles', $end - $start, '$(echo "$line" | rate)'))"
      done
    done
    rm -f "$work/perf-ref.json"
  done
  exit 0
fi
declare -A best
for n in 1chip 2chip; do
  cp "$root/scripts/bench-inputs/cluster-$n.yaml" "$work/"
  "$build/tools/loader/loader" run "$work/cluster-$n.yaml" --build-dir "$work/$n" --tools-dir "$build" \
    --hlkc-cache-dir "$work/cache" >"$work/$n.log" 2>&1 || { cat "$work/$n.log"; exit 1; }
  tail -1 "$work/$n.log" | grep -q PASS || { cat "$work/$n.log"; exit 1; }
  for j in 1 2; do
    for _ in $(seq "$runs"); do
      line="$("$build/tools/loader/loader" deploy "$work/$n" -j "$j" --profile | grep '^profile (sim): [0-9]* epoch')"
      echo "$n -j $j: $line"
      r="$(echo "$line" | rate)"
      key="$n-$j"
      if [[ -z "${best[$key]:-}" ]] || python3 -c "import sys; sys.exit(0 if $r > ${best[$key]} else 1)"; then best[$key]="$r"; fi
    done
  done
done
for j in 1 2; do
  python3 -c "print('-j $j: best 2-chip rate %.3g cycles/s = %.1f%% of the best 1-chip rate %.3g' % (${best[2chip-$j]}, 100 * ${best[2chip-$j]} / ${best[1chip-$j]}, ${best[1chip-$j]}))"
done
for j in 1 2; do
  CLUSTER_BENCH_TILES="${TILES:-1024}" CLUSTER_BENCH_JOBS="$j" "$build/test/unit/unit-tests-simchip" "cluster benchmark*" |
    grep '^cluster-bench:'
done
