#!/usr/bin/env bash
# Benchmark: the golden matmul's per-tile product (HiFi3: two fidelity terms,
# Float16_b dest rounded after every 32-deep tile), bert-base shapes. Runs the
# hidden [.bench] case of unit-tests-golden: the Eigen path (one GEMM call per
# 64-row panel, term and tile, then rounding), the per-tile kernel
# (gemmTilesRounded, in the device order, B packed per call), the same kernel
# over B packed once (gemmTilesPacked: what a matmul whose entries share a
# weight does per entry) and, for scale, one plain Eigen GEMM without per-tile
# rounding. Times are thread CPU time (the machine is shared). When Debian's OpenBLAS is installed (libopenblas-dev), the same
# per-tile calls through cblas_sgemm (speed only: its summation order is not
# the reference's, and it does not round). Best of 5 runs per line.
#
#   scripts/bench-gemm.sh          (BUILD_DIR=... to pick a build; default build/)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
ninja -C "$build" -j"${JOBS:-$(nproc)}" unit-tests-golden >/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/test/unit/unit-tests-golden" "[.bench]" | grep -v '^=\+$\|^All tests passed\|^Filters:\|^assertions\|^$' || true
openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread
if [ -f "$openblas/libopenblas.so" ]; then
  bin="$(mktemp)"; trap 'rm -f "$bin"' EXIT
  g++ -O2 -std=c++17 -o "$bin" "$root/scripts/bench-inputs/gemm-openblas.cpp" -I/usr/include/x86_64-linux-gnu/openblas-pthread \
    -L"$openblas" -Wl,-rpath,"$openblas" -lopenblas
  "$bin"
else
  echo "(OpenBLAS not installed: apt-get install libopenblas-dev for its line)"
fi
