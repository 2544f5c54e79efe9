#!/usr/bin/env bash
# Benchmark: netlist-check on the largest corpus netlist (or the file given).
# Prints the machine, the command, median/min wall time over N runs and the
# peak RSS. Record the figures in docs/performance.md.
#
#   scripts/bench-check.sh [NETLIST] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
tool="$build/tools/netlist-check/netlist-check"
corpus="${CORPUS_DIR:-$root/../shared/corpus}/netlists"
netlist="${1:-}"
runs="${2:-15}"
if [ -z "$netlist" ]; then
  netlist="$(find "$corpus" -name '*.yaml' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"
fi
[ -x "$tool" ] || { echo "bench-check: build first (scripts/build.sh)" >&2; exit 2; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "command: netlist-check $netlist"
echo "size:    $(stat -c %s "$netlist") bytes"
stats="$(mktemp)"; trap 'rm -f "$stats"' EXIT
times=()
peak=0
for _ in $(seq "$runs"); do
  /usr/bin/time -o "$stats" -f '%e %M' "$tool" --no-warnings "$netlist" >/dev/null 2>&1
  out="$(tail -1 "$stats")"
  times+=("${out% *}")
  rss="${out#* }"
  [ "$rss" -gt "$peak" ] && peak="$rss"
done
sorted="$(printf '%s\n' "${times[@]}" | sort -n)"
median="$(printf '%s\n' "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")"
min="$(printf '%s\n' "$sorted" | head -1)"
echo "runs:    $runs"
echo "wall:    median ${median} s, min ${min} s"
echo "peak RSS: $((peak / 1024)) MB"
