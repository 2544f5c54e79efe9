"""Checks the matmul sample against an identity in1 (Inputs/tiles.py
identity): out block (r, c) of input i must be in0 block (r, c) bit for bit.

usage: matmul_expect.py IN0 OUT INPUTS"""
import sys

TILE = 2080
a = open(sys.argv[1], "rb").read()
o = open(sys.argv[2], "rb").read()
bad = 0
for i in range(int(sys.argv[3])):
    for r in range(2):
        for c in range(2):
            src = a[(i * 6 + r * 3 + c) * TILE:][:TILE]
            dst = o[(i * 4 + r * 2 + c) * TILE:][:TILE]
            if src != dst:
                bad += 1
                print("input %d tile (%d, %d) differs" % (i, r, c))
print("matmul: %d tiles differ" % bad)
sys.exit(1 if bad else 0)
