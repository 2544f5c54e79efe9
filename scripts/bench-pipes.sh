#!/usr/bin/env bash
# Benchmark: the data-path stages on the largest corpus netlist (or the file
# given): net2pipe, then pipegen on every epoch's pipegen.yaml, then blobgen
# on every blob.yaml (each stage skipped when its tool is not built). Prints
# the machine, per stage the median and min wall time over N runs (a
# stage's time sums its runs over the epochs) and the peak RSS of any of
# its runs (/usr/bin/time), and the three stages together. Record the
# figures in docs/performance.md.
#
#   scripts/bench-pipes.sh [NETLIST] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
net2pipe="$build/tools/net2pipe/net2pipe"
pipegen="$build/tools/pipegen/pipegen"
blobgen="$build/tools/blobgen/blobgen"
corpus="${CORPUS_DIR:-$root/../shared/corpus}/netlists"
netlist="${1:-}"
runs="${2:-5}"
if [ -z "$netlist" ]; then
  netlist="$(find "$corpus" -name '*.yaml' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"
fi
[ -x "$net2pipe" ] || { echo "bench-pipes: build net2pipe first (scripts/build.sh)" >&2; exit 2; }

work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
stats="$work/time"

# Runs "$@" under /usr/bin/time; adds its wall time (ms) to stage $1's total
# and keeps the stage's peak RSS (KB).
declare -A total peak
measure() {
  local stage="$1"; shift
  /usr/bin/time -o "$stats" -f '%e %M' "$@" >/dev/null 2>"$work/err" || {
    echo "bench-pipes: $stage failed:" >&2; cat "$work/err" >&2; exit 1; }
  local out wall rss
  out="$(tail -1 "$stats")"; wall="${out% *}"; rss="${out#* }"
  total[$stage]=$(( ${total[$stage]:-0} + $(printf '%.0f' "$(echo "$wall * 1000" | bc)") ))
  [ "$rss" -gt "${peak[$stage]:-0}" ] && peak[$stage]="$rss"
  return 0
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "netlist: $netlist ($(stat -c %s "$netlist") bytes)"
declare -A samples
stages=(net2pipe)
[ -x "$pipegen" ] && stages+=(pipegen)
[ -x "$pipegen" ] && [ -x "$blobgen" ] && stages+=(blobgen)
for _ in $(seq "$runs"); do
  total=()
  rm -rf "$work/out"
  measure net2pipe "$net2pipe" --no-warnings "$netlist" -o "$work/out"
  arch="$(sed -n 's/^arch: //p' "$work/out/epochs.yaml")"
  for dir in "$work/out"/temporal_epoch_*/overlay; do
    [ -x "$pipegen" ] || break
    measure pipegen "$pipegen" --no-warnings --arch "$arch" "$dir/pipegen.yaml" -o "$dir/blob.yaml"
    [ -x "$blobgen" ] || continue
    measure blobgen "$blobgen" --no-warnings --arch "$arch" "$dir/blob.yaml" -o "$dir/blobs"
  done
  all=0
  for s in "${stages[@]}"; do samples[$s]+="${total[$s]:-0} "; all=$((all + ${total[$s]:-0})); done
  samples[all]+="$all "
done
epochs="$(ls -d "$work/out"/temporal_epoch_* | wc -l)"
echo "epochs:  $epochs; $(du -sb "$work/out" | cut -f1) bytes written"
echo "runs:    $runs"
report() {
  local name="$1" sorted median min
  sorted="$(printf '%s\n' ${samples[$name]} | sort -n)"
  median="$(printf '%s\n' "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")"
  min="$(printf '%s\n' "$sorted" | head -1)"
  printf '%-9s median %5d ms, min %5d ms' "$name:" "$median" "$min"
  [ -n "${peak[$name]:-}" ] && printf ', peak RSS %d MB' "$(( ${peak[$name]} / 1024 ))"
  printf '\n'
}
for s in "${stages[@]}"; do report "$s"; done
report all
