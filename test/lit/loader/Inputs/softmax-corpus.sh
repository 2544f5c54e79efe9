#!/usr/bin/env bash
# Runs every PyBUDA softmax netlist of the corpus on the golden target and
# checks each output with check_softmax.py (numpy). One line per netlist.
# usage: softmax-corpus.sh LOADER PYTHON CORPUS OUTDIR
loader="$1"; python="$2"; corpus="$3"; out="$4"
here="$(dirname "$0")"
for f in "$corpus"/netlists/verif/graph_tests/netlists/pybuda_pregenerated/softmax/*/*.yaml; do
  n="$(basename "$(dirname "$f")")_$(basename "$f" .yaml)"
  # softmax_1x1x<rows>x<cols>_dim_min<d>: the logical size along the axis.
  dims="$(sed -E 's/.*softmax_1x1x([0-9]+)x([0-9]+)_dim.*/\1 \2/' <<<"$n")"
  axis=-1; size="${dims#* }"
  case "$n" in *dim_min2*) axis=-2; size="${dims% *}" ;; esac
  if ! "$loader" "$f" --outputs "$out/$n" >/dev/null 2>&1; then echo "LOADER FAILED $n"; continue; fi
  "$python" "$here/check_softmax.py" "$f" "$out/$n" input_0_softmax_exp test_module.output_softmax_mult "$axis" "$size" ||
    echo "CHECK FAILED $n"
done
