#!/usr/bin/env bash
# Benchmark: host speed of the chip's stream engine (lib/sim/stream_engine),
# in tile transfers per second. Runs the hidden [.bench] case of
# unit-tests-simchip: 64 grayskull cores, no kernels; each core's stream 0
# reads TILES tiles from its DRAM queue buffer (channels round-robin) and
# sends them over NOC 0 to the next core, whose stream 1 writes them to
# another DRAM queue buffer. Counts every DRAM read, NOC delivery and DRAM
# write; the time is Chip::runEpoch alone (not the setup or the check of the
# output). Prints RUNS lines. Record them in docs/performance.md
# ("Chip: streams, NOC and DRAM").
#
#   scripts/bench-sim-streams.sh [TILES] [RUNS]   (BUILD_DIR=... to pick a build; default build/)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
tiles="${1:-2048}"
runs="${2:-3}"
ninja -C "$build" -j"${JOBS:-$(nproc)}" unit-tests-simchip >/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$runs"); do
  SIMCHIP_BENCH_TILES="$tiles" "$build/test/unit/unit-tests-simchip" "[.bench]" | grep '^sim streams:'
done
