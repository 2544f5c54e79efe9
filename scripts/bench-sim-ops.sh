#!/usr/bin/env bash
# Benchmark: host speed of the one-core simulator per op family, in tiles per
# second. Runs the hidden [.bench] case of unit-tests-simgolden: each op
# (datacopy, eltwise binary, SFPU unary, matmul, reduce, splice) is generated
# by lib/hlk, compiled by hlkc (cached), run on the simulated core
# (lib/sim OneCoreHarness) for a few hundred to a thousand tiles and checked
# against lib/golden; the time is the harness run alone, the median of REPS
# runs. Record the table in docs/performance.md ("One-core simulator: tiles
# per second").
#
#   scripts/bench-sim-ops.sh [REPS]       (BUILD_DIR=... to pick a build; default build/)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
reps="${1:-5}"
ninja -C "$build" -j"${JOBS:-$(nproc)}" unit-tests-simgolden >/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
SIMGOLDEN_BENCH_REPS="$reps" "$build/test/unit/unit-tests-simgolden" "[.bench]" | grep -v '^=\+$\|^All tests passed\|^Filters:'
