#!/usr/bin/env bash
# Benchmark: `loader run` from netlist to PASS, per netlist given (default:
# the bundled softmax example). Three runs each:
#   cold    empty build directory and empty hlkc cache: every stage runs,
#           every kernel compiles;
#   rebuilt a new build directory with the same hlkc cache: every stage runs
#           again and hlkc should find every object in its cache (hit rate);
#   warm    the same build directory again: nothing is stale, the run is
#           the reference model plus the simulated chip.
# Prints the machine and load, then per run the wall time, peak RSS
# (/usr/bin/time), the hlkc summary, the simulated chip's cycles and
# cycles per second and its binaries cache counters (loader --profile).
# Record the figures in docs/performance.md.
#
#   scripts/bench-run.sh [NETLIST...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
loader="$build/tools/loader/loader"
[ -x "$loader" ] || { echo "bench-run: build the tools first (scripts/build.sh)" >&2; exit 2; }
[ $# -gt 0 ] || set -- "$root/examples/softmax/netlist.yaml"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (before)"
for netlist in "$@"; do
  echo "netlist: $netlist ($(stat -c %s "$netlist") bytes)"
  rm -rf "$work/b1" "$work/b2" "$work/cache"
  for run in cold:b1 rebuilt:b2 warm:b2; do
    name="${run%%:*}" dir="$work/${run#*:}"
    if ! /usr/bin/time -o "$work/time" -f '%e %M' "$loader" run "$netlist" --profile --build-dir "$dir" \
         --tools-dir "$build" --hlkc-cache-dir "$work/cache" >"$work/out" 2>"$work/err"; then
      echo "bench-run: $netlist failed ($name run):" >&2; tail -5 "$work/err" >&2; tail -5 "$work/out" >&2; exit 1
    fi
    read -r wall rss < <(tail -1 "$work/time")
    hlkc="$(sed -n 's/^  hlkc: *ran 1 (\(.*\))$/\1/p' "$work/out")"
    sim="$(sed -n 's/^profile (sim): //p' "$work/out" | paste -sd ';' | sed 's/;/; /g')"  # cycles; binaries cache
    printf '  %-8s %7.2f s wall, peak RSS %4d MB; %s; %s\n' "$name:" "$wall" $((rss / 1024)) "${hlkc:-no hlkc}" "$sim"
  done
done
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (after)"
