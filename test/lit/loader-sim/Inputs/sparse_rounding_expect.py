# sparse_rounding_expect.py DIR: checks DIR/out.npy of sparse-rounding.yaml
# against the device's arithmetic, worked out independently: each product is
# exact (an identity tile times an activation tile), dest starts at 0 and is
# rounded to Float16_b (round half away from zero) after each of the four
# products, in encoding order: activation tile rows 0, 1, 2, 3.
import struct
import sys

import numpy as np

def bf16(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return struct.unpack("<f", struct.pack("<I", ((u & 0x7FFFFFFF) + 0x8000) & 0xFFFF0000 | (u & 0x80000000)))[0]


TILE = 32


def act_value(row_tile, i, j):
    if row_tile == 0:
        return 256.0 + 32.0 * ((i + j) % 8)
    return 1.0 if (i + j) % 2 == 0 else 0.5


got = np.load(sys.argv[1] + "/out.npy").reshape(TILE, TILE)
bad = once = 0
for i in range(TILE):
    for j in range(TILE):
        dest = 0.0
        for rt in range(4):
            dest = bf16(dest + act_value(rt, i, j))
        total = sum(act_value(rt, i, j) for rt in range(4))
        once += bf16(total) != dest
        bad += got[i, j] != dest
print("sparse rounding: %d value(s) differ from per-product rounding (%d where rounding once differs)" % (bad, once))
