// A host-side tensor of values: what queues hold between epochs and what the
// reference model computes on. Values are floats already rounded to the data
// format they were last stored in (see formats.hpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::formats {

inline constexpr int64_t kTileDim = 32; // a tile is 32x32 values
inline constexpr int64_t kFaceDim = 16; // made of four 16x16 faces

// Row-major [w][z][r][c]. `w` is the entry (input) index when several entries
// are stacked, `z` is BUDA's t, `r`/`c` are in values (tiles * 32).
struct Tensor {
  int64_t w = 1, z = 1, r = 0, c = 0;
  std::vector<float> data;
  // Exact bit patterns of RawUInt32 data when known (same order as `data`),
  // else empty. Floats hold integers exactly only below 2^24; sparse-matmul
  // encodings use all 32 bits. Whatever rebuilds `data` drops these.
  std::vector<uint32_t> rawBits;

  Tensor() = default;
  Tensor(int64_t w_, int64_t z_, int64_t r_, int64_t c_, float fill = 0.0f)
      : w(w_), z(z_), r(r_), c(c_), data(static_cast<size_t>(w_ * z_ * r_ * c_), fill) {}

  // The shape with no values yet (data reserved, empty): for builders that
  // append every value, so a large tensor is not zero-filled first.
  static Tensor reserved(int64_t w_, int64_t z_, int64_t r_, int64_t c_) {
    Tensor t;
    t.w = w_, t.z = z_, t.r = r_, t.c = c_;
    t.data.reserve(static_cast<size_t>(w_ * z_ * r_ * c_));
    return t;
  }

  size_t size() const { return data.size(); }
  size_t index(int64_t wi, int64_t zi, int64_t ri, int64_t ci) const {
    return static_cast<size_t>(((wi * z + zi) * r + ri) * c + ci);
  }
  float& at(int64_t wi, int64_t zi, int64_t ri, int64_t ci) { return data[index(wi, zi, ri, ci)]; }
  float at(int64_t wi, int64_t zi, int64_t ri, int64_t ci) const { return data[index(wi, zi, ri, ci)]; }
  // One [r][c] matrix (w, z fixed), contiguous.
  float* matrix(int64_t wi, int64_t zi) { return data.data() + index(wi, zi, 0, 0); }
  const float* matrix(int64_t wi, int64_t zi) const { return data.data() + index(wi, zi, 0, 0); }
  bool sameShape(const Tensor& o) const { return w == o.w && z == o.z && r == o.r && c == o.c; }
};

// Entries [first, first + count) of t, as a [count][z][r][c] tensor (exact
// RawUInt32 words included when t has them).
inline Tensor entryRange(const Tensor& t, int64_t first, int64_t count) {
  Tensor out = Tensor::reserved(count, t.z, t.r, t.c);
  const auto per = static_cast<std::ptrdiff_t>(t.z * t.r * t.c);
  out.data.assign(t.data.begin() + first * per, t.data.begin() + (first + count) * per);
  if (!t.rawBits.empty())
    out.rawBits.assign(t.rawBits.begin() + first * per, t.rawBits.begin() + (first + count) * per);
  return out;
}

// The parts, each [w_i][z][r][c] (z, r, c given: every part must have
// them), one after the other: [sum w_i][z][r][c]. Exact RawUInt32 words
// travel along when every part has them.
inline Tensor concatEntries(const std::vector<const Tensor*>& parts, int64_t z, int64_t r, int64_t c) {
  int64_t w = 0;
  for (const Tensor* p : parts) w += p->w;
  Tensor out = Tensor::reserved(w, z, r, c);
  bool words = !parts.empty();
  for (const Tensor* p : parts) {
    out.data.insert(out.data.end(), p->data.begin(), p->data.end());
    words = words && p->rawBits.size() == p->data.size();
  }
  out.data.resize(static_cast<size_t>(w * z * r * c));  // as before when a part's values were short
  if (words)
    for (const Tensor* p : parts) out.rawBits.insert(out.rawBits.end(), p->rawBits.begin(), p->rawBits.end());
  return out;
}

} // namespace tessera::formats
