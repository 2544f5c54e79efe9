"""Writes N Float16_b tiles in lib/formats' packed layout (16-byte header
whose word 0 is the tile size / 16; 1024 bfloat16 values, four 16x16 faces
in order, row-major in each; zero padding to 2080 bytes).

usage: tiles.py KIND N OUT
  pattern   normal numbers from a hash of (tile, index): no NaN, no denormals
  zero      all zero
  identity  blocks of 3x2 tiles (matmul in1, k-major): the 32x32 identity
            where k == c, zero elsewhere"""
import struct
import sys

TILE_BYTES = 2080


def tile(values):
    out = bytearray(struct.pack("<I", TILE_BYTES // 16) + bytes(12))
    for face in range(4):
        row0, col0 = 16 * (face // 2), 16 * (face % 2)
        for r in range(16):
            for c in range(16):
                out += struct.pack("<H", values[(row0 + r) * 32 + col0 + c])
    return out + bytes(TILE_BYTES - len(out))


def pattern(t):
    vals = []
    for i in range(1024):
        h = (i * 40503 + t * 2246822519 + 12345) & 0xFFFFFFFF
        vals.append((h >> 31) << 15 | (110 + (h >> 9) % 30) << 7 | (h & 0x7F))
    return vals


kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
zero = [0] * 1024
ident = [0x3F80 if r == c else 0 for r in range(32) for c in range(32)]
data = bytearray()
for t in range(n):
    if kind == "pattern":
        data += tile(pattern(t))
    elif kind == "zero":
        data += tile(zero)
    elif kind == "identity":
        k, c = (t % 6) // 2, t % 2
        data += tile(ident if k == c else zero)
    else:
        sys.exit("unknown kind " + kind)
open(path, "wb").write(data)
