// A tensor kept in fewer bytes when its values allow it, without losing a
// bit: the loader logs every entry a run writes (for the check against the
// reference and --outputs), and a large netlist writes gigabytes of entries
// that are mostly Bfp8_b or Float16_b values held as 4-byte floats.
//
// Three layouts, the smallest that reproduces every value exactly:
//  - Block8: per 16 values one exponent byte and a sign + 7-bit magnitude
//    per value (Bfp8_b-like, 1.06 bytes per value). Any float block whose
//    values are all m * 2^(E-6), m < 128, fits, whatever its data format;
//  - Bf16: the top 16 bits of each float (values whose low 16 bits are 0:
//    Float16_b, Bfp4_b/Bfp2_b, Int8 ...), 2 bytes per value;
//  - Float32: the floats as they are.
// pack() checks each block as it encodes it, so unpack() gives back the
// same bits (signed zeros and NaN payloads included).
#pragma once
#include "formats/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::formats {

class PackedTensor {
public:
  enum class Layout : uint8_t { Float32, Bf16, Block8 };

  PackedTensor() = default;
  static PackedTensor pack(const Tensor& t);

  Tensor unpack() const;
  // Writes the values (size() floats) to `out`.
  void unpackInto(float* out) const;

  int64_t w = 1, z = 1, r = 0, c = 0;
  size_t size() const { return static_cast<size_t>(w * z * r * c); }
  Layout layout() const { return layout_; }
  size_t bytes() const { return bytes_.size() + rawBits.size() * sizeof(uint32_t); } // storage, for reports and tests
  std::vector<uint32_t> rawBits; // Tensor::rawBits, kept as they are

private:
  Layout layout_ = Layout::Float32;
  std::vector<uint8_t> bytes_;
};

// The entries one after the other, as formats::concatEntries does for
// tensors: [sum w_i][z][r][c], exact RawUInt32 words along when every entry
// has them.
Tensor concatEntries(const std::vector<PackedTensor>& entries, int64_t z, int64_t r, int64_t c);

} // namespace tessera::formats
