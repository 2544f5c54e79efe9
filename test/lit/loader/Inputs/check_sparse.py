"""Checks a sparse matmul's output against the encoding, decoded here.

Usage: check_sparse.py DIR  (the loader's --outputs of Inputs/sparse-matmul.yaml)

The encoding is read as BUDA defines it: per grid row, 16-bit fields,
little-endian, in 4096-byte tiles; a strip is a 32-bit word (index in bits
0-29, last-in-row bit 30, last-in-tile bit 31), a 16-bit ublock count, then
per ublock a header (ublock index in the low `ublock_idx_bits`, tile count
above) and per tile (sparse tile index << (16 - ptr_bits)) | (ublock row <<
col_bits) | u_kt column. Output tile rows of a core: ublock * ublock_rt +
row; activation tile row: strip * u_kt + column (over t: m_k * u_kt rows each).
"""
import sys
import numpy as np

M_K, U_KT, T, GRID_R, MBLOCK_M, UBLOCK_RT, PTR_BITS = 4, 2, 2, 2, 2, 2, 5
UB_BITS = PTR_BITS
TILE_BITS = 16 - PTR_BITS
COL_BITS = 1  # bits for u_kt = 2

d = sys.argv[1]
sparse = np.load(f"{d}/sparse.npy")[0, 0]        # [2*32, 6*32]
act = np.load(f"{d}/act.npy")[0]                 # [t, 8*32, 2*32]
enc = np.load(f"{d}/encoding.npy")
out = np.load(f"{d}/out.npy")[0]                 # [t, 2*4*32, 2*32]
assert enc.dtype == np.uint32, enc.dtype
enc = enc[0, 0]                                  # [2*32, 2*32]

def tile(a, r, c):
    return a[r * 32:(r + 1) * 32, c * 32:(c + 1) * 32]

expected = np.zeros_like(out, dtype=np.float64)
rows_per_core = MBLOCK_M * UBLOCK_RT
for cr in range(GRID_R):
    halves = []
    for k in range(2):  # the row's encoding tiles
        words = tile(enc, cr, k).reshape(-1)
        for w in words:
            halves += [int(w) & 0xFFFF, int(w) >> 16]
    pos, tile_base, t = 0, 0, 0
    while t < T:
        word = halves[pos] | (halves[pos + 1] << 16)
        strip, last_row, last_tile = word & 0x3FFFFFFF, (word >> 30) & 1, (word >> 31) & 1
        n_ub = halves[pos + 2]
        pos += 3
        for _ in range(n_ub):
            header = halves[pos]; pos += 1
            ub, count = header & ((1 << UB_BITS) - 1), header >> UB_BITS
            for _ in range(count):
                w = halves[pos]; pos += 1
                s_idx, within = w >> TILE_BITS, w & ((1 << TILE_BITS) - 1)
                in_r, in_d = within >> COL_BITS, within & ((1 << COL_BITS) - 1)
                act_row = strip * U_KT + in_d
                az, ar = divmod(act_row, M_K * U_KT)
                out_row = cr * rows_per_core + ub * UBLOCK_RT + in_r
                s = tile(sparse, cr, s_idx).astype(np.float64)
                a = act[az, ar * 32:(ar + 1) * 32, :].astype(np.float64)
                expected[t, out_row * 32:(out_row + 1) * 32, :] += s @ a
        if last_tile:
            tile_base += 2048
            pos = tile_base
        t += last_row

err = np.abs(out - expected)
tol = 0.02 * np.abs(expected) + 0.02
bad = np.count_nonzero(err > tol)
nonzero = np.count_nonzero(expected)
print(f"sparse check: {nonzero} non-zero expected values, {bad} outside tolerance, max error {err.max():.4g}")
sys.exit(1 if bad or nonzero == 0 else 0)
