# ram_views_race_expect.py DIR [reader-first]: the reference model's outputs
# of ram-views-one-epoch.yaml (or ram-views-reader-first.yaml) worked out by
# hand. Input i reads v before the
# writes of inputs i and later (BUDA's golden model runs the graph once per
# input, its input queues read before its ops): input 0 reads v 0 = w 0, 1
# (written by inputs 0 and 1: both old), input 1 reads v 1 = w 2, 3 (never
# written): out is what the host wrote into v. w holds in's 2 entries.
# reader-first: w written at 2, 3; input 0 reads v 0 = w 0, 1 (never
# written), input 1 reads v 1 = w 2 (input 0's write: new) and w 3 (its own:
# old), so out 1 is in 0 at t 0 and the host's v 1 at t 1.
import os
import sys

import numpy as np

d = sys.argv[1]
load = lambda n: np.load(os.path.join(d, n + ".npy"))
inp, v, w, out = (load(n) for n in ("in", "v", "w", "out"))
ok = True
def check(name, got, want):
    global ok
    if got.shape != want.shape or got.tobytes() != want.tobytes():
        print(f"{name}: MISMATCH got {got.shape} want {want.shape}")
        ok = False
    else:
        print(f"{name}: as worked out {list(got.shape)}")
check("w", w, inp[:2])
want = v[:2].copy()
if len(sys.argv) > 2:
    want[1, 0] = inp[0, 0]
check("out", out, want)
sys.exit(0 if ok else 1)
