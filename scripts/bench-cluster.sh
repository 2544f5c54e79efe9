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
# Record the figures in docs/performance.md ("Several chips").
#
#   scripts/bench-cluster.sh [RUNS]   (BUILD_DIR=... to pick a build; default build/)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
runs="${1:-3}"
ninja -C "$build" -j"${JOBS:-$(nproc)}" loader net2hlks hlkc net2pipe pipegen blobgen unit-tests-simchip >/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
rate() { sed -n 's/.*(\([0-9.e+]*\) cycles\/s).*/\1/p'; }
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
