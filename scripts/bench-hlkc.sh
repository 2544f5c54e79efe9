#!/usr/bin/env bash
# Benchmark: hlkc on N distinct kernel directories, cold (empty cache) and
# warm (every object a cache hit), plus N identical kernels without a cache
# (compiled once, shared in the run). Kernels are the samples of
# test/lit/hlkc/Inputs (eltwise_add, datacopy, matmul) in turn, each made
# distinct by its input count. Record the figures in docs/performance.md.
#
#   scripts/bench-hlkc.sh [N] [JOBS]      (defaults: 24 kernels, -j nproc)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
tool="$build/tools/hlkc/hlkc"
n="${1:-24}"
jobs="${2:-$(nproc)}"
[ -x "$tool" ] || { echo "bench-hlkc: build first (ninja -C $build hlkc)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
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
