#!/usr/bin/env bash
# Benchmark: the data-path stages on the largest corpus netlist (or the file
# given): net2pipe, then pipegen on every epoch's pipegen.yaml, then blobgen
# on every blob.yaml (each stage skipped when its tool is not built). Prints
# the machine and its load average, per stage the median and min wall time
# over N runs (a stage's time sums its runs over the epochs), the median CPU
# time (user + system: what a shared machine's load does not inflate much)
# and the peak RSS of any of its runs (/usr/bin/time), and the three stages
# together. Record the figures in docs/performance.md.
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

# Runs "$@" under /usr/bin/time; adds its wall and CPU time (ms) to stage
# $1's totals and keeps the stage's peak RSS (KB).
declare -A total cpu peak
measure() {
  local stage="$1"; shift
  /usr/bin/time -o "$stats" -f '%e %U %S %M' "$@" >/dev/null 2>"$work/err" || {
    echo "bench-pipes: $stage failed:" >&2; cat "$work/err" >&2; exit 1; }
  local wall user sys rss
  read -r wall user sys rss < <(tail -1 "$stats")
  total[$stage]=$(( ${total[$stage]:-0} + $(printf '%.0f' "$(echo "$wall * 1000" | bc)") ))
  cpu[$stage]=$(( ${cpu[$stage]:-0} + $(printf '%.0f' "$(echo "($user + $sys) * 1000" | bc)") ))
  [ "$rss" -gt "${peak[$stage]:-0}" ] && peak[$stage]="$rss"
  return 0
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (before)"
echo "netlist: $netlist ($(stat -c %s "$netlist") bytes)"
declare -A samples cpusamples
stages=(net2pipe)
[ -x "$pipegen" ] && stages+=(pipegen)
[ -x "$pipegen" ] && [ -x "$blobgen" ] && stages+=(blobgen)
for _ in $(seq "$runs"); do
  total=()
  cpu=()
  rm -rf "$work/out"
  measure net2pipe "$net2pipe" --no-warnings "$netlist" -o "$work/out"
  arch="$(sed -n 's/^arch: //p' "$work/out/epochs.yaml")"
  for dir in "$work/out"/temporal_epoch_*/overlay; do
    [ -x "$pipegen" ] || break
    measure pipegen "$pipegen" --no-warnings --arch "$arch" "$dir/pipegen.yaml" -o "$dir/blob.yaml"
    [ -x "$blobgen" ] || continue
    measure blobgen "$blobgen" --no-warnings --arch "$arch" "$dir/blob.yaml" -o "$dir/blobs"
  done
  all=0 allcpu=0
  for s in "${stages[@]}"; do
    samples[$s]+="${total[$s]:-0} "; all=$((all + ${total[$s]:-0}))
    cpusamples[$s]+="${cpu[$s]:-0} "; allcpu=$((allcpu + ${cpu[$s]:-0}))
  done
  samples[all]+="$all "
  cpusamples[all]+="$allcpu "
done
epochs="$(ls -d "$work/out"/temporal_epoch_* | wc -l)"
echo "epochs:  $epochs; $(du -sb "$work/out" | cut -f1) bytes written"
echo "runs:    $runs"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (after)"
median() { printf '%s\n' $1 | sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
report() {
  local name="$1" min
  min="$(printf '%s\n' ${samples[$name]} | sort -n | head -1)"
  printf '%-9s median %5d ms, min %5d ms wall; median %5d ms CPU' "$name:" "$(median "${samples[$name]}")" "$min" \
    "$(median "${cpusamples[$name]}")"
  [ -n "${peak[$name]:-}" ] && printf ', peak RSS %d MB' "$(( ${peak[$name]} / 1024 ))"
  printf '\n'
}
for s in "${stages[@]}"; do report "$s"; done
report all
