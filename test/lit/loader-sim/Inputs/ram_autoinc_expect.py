# ram_autoinc_expect.py DIR: the outputs of ram-autoinc.yaml worked out from
# its inputs by hand (datacopy of Float16_b values is exact):
#   w2: in2's 4 entries in order (two executes of 2 inputs, wr_ptr 0 and 2, stride 1)
#   w3: in3's first 3 entries (one execute of 3 inputs, slots 1, 3, 5)
#   out: gr's first execute reads what the host pushed into v2 (2 entries);
#        its second the view (t=2) of w2: entry j = w2 entries 2j and 2j+1 stacked in t
import os
import sys

import numpy as np

d = sys.argv[1]
load = lambda n: np.load(os.path.join(d, n + ".npy"))
in2, in3, v2, w2, w3, out = (load(n) for n in ("in2", "in3", "v2", "w2", "w3", "out"))
ok = True
def check(name, got, want):
    global ok
    if got.shape != want.shape or got.tobytes() != want.tobytes():
        print(f"{name}: MISMATCH got {got.shape} want {want.shape}")
        ok = False
    else:
        print(f"{name}: as worked out {list(got.shape)}")
check("w2", w2, in2[:4])
check("w3", w3, in3[:3])
check("out", out, np.concatenate([v2[:2], in2[:4].reshape(2, 2, *in2.shape[2:])]))
sys.exit(0 if ok else 1)
