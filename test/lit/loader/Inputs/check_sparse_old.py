"""Checks the output of Inputs/sparse-old-attrs.yaml against its encoding.

Usage: check_sparse_old.py DIR  (the loader's --outputs)

The encoding is decoded here with 0 tile-pointer bits and 0 ublock-index
bits (the values BUDA gives the absent sparse_tile_ptr_bits and
sparse_ublock_idx_bits): a strip is a 32-bit word (index in bits 0-29,
last-in-row bit 30, last-in-tile bit 31) and a 16-bit ublock count; a ublock
header is its tile count; a tile entry is (ublock row << 1) | u_kt column and
always names sparse tile 0 (the first tile of the sparse input). Activation
row = strip * u_kt + column.
"""
import sys
import numpy as np

d = sys.argv[1]
sparse = np.load(f"{d}/sp.npy")[0, 0].astype(np.float64)    # [10*32, 32]
act = np.load(f"{d}/act.npy")[0, 0].astype(np.float64)      # [32, 32]
enc = np.load(f"{d}/enc.npy")[0, 0]                         # [32, 32] uint32
out = np.load(f"{d}/out.npy")[0, 0].astype(np.float64)      # [32, 32]
assert enc.dtype == np.uint32, enc.dtype

halves = []
for w in enc.reshape(-1):
    halves += [int(w) & 0xFFFF, int(w) >> 16]
expected = np.zeros((32, 32))
pos, products = 0, 0
while True:
    word = halves[pos] | (halves[pos + 1] << 16)
    strip, last_row = word & 0x3FFFFFFF, (word >> 30) & 1
    n_ub = halves[pos + 2]
    pos += 3
    for _ in range(n_ub):
        count = halves[pos]; pos += 1
        for _ in range(count):
            entry = halves[pos]; pos += 1
            in_r, in_d = entry >> 1, entry & 1
            assert in_r == 0 and in_d == 0, entry       # ublock 1x1, u_kt 1
            row = strip * 1 + in_d
            expected += sparse[0:32, :] @ act[row * 32:(row + 1) * 32, :]
            products += 1
    if last_row:
        break

err = np.abs(out - expected)
bad = np.count_nonzero(err > 0.01 * np.abs(expected) + 0.01)
print(f"old-attrs sparse check: {products} product(s), {bad} value(s) outside tolerance")
sys.exit(1 if bad or products == 0 else 0)
