"""Independent check of a softmax netlist's golden output: recomputes softmax
in float64 with numpy from the inputs the loader pushed, then applies the
netlist's AllCloseHw comparison (pcc and share within atol + rtol*|expected|).

usage: check_softmax.py NETLIST OUTDIR INPUT_QUEUE OUTPUT_QUEUE AXIS [SIZE]
AXIS: -1 softmax along each row (over columns), -2 along each column.
SIZE: the model's size along AXIS before tile padding; PyBUDA lowers a softmax
over a dimension of size 1 to exp(x) * 1/exp(x), so the expected value is 1
everywhere (padding included).
"""
import sys

import numpy as np
import yaml

netlist, outdir, in_q, out_q, axis = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
size = int(sys.argv[6]) if len(sys.argv) > 6 else None
cfg = yaml.safe_load(open(netlist))["test-config"]["comparison-config"]
x = np.load(f"{outdir}/{in_q}.npy").astype(np.float64)
got = np.load(f"{outdir}/{out_q}.npy").astype(np.float64)
# A streaming host may push more entries than the programs read: output i
# comes from input i.
x = x[: got.shape[0]]
e = np.exp(x - x.max(axis=axis, keepdims=True))
want = np.ones_like(x) if size == 1 else e / e.sum(axis=axis, keepdims=True)
if want.shape != got.shape:
    sys.exit(f"shape {got.shape} != expected {want.shape}")
within = np.abs(got - want) <= cfg["atol"] + cfg["rtol"] * np.abs(want)
pct = within.mean()
# Constant tensors have no correlation; equal ones count as 1 (as the comparison library does).
pcc = 1.0 if want.std() == 0 and within.all() else np.corrcoef(want.ravel(), got.ravel())[0, 1]
status = "OK" if pct >= cfg["check_pct"] and pcc >= cfg["check_pcc"] else "MISMATCH"
print(f"softmax {status} entries={got.shape[0]} pcc={pcc:.4f} within={pct:.4f} "
      f"(need pcc>={cfg['check_pcc']} within>={cfg['check_pct']})")
sys.exit(0 if status == "OK" else 1)
