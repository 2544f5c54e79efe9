# ram_views_disjoint_expect.py DIR: the outputs of ram-views-disjoint.yaml
# worked out from its inputs by hand (datacopy of Float16_b values is exact):
#   w:   in's 4 entries in write order (w 4, 5, then 6, 7)
#   out: execute 0 reads v 0, 1 (the host's v entries 0 and 1); execute 1
#        reads v 1 (the host's) and v 2 = in 0 and in 1 stacked in t
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
check("w", w, inp[:4])
v2 = inp[0:2].reshape(1, 2, *inp.shape[2:])
check("out", out, np.concatenate([v[0:2], v[1:2], v2]))
sys.exit(0 if ok else 1)
