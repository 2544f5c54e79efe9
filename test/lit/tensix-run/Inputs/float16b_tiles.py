"""Writes N Float16_b tiles as lib/formats packs them: a 16-byte header
(word 0 = tile size / 16), 1024 bfloat16 values face by face, zero padding to
2080 bytes. Values are normal numbers (no NaN, no denormals) from a fixed
pattern, so unpack -> Float32 dest -> pack reproduces every bit.

usage: float16b_tiles.py OUT N"""
import struct
import sys

out, n = sys.argv[1], int(sys.argv[2])
data = bytearray()
for t in range(n):
    tile = bytearray(struct.pack("<I", 2080 // 16) + bytes(12))
    for i in range(1024):
        h = (i * 2654435761 + t * 40503) & 0xFFFFFFFF
        sign = (h >> 31) & 1
        exponent = 100 + (h >> 8) % 50
        mantissa = h & 0x7F
        tile += struct.pack("<H", sign << 15 | exponent << 7 | mantissa)
    tile += bytes(2080 - len(tile))
    data += tile
open(out, "wb").write(data)
