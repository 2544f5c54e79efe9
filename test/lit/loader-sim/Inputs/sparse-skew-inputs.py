# sparse-skew-inputs.py DIR: the host inputs of sparse-skew.yaml as .npy
# files (written without numpy). Encodings, one 32x32 tile per grid row:
#   core 0 reads strip t for output t (strips 0, 1, 2, ... 7);
#   core 1 reads strip 0 for every t, so it pops strip 0 only at the end.
# Each strip has one ublock with one tile entry, so every output tile is at
# most one product of a row selection: bit-exact in Float16_b.
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


T, TILE = 8, 32
out = sys.argv[1]
os.makedirs(out, exist_ok=True)

# sparse: 2 grid rows x 4 sparse tiles; tile k of a row selects row (r + k) % 32.
sparse = [0.0] * (64 * 128)
for core in range(2):
    for k in range(4):
        for r in range(TILE):
            sparse[(core * TILE + r) * 128 + k * TILE + (r + k + core) % TILE] = 1.0
save(os.path.join(out, "sparse.npy"), "<f4", (1, 1, 64, 128), sparse)

# act: 2 entries of 8 strips (u_kt 1: one tile row each) x 1 tile column,
# small multiples of 1/8 (exact in Float16_b).
act = [((e * 7 + i * 13) % 33 - 16) / 8.0 for e in range(2) for i in range(8 * TILE * TILE)]
save(os.path.join(out, "act.npy"), "<f4", (2, 1, 8 * TILE, TILE), act)


def strip(index, last_in_t, last_in_tile, ublock_row, sparse_tile):
    enc1 = (index >> 16) | (last_in_t << 14) | (last_in_tile << 15)
    header = (1 << 4) | ublock_row               # one tile, ublock_idx_bits 4
    entry = (sparse_tile << 12) | 0              # tile_ptr_bits 4; in_r 0, in_d 0
    return [index & 0xFFFF, enc1, 1, header, entry]


enc = [0] * (64 * TILE)
for core in range(2):
    fields = []
    for t in range(T):
        index = t if core == 0 else 0
        fields += strip(index, 1, 1 if t == T - 1 else 0, t % 2, t % 4)
    fields += [0] * (len(fields) % 2)
    words = [fields[i] | (fields[i + 1] << 16) for i in range(0, len(fields), 2)]
    enc[core * TILE * TILE:core * TILE * TILE + len(words)] = words
save(os.path.join(out, "enc.npy"), "<u4", (1, 1, 64, TILE), enc)
