#!/usr/bin/env bash
# Benchmark: the data-path stages on the largest corpus netlist (or the file
# given), as three commands: net2pipe, pipegen on every epoch's
# pipegen.yaml, blobgen on every epoch's blob.yaml (both with -j JOBS,
# default the machine's cores). Prints the machine and its load average;
# per stage the median and min over RUNS runs of its wall time (date, ms),
# the median CPU time (user + system, /usr/bin/time: what a shared
# machine's load does not inflate much) and the peak RSS; then the three
# together. Stages whose tool is not built are skipped. Record the figures
# in docs/performance.md (with the file system: TMPDIR picks it).
#
#   [JOBS=N] [TMPDIR=DIR] scripts/bench-pipes.sh [NETLIST] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
net2pipe="$build/tools/net2pipe/net2pipe"
pipegen="$build/tools/pipegen/pipegen"
blobgen="$build/tools/blobgen/blobgen"
corpus="${CORPUS_DIR:-$root/../shared/corpus}/netlists"
netlist="${1:-}"
runs="${2:-5}"
jobs="${JOBS:-$(nproc)}"
if [ -z "$netlist" ]; then
  netlist="$(find "$corpus" -name '*.yaml' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"
fi
[ -x "$net2pipe" ] || { echo "bench-pipes: build net2pipe first (scripts/build.sh)" >&2; exit 2; }

work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Runs stage $1 (the command after it) under /usr/bin/time; adds its wall
# time (ms, from date), CPU time (ms) and peak RSS (KB) to the run's figures.
declare -A wall cpu peak
measure() {
  local stage="$1" start user sys rss; shift
  start="$(now_ms)"
  /usr/bin/time -o "$work/time" -f '%U %S %M' "$@" >/dev/null 2>"$work/err" || {
    echo "bench-pipes: $stage failed:" >&2; cat "$work/err" >&2; exit 1; }
  wall[$stage]=$(( $(now_ms) - start ))
  read -r user sys rss < <(tail -1 "$work/time")
  cpu[$stage]=$(printf '%.0f' "$(echo "($user + $sys) * 1000" | bc)")
  [ "$rss" -gt "${peak[$stage]:-0}" ] && peak[$stage]="$rss"
  return 0
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "output:  $(df -T "$work" | awk 'NR==2{print $2}') ($work)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (before)"
echo "netlist: $netlist ($(stat -c %s "$netlist") bytes)"
declare -A samples cpusamples
stages=(net2pipe)
[ -x "$pipegen" ] && stages+=(pipegen)
[ -x "$pipegen" ] && [ -x "$blobgen" ] && stages+=(blobgen)
for _ in $(seq "$runs"); do
  rm -rf "$work/out"
  measure net2pipe "$net2pipe" --no-warnings "$netlist" -o "$work/out"
  arch="$(sed -n 's/^arch: //p' "$work/out/epochs.yaml")"
  mapfile -t overlays < <(ls -d "$work/out"/temporal_epoch_*/overlay)
  if [ -x "$pipegen" ]; then
    measure pipegen "$pipegen" --no-warnings --arch "$arch" -j "$jobs" "${overlays[@]/%//pipegen.yaml}"
  fi
  if [ -x "$pipegen" ] && [ -x "$blobgen" ]; then
    measure blobgen "$blobgen" --no-warnings --arch "$arch" -j "$jobs" "${overlays[@]/%//blob.yaml}" -o "$work/out/blobs"
  fi
  all=0 allcpu=0
  for s in "${stages[@]}"; do
    samples[$s]+="${wall[$s]} "; all=$((all + ${wall[$s]}))
    cpusamples[$s]+="${cpu[$s]} "; allcpu=$((allcpu + ${cpu[$s]}))
  done
  samples[all]+="$all "
  cpusamples[all]+="$allcpu "
done
echo "epochs:  ${#overlays[@]}, $jobs at a time; $(du -sb "$work/out" | cut -f1) bytes written ($(ls "$work/out/blobs" 2>/dev/null | wc -l) blobs)"
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
