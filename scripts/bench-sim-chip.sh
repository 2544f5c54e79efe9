#!/usr/bin/env bash
# Benchmark: the simulated chip's speed on a netlist `loader run` already
# built (its --build-dir), once per -j value given: `loader deploy` (the
# reference model, then the chip), printing the machine and load, then per
# run the simulated cycles, the simulator's wall time and simulated cycles
# per second (loader --profile), the whole process's wall and user CPU time
# and peak RSS (/usr/bin/time). On a shared machine the user CPU time is the
# steadier figure. Record the figures in docs/performance.md.
#
#   scripts/bench-sim-chip.sh BUILD_DIR [JOBS...]     (default JOBS: 1 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
loader="${LOADER:-$build/tools/loader/loader}"
[ $# -ge 1 ] || { echo "usage: bench-sim-chip.sh BUILD_DIR [JOBS...]" >&2; exit 2; }
dir="$1"; shift
[ $# -gt 0 ] || set -- 1 2
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "loader:  $loader"
for j in "$@"; do
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (before -j $j)"
  if ! /usr/bin/time -o "$work/time" -f '%e %U %M' "$loader" deploy "$dir" -j "$j" --profile >"$work/out" 2>"$work/err"; then
    echo "bench-sim-chip: -j $j failed:" >&2; tail -5 "$work/err" >&2; tail -5 "$work/out" >&2; exit 1
  fi
  read -r wall user rss < <(tail -1 "$work/time")
  sim="$(sed -n 's/^profile (sim): \([0-9]* epochs,.*\)$/\1/p' "$work/out" | head -1)"
  printf '  -j %-3s %s; process %.1f s wall, %.1f s user, peak RSS %d MB\n' "$j" "$sim" "$wall" "$user" $((rss / 1024))
done
