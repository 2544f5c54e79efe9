#!/usr/bin/env bash
# Benchmark: the golden target on the largest corpus netlist (or the file
# given). Prints the machine, the command, wall time and peak RSS of the whole
# run, its CPU time, the loader's per-op-type profile with matmul GFLOP/s, and this core's
# theoretical fp32 peak for comparison. Record the figures in docs/performance.md.
#
#   scripts/bench-golden.sh [NETLIST] [LOADER ARGS...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
tool="$build/tools/loader/loader"
corpus="${CORPUS_DIR:-$root/../shared/corpus}/netlists"
netlist="${1:-}"
[ $# -gt 0 ] && shift
if [ -z "$netlist" ]; then
  netlist="$(find "$corpus" -name '*.yaml' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"
fi
[ -x "$tool" ] || { echo "bench-golden: build first (scripts/build.sh)" >&2; exit 2; }

model="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
mhz="$(lscpu | awk -F: '/CPU max MHz/{gsub(/ /,"",$2); print $2}')"
[ -n "$mhz" ] || mhz="$(grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')"
flags="$(grep -m1 '^flags' /proc/cpuinfo)"
# fp32 FLOPs per cycle per core: two FMA units of the widest vector width.
if grep -qw avx512f <<<"$flags"; then per=64; isa=AVX-512
elif grep -qw fma <<<"$flags"; then per=32; isa=AVX2+FMA
else per=8; isa=SSE; fi
echo "machine: $(nproc) cores, $model, $(free -g | awk '/Mem:/{print $2}') GiB"
echo "peak:    $(awk -v m="$mhz" -v p="$per" 'BEGIN{printf "%.1f", m*p/1000}') GFLOP/s per core (fp32, $isa, ${mhz} MHz x $per FLOP/cycle)"
echo "command: loader --target golden --profile $netlist $*"
stats="$(mktemp)"; trap 'rm -f "$stats"' EXIT
/usr/bin/time -o "$stats" -f '%e %M %U %S' "$tool" --target golden --profile "$netlist" "$@" 2>/dev/null | sed -n '/^profile/,$p'
read -r wall rss user sys < <(tail -1 "$stats")
echo "wall:    $wall s"
# CPU time: what a loaded machine does not inflate (wall does, by the load).
echo "cpu:     user $user s, system $sys s"
echo "peak RSS: $(( rss / 1024 )) MB"
