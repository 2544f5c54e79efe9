#!/usr/bin/env bash
# Checks that two loader builds compute the same golden outputs, bit for bit:
# runs `loader --target golden --outputs DIR` with each on every netlist and
# compares every written .npy file with cmp. For a change to the reference
# model that must not change its results (a faster kernel, fewer copies).
#
#   scripts/compare-golden.sh BASE_LOADER NEW_LOADER [NETLIST...]
#
# Without netlists: a dozen corpus netlists whose matmuls round per tile in a
# 16-bit dest (Float16 and Float16_b, every fidelity, m_k > 1, t > 1, fused
# and training graphs), bert_base_training last. Prints one line per netlist
# (SAME / DIFFERENT / FAILED and both wall times); exit 1 if any differs.
# BASE_CACHE=DIR keeps the base build's outputs under DIR (one directory per
# netlist) and reuses them in later runs instead of running the base again.
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
base="$1" new="$2"; shift 2
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${CORPUS_DIR:-$root/../shared/corpus}/netlists"
if [ $# -eq 0 ]; then
  set -- \
    verif/tm_tests/directed/netlist_matmul_mc_type1_pack_mz.yaml \
    verif/op_tests/netlists/netlist_matmul_min_buffer_input.yaml \
    verif/op_tests/netlists/fused_op/netlist_fused_op_with_matmul_reduce_input_fork.yaml \
    verif/graph_tests/netlists/pybuda_pregenerated/feedforward/grayskull/ff_1_128_1280_netlist.yaml \
    verif/graph_tests/netlists/netlist_train.yaml \
    verif/op_tests/netlists/bh_test_plan_netlists/hlk_functional_tests/netlist_mha_inference.yaml \
    verif/graph_tests/netlists/netlist_encoder_grid.yaml \
    verif/tm_tests/directed/netlist_matmul_mc_z_bc_pack.yaml \
    verif/tm_tests/directed/bert_tiny_inference_hifi.yaml \
    verif/graph_tests/netlists/pybuda_pregenerated/feedforward_train/grayskull/feedforward_training_netlist.yaml \
    verif/graph_tests/netlists/netlist_encoder_training.yaml \
    verif/tm_tests/directed/bert_base_inference_hifi.yaml \
    verif/data_movement/push/grayskull/singlechip/dram_multicast/netlist_200.yaml \
    verif/op_tests/netlists/kernel_t_bcast/netlist_matmul_op_with_bias_t_bcast.yaml \
    verif/op_tests/netlists/tiny_tile/netlist_bias_tiny_tile_t_input_count.yaml \
    verif/graph_tests/netlists/bert_base_training.yaml
fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
status=0
for netlist in "$@"; do
  [ -f "$netlist" ] || netlist="$corpus/$netlist"
  name="${netlist#"$corpus"/}"
  times=()
  for side in base new; do
    tool="$base"; [ "$side" = new ] && tool="$new"
    [ "$tool" = - ] && continue
    cached=""
    if [ "$side" = base ] && [ -n "${BASE_CACHE:-}" ]; then
      cached="$BASE_CACHE/$(tr '/' '_' <<<"$name")"
      if [ -f "$cached/rc" ]; then
        rm -rf "${work:?}/base"; cp -r "$cached/out" "$work/base"; cp "$cached/rc" "$work/base.rc"
        times+=("$(cat "$cached/time") (cached)"); continue
      fi
    fi
    rm -rf "${work:?}/$side"; mkdir -p "$work/$side"
    start=$(date +%s.%N)
    "$tool" "$netlist" --target golden --outputs "$work/$side" >"$work/$side.log" 2>&1
    echo $? >"$work/$side.rc"
    times+=("$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')")
    if [ -n "$cached" ]; then
      mkdir -p "$cached"; rm -rf "$cached/out"; cp -r "$work/base" "$cached/out"
      echo "${times[0]}" >"$cached/time"; cp "$work/base.rc" "$cached/rc"
    fi
  done
  if [ "$new" = - ]; then
    echo "$name: base exit $(cat "$work/base.rc"), ${times[0]} s"; continue
  fi
  if [ "$(cat "$work/base.rc")" != "$(cat "$work/new.rc")" ]; then
    verdict="FAILED (exit $(cat "$work/base.rc") vs $(cat "$work/new.rc"))"; status=1
  elif [ -z "$(ls "$work/base")" ]; then
    verdict="FAILED (no outputs, exit $(cat "$work/base.rc"))"; status=1
  elif diff -rq "$work/base" "$work/new" >/dev/null; then
    verdict="SAME ($(ls "$work/base" | wc -l) files, $(du -sh "$work/base" | cut -f1))"
  else
    verdict="DIFFERENT: $(diff -rq "$work/base" "$work/new" | head -3 | tr '\n' ' ')"; status=1
  fi
  echo "$name: $verdict  base ${times[0]} s, new ${times[1]} s"
done
exit $status
