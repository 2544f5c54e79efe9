// The one bit-exact data-format library: value rounding, tile byte layout and
// Bfp shared exponents. Used by the reference model, the loader's host
// push/pop and the simulator's unpacker/packer alike (docs/data-formats.md).
//
// Rounding is the hardware's: round to nearest, ties away from zero.
// Denormals are flushed to signed zero (the Tensix unpacker/packer have no
// denormal path); NaN stays NaN (canonical quiet NaN); overflow saturates to
// infinity in IEEE-like formats (Float16, Float16_b) and to the largest
// magnitude in block formats (Bfp*), Lf8 and Fp8_e4m3 (no infinity there) and
// integer formats. Int8 and Int32 are sign-magnitude, as on the device.
#pragma once
#include "formats/tensor.hpp"
#include "formats/data_format.hpp"

#include <cstdint>
#include <span>

namespace tessera::formats {

using tessera::DataFormat; // also spelt formats::DataFormat

inline constexpr size_t kTileValues = 1024;
inline constexpr size_t kTileHeaderBytes = 16;
inline constexpr size_t kBfpBlock = 16; // values sharing one exponent: one face row

// ---- single values (bit level) -------------------------------------------
uint16_t float32ToFloat16(float v);   // IEEE binary16 bits, RNE ties-away, FTZ
float float16ToFloat32(uint16_t bits);
uint16_t float32ToFloat16b(float v);  // bfloat16 bits, ties-away, FTZ
float float16bToFloat32(uint16_t bits);

// Rounds one value to the nearest value the format represents. Bfp formats
// need their block: use quantize() for them (this treats the value as a block
// of one). Integer formats round ties away and saturate.
float roundToFormat(DataFormat df, float v);

// Rounds values in place exactly as the packer stores them. Bfp formats share
// one exponent per 16 consecutive values starting at values[0]; values.size()
// must then be a multiple of 16.
void quantize(DataFormat df, std::span<float> values);
// Whole tensor: rows are contiguous, so Bfp blocks are aligned 16-value runs of
// a row, i.e. the face rows of its tiles (c must be a multiple of 16).
void quantize(DataFormat df, Tensor& t);
// True when quantize(df, values) would change no bit (values already in the
// format). Reads only; as quantize, Bfp needs a multiple of 16 values.
bool isQuantized(DataFormat df, std::span<const float> values);

// ---- tiles ----------------------------------------------------------------
// Bytes of one tile in L1/DRAM, header and BUDA padding included.
size_t tileBytes(DataFormat df);
// `rowMajor` is one 32x32 tile, row-major. Writes tileBytes(df) bytes: header,
// then (Bfp) the 64 exponents, then the values face by face (f0 f1 / f2 f3),
// each face row-major (raw formats: one row-major run, as BUDA), then zero
// padding.
void packTile(DataFormat df, std::span<const float, kTileValues> rowMajor, std::span<uint8_t> out);
void unpackTile(DataFormat df, std::span<const uint8_t> in, std::span<float, kTileValues> rowMajor);

// ---- tiles smaller than 32x32 (tile_dim; docs/data-formats.md "Tiny tiles") --
// Rows x columns of a tile: 32x32, 32x16 or 1/2/4/8/16 x 32.
struct TileShape {
  uint32_t r = 32, c = 32;
  bool full() const { return r == 32 && c == 32; }
  size_t values() const { return size_t{r} * c; }
  friend bool operator==(const TileShape&, const TileShape&) = default;
};
bool isSupportedTileShape(TileShape s);
// BUDA's size_lib: values + exponent section + 32 bytes of header and padding;
// a tile of fewer than 16 rows in a Bfp format keeps one 16-byte exponent
// section and no padding. Equal to tileBytes(df) for 32x32.
size_t tileBytes(DataFormat df, TileShape s);
// As above with the tile's values in the top-left s.r x s.c corner of a
// 32x32 row-major buffer (the register view): packTile stores only those, in
// faces of min(r,16) x min(c,16) (face rows outer, face columns inner), one
// Bfp exponent per 16 stored values; unpackTile writes them back and zeros
// the rest of the 32x32 buffer.
void packTile(DataFormat df, TileShape s, std::span<const float, kTileValues> rowMajor, std::span<uint8_t> out);
void unpackTile(DataFormat df, TileShape s, std::span<const uint8_t> in, std::span<float, kTileValues> rowMajor);

} // namespace tessera::formats
