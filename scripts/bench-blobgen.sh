#!/usr/bin/env bash
# Benchmark: blobgen on the largest anchor blob.yaml (BUDA pipegen2 output of
# the corpus) or the file given, then over all of them. Prints the machine,
# the command, median/min wall time over N runs, the peak RSS, and the total
# for every anchor blob.yaml. Record the figures in docs/performance.md.
#
#   scripts/bench-blobgen.sh [BLOB_YAML] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
tool="$build/tools/blobgen/blobgen"
anchors="${CORPUS_DIR:-$root/../shared/corpus}/anchor-artifacts"
input="${1:-}"
runs="${2:-21}"
if [ -z "$input" ]; then
  input="$(find "$anchors" -name blob.yaml -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"
fi
[ -x "$tool" ] || { echo "bench-blobgen: build first (scripts/build.sh)" >&2; exit 2; }

out="$(mktemp -d)"; stats="$(mktemp)"; trap 'rm -rf "$out" "$stats"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "command: blobgen -w $input -o <tmp>"
echo "size:    $(stat -c %s "$input") bytes, $(grep -c '^phase_' "$input") phase sections"
"$tool" -w --stats "$input" -o "$out/stats" | sed 's/^/result:  /'
times=()
cpus=()
peak=0
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  /usr/bin/time -o "$stats" -f '%M %U %S' "$tool" -w "$input" -o "$out/run" >/dev/null 2>&1
  end=$(date +%s%N)
  times+=("$(( (end - start) / 1000 ))")
  read -r rss user sys < <(tail -1 "$stats")
  cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')")
  [ "$rss" -gt "$peak" ] && peak="$rss"
done
cpu_median="$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")"
sorted="$(printf '%s\n' "${times[@]}" | sort -n)"
median="$(printf '%s\n' "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")"
min="$(printf '%s\n' "$sorted" | head -1)"
echo "runs:    $runs"
echo "wall:    median $((median / 1000)).$(printf '%03d' $((median % 1000))) ms, min $((min / 1000)).$(printf '%03d' $((min % 1000))) ms"
echo "cpu:     median ${cpu_median} s user+sys (10 ms resolution; wall includes waiting for a core)"
echo "peak RSS: $((peak / 1024)) MB"

files=($(find "$anchors" -name blob.yaml | sort))
start=$(date +%s%N)
i=0
for f in "${files[@]}"; do
  "$tool" -w "$f" -o "$out/all/$i" >/dev/null
  i=$((i + 1))
done
end=$(date +%s%N)
echo "all:     ${#files[@]} blob.yaml, $(find "$out/all" -name '*.hex' | wc -l) blobs, $(( (end - start) / 1000000 )) ms in total (one process each)"
