# same_outputs.py NETLIST GOLDEN_DIR SIM_DIR: every op-fed queue of the
# netlist has a .npy in both directories, same shape, bit-identical values,
# and the values are not all zero (a sim that wrote nothing would fail).
import os
import sys

import numpy as np
import yaml

netlist, golden, simdir = sys.argv[1:4]
with open(netlist) as f:
    nl = yaml.safe_load(f)
checked = 0
for name, q in nl["queues"].items():
    if q["input"] == "HOST":
        continue
    fname = name.replace("/", "_") + ".npy"
    g = np.load(os.path.join(golden, fname))
    s = np.load(os.path.join(simdir, fname))
    if g.shape != s.shape:
        sys.exit(f"{name}: shape golden {g.shape} sim {s.shape}")
    if not np.any(g):
        sys.exit(f"{name}: golden output is all zeros: the test cannot tell a copy from nothing")
    if g.tobytes() != s.tobytes():
        bad = np.argwhere(g.view(np.uint32) != s.view(np.uint32))
        sys.exit(f"{name}: {len(bad)} values differ; first at {tuple(bad[0])}: golden {g[tuple(bad[0])]} sim {s[tuple(bad[0])]}")
    print(f"{name}: bit-exact {list(g.shape)}")
    checked += 1
if checked == 0:
    sys.exit("no op-fed queue compared")
print(f"SAME {checked}")
