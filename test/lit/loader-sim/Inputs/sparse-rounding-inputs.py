# sparse-rounding-inputs.py DIR: the host inputs of sparse-rounding.yaml as
# .npy files (written without numpy).
#   sparse: 4 identity tiles, so tile product k is activation tile row k.
#   act: tile row 0 holds 256 + 32 * ((i + j) % 8) (exact in Float16_b, whose
#        step there is 2), tile rows 1..3 hold 1 where i + j is even, else
#        0.5: one rounding gives 260 from 259, three give 262 (ties away).
#   enc: strip 0 (activation rows 0, 1) then strip 1 (rows 2, 3), each one
#        ublock of two tile entries (sparse tiles 0, 1 and 2, 3; in_d 0, 1).
import os
import struct
import sys


def save(path, dtype, shape, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, "".join("%d, " % d for d in shape))
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    fmt = {"<f4": "f", "<u4": "I"}[dtype]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


TILE = 32
out = sys.argv[1]
os.makedirs(out, exist_ok=True)

sparse = [0.0] * (TILE * 4 * TILE)
for k in range(4):
    for r in range(TILE):
        sparse[r * 4 * TILE + k * TILE + r] = 1.0
save(os.path.join(out, "sparse.npy"), "<f4", (1, 1, TILE, 4 * TILE), sparse)


def act_value(row_tile, i, j):
    if row_tile == 0:
        return 256.0 + 32.0 * ((i + j) % 8)
    return 1.0 if (i + j) % 2 == 0 else 0.5


act = [act_value(rt, i, j) for rt in range(4) for i in range(TILE) for j in range(TILE)]
save(os.path.join(out, "act.npy"), "<f4", (1, 1, 4 * TILE, TILE), act)


def strip(index, last, tiles):
    enc1 = (index >> 16) | (last << 14) | (last << 15)
    header = (len(tiles) << 4) | 0                       # ublock row 0, ublock_idx_bits 4
    entries = [(s << 12) | d for d, s in enumerate(tiles)]  # tile_ptr_bits 4; in_r 0, in_d d
    return [index & 0xFFFF, enc1, 1, header] + entries


fields = strip(0, 0, [0, 1]) + strip(1, 1, [2, 3])
words = [fields[i] | (fields[i + 1] << 16) for i in range(0, len(fields), 2)]
enc = words + [0] * (TILE * TILE - len(words))
save(os.path.join(out, "enc.npy"), "<u4", (1, 1, TILE, TILE), enc)
