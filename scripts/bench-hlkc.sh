#!/usr/bin/env bash
# Benchmark: hlkc on N distinct kernel directories, cold (empty cache) and
# warm (every object a cache hit), plus N identical kernels without a cache
# (compiled once, shared in the run). Kernels are the samples of
# test/lit/hlkc/Inputs (eltwise_add, datacopy, matmul) in turn, each made
# distinct by its input count. Record the figures in docs/performance.md.
#
#   scripts/bench-hlkc.sh [N] [JOBS]      (defaults: 24 kernels, -j nproc)
#   scripts/bench-hlkc.sh --corpus DIR [JOBS]
#
# --corpus: every kernel of every netlist under DIR that net2hlks generates
# (netlists it rejects are skipped and counted), compiled cold into an empty
# cache and then warm; the warm run must be all cache hits (the script fails
# otherwise).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
tool="$build/tools/hlkc/hlkc"
corpus=""
if [ "${1:-}" = --corpus ]; then corpus="$2"; shift 2; fi
n="${1:-24}"
jobs="${2:-$(nproc)}"
[ -n "$corpus" ] && jobs="${1:-$(nproc)}"
[ -x "$tool" ] || { echo "bench-hlkc: build first (ninja -C $build hlkc)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ -n "$corpus" ]; then
  net2hlks="$build/tools/net2hlks/net2hlks"
  [ -x "$net2hlks" ] || { echo "bench-hlkc: build net2hlks first" >&2; exit 2; }
  generated=0 skipped=0
  declare -A dirs=([grayskull]="" [wormhole_b0]="")
  i=0
  while IFS= read -r -d '' f; do
    i=$((i + 1))
    out="$work/corpus/$i"
    if "$net2hlks" --no-warnings --max-errors 1 "$f" -o "$out" >/dev/null 2>&1; then
      generated=$((generated + 1))
      arch="$(sed -n 's/^arch: //p' "$out/manifest.yaml")"
      # Kernel texts do not depend on the arch; hlkc links for these two.
      [ "$arch" = grayskull ] || arch=wormhole_b0
      for k in "$out"/kernels/*; do dirs[$arch]+="$k"$'\n'; done
    else
      skipped=$((skipped + 1))
    fi
  done < <(find "$corpus" -name '*.yaml' -print0 | sort -z)
  find "$work" -type f -exec touch -d 2020-01-01 {} +
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min)"
  echo "corpus:  $generated netlists generated, $skipped rejected by net2hlks or check"
  for pass in cold warm; do
    total_wall=0 total_cpu=0 summaries=""
    for arch in grayskull wormhole_b0; do
      mapfile -t ks < <(printf '%s' "${dirs[$arch]}" | sed '/^$/d')
      [ "${#ks[@]}" -gt 0 ] || continue
      [ "$pass" = warm ] && for k in "${ks[@]}"; do rm -f "$k"/*.elf; done
      /usr/bin/time -o "$work/time.txt" -f '%e %U %S' "$tool" -j "$jobs" --arch "$arch" --cache-dir "$work/cache" "${ks[@]}" > "$work/summary.txt"
      read -r wall user sys < "$work/time.txt"
      total_wall="$(awk -v a="$total_wall" -v b="$wall" 'BEGIN{print a + b}')"
      total_cpu="$(awk -v a="$total_cpu" -v b="$user" -v c="$sys" 'BEGIN{print a + b + c}')"
      summaries+="$arch: $(cat "$work/summary.txt"); "
      if [ "$pass" = warm ]; then
        objects="$(sed -n 's/.* \([0-9]*\) objects.*/\1/p' "$work/summary.txt")"
        hits="$(sed -n 's/.* \([0-9]*\) cache hits.*/\1/p' "$work/summary.txt")"
        # Identical objects of one run are resolved once (the others are
        # "duplicates"), so compiled = objects - hits - duplicates.
        dups="$(sed -n 's/.* \([0-9]*\) duplicates.*/\1/p' "$work/summary.txt")"
        compiled=$((objects - hits - ${dups:-0}))
        [ "$compiled" -eq 0 ] || { echo "bench-hlkc: warm run compiled $compiled objects ($arch)" >&2; exit 1; }
      fi
    done
    printf '%-5s %8.2f s wall %8.2f s CPU   %s\n' "$pass" "$total_wall" "$total_cpu" "$summaries"
  done
  exit 0
fi
samples=(eltwise_add datacopy matmul)
for i in $(seq "$n"); do
  s="${samples[$(( (i - 1) % 3 ))]}"
  d="$work/distinct/op$i"
  mkdir -p "$d"
  cp "$root/test/lit/hlkc/Inputs/$s/hlks.cpp" "$d/"
  sed -E "s/kInputCount = [0-9]+/kInputCount = $((100 + i))/" "$root/test/lit/hlkc/Inputs/$s/hlk_args.h" > "$d/hlk_args.h"
  mkdir -p "$work/same/op$i"
  cp "$root/test/lit/hlkc/Inputs/matmul/hlks.cpp" "$root/test/lit/hlkc/Inputs/matmul/hlk_args.h" "$work/same/op$i/"
done

# run LABEL KERNELS ARGS...: times one hlkc run; prints wall seconds, wall
# and CPU (user + system, hlkc and the clang/lld it ran) per kernel, and
# hlkc's summary. CPU time does not depend on the machine's load.
run() {
  local label="$1" count="$2"; shift 2
  local stats summary
  stats="$work/time.txt"
  summary="$(/usr/bin/time -o "$stats" -f '%e %U %S' "$tool" -j "$jobs" "$@")"
  read -r wall user sys < "$stats"
  awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v n="$count" -v m="$summary" \
    'BEGIN { printf "%-32s %6.2f s wall  %6.1f ms/kernel wall  %6.1f ms/kernel CPU   %s\n", l, w, w * 1000 / n, (u + s) * 1000 / n, m }'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "toolchain: $(clang-14 --version | head -1), $(ld.lld-14 --version)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min)"
echo "command: hlkc -j $jobs --cache-dir CACHE <$n kernel dirs>"
# Inputs dated back: hlkc writes direct-mode manifests only for files not
# modified in the last 2 seconds.
find "$work" -type f -exec touch -d 2020-01-01 {} +
run "cold (empty cache)" "$n" --cache-dir "$work/cache" "$work"/distinct/op*
rm -f "$work"/distinct/op*/*.elf
run "warm (direct: no compiler run)" "$n" --cache-dir "$work/cache" "$work"/distinct/op*
find "$work/cache" -name '*.manifest' -delete
rm -f "$work"/distinct/op*/*.elf
run "warm (clang -E per object)" "$n" --cache-dir "$work/cache" "$work"/distinct/op*
run "$n identical kernels, --no-cache" "$n" --no-cache "$work"/same/op*
run "1 kernel (matmul), --no-cache" 1 --no-cache "$work/distinct/op3"
