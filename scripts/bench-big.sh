#!/usr/bin/env bash
# Benchmark: CPU time and peak memory of `loader run` on large netlists (the
# ones issue 20 wants under 120 s), one netlist at a time, each under a
# timeout: user and system CPU, peak RSS (/usr/bin/time), the reference
# model's and the chip's share (loader --profile), simulated cycles, and
# PASS/FAIL or the timeout. On a shared machine compare CPU time, not wall
# time; a run stopped by the timeout gives lower bounds. With OUT_DIR set,
# every run writes its --outputs and --perf-report under it (to compare two
# builds' results byte for byte: cmp -r).
#
#   scripts/bench-big.sh [NETLIST...]    (TIMEOUT seconds per run, default 1800;
#                                         default netlists: the two ub48 training netlists)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
loader="${LOADER:-$build/tools/loader/loader}"
corpus="${CORPUS:-$root/../shared/corpus/netlists}"
timeout_s="${TIMEOUT:-1800}"
[ -x "$loader" ] || { echo "bench-big: build the tools first (scripts/build.sh)" >&2; exit 2; }
if [ $# -eq 0 ]; then
  set -- "$corpus/loader/tests/loop_on_device/bert_large_train_c1_l3_ub48_ubc4_o4_bert_encoders_netlist_grayskull.yaml" \
         "$corpus/loader/tests/loop_on_device/bert_large_train_c1_l3_ub48_ubc4_o4_bert_encoders_netlist_wormhole_b0.yaml"
fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB"
echo "loader:  $loader"
for netlist in "$@"; do
  name="$(basename "$netlist" .yaml)"
  echo "netlist: $netlist"
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (before)"
  extra=()
  if [ -n "${OUT_DIR:-}" ]; then
    mkdir -p "$OUT_DIR"
    extra=(--outputs "$OUT_DIR/$name-outputs" --perf-report "$OUT_DIR/$name-perf.json")
  fi
  rc=0
  /usr/bin/time -o "$work/time" -f '%e %U %S %M' timeout "$timeout_s" "$loader" run "$netlist" --profile -j 1 \
      --build-dir "$work/$name" --tools-dir "$build" "${extra[@]}" >"$work/out" 2>"$work/err" || rc=$?
  read -r wall user sys rss < <(tail -1 "$work/time")
  verdict="$(tail -1 "$work/out")"
  [ "$rc" -eq 124 ] && verdict="TIMEOUT after ${timeout_s} s (figures are lower bounds)"
  [ "$rc" -eq 137 ] && verdict="KILLED (exit 137: out of memory?)"
  sim="$(sed -n 's/^profile (sim): \([0-9]* epochs, [0-9]* cycles\) in .*, \([0-9.]* s CPU\) .*$/\1, chip \2/p' "$work/out" | head -1)"
  printf '  %s; process %.1f s user + %.1f s system CPU, %.1f s wall, peak RSS %d MB; %s\n' \
    "${sim:-no chip figures}" "$user" "$sys" "$wall" $((rss / 1024)) "$verdict"
done
