#include "formats/packed.hpp"

#include <algorithm>
#include <cstring>

namespace tessera::formats {

namespace {

constexpr size_t kBlock = 16;
constexpr uint32_t kSign = 0x80000000u;
constexpr uint32_t kMag = 0x7FFFFFFFu;

uint32_t bitsAt(const float* p) {
  uint32_t u;
  std::memcpy(&u, p, sizeof u);
  return u;
}

// One block as Block8: exponent byte + one code per value. False when a
// value is not m * 2^(E-133) with m < 128 for the block's largest exponent
// field E (a denormal, inf or NaN, or more significant bits).
bool encodeBlock8(const float* in, size_t n, uint8_t& exponent, uint8_t* codes) {
  uint32_t top = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t mag = bitsAt(in + i) & kMag;
    if (mag == 0) continue;
    const uint32_t field = mag >> 23;
    if (field == 0 || field == 255) return false;
    top = std::max(top, field);
  }
  exponent = static_cast<uint8_t>(top);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = bitsAt(in + i);
    const uint8_t sign = (u & kSign) ? 0x80 : 0;
    const uint32_t mag = u & kMag;
    if (mag == 0) {
      codes[i] = sign;
      continue;
    }
    const uint32_t shift = top - (mag >> 23) + 17;  // significand bits below the 7 kept
    if (shift >= 24) return false;
    const uint32_t sig = (mag & 0x7FFFFFu) | 0x800000u;
    if (sig & ((1u << shift) - 1)) return false;
    codes[i] = static_cast<uint8_t>(sign | (sig >> shift));
  }
  return true;
}

// The float bits of code m (sign + 7-bit magnitude) under exponent field E:
// m * 2^(E-133), built from bits (exact, never a float32 denormal: pack
// only kept values that were normal).
uint32_t decodeBlock8(uint8_t exponent, uint8_t code) {
  const uint32_t sign = (code & 0x80) ? kSign : 0;
  const uint32_t m = code & 0x7Fu;
  if (m == 0) return sign;
  const uint32_t b = 31 - static_cast<uint32_t>(__builtin_clz(m));  // m = 1.f * 2^b
  const uint32_t field = exponent - 6 + b;
  return sign | (field << 23) | ((m << (23 - b)) & 0x7FFFFFu);
}

} // namespace

PackedTensor PackedTensor::pack(const Tensor& t) {
  PackedTensor p;
  p.w = t.w, p.z = t.z, p.r = t.r, p.c = t.c;
  p.rawBits = t.rawBits;
  const size_t n = t.data.size();
  const float* in = t.data.data();
  const size_t blocks = (n + kBlock - 1) / kBlock;

  // Block8: exponents first, then the codes.
  p.bytes_.resize(blocks + n);
  bool fits = true;
  for (size_t b = 0; b < blocks && fits; ++b) {
    const size_t at = b * kBlock, len = std::min(kBlock, n - at);
    fits = encodeBlock8(in + at, len, p.bytes_[b], p.bytes_.data() + blocks + at);
  }
  if (fits) {
    p.layout_ = Layout::Block8;
    return p;
  }
  bool bf16 = true;
  for (size_t i = 0; i < n && bf16; ++i) bf16 = (bitsAt(in + i) & 0xFFFFu) == 0;
  if (bf16) {
    p.layout_ = Layout::Bf16;
    p.bytes_.resize(n * 2);
    for (size_t i = 0; i < n; ++i) {
      const auto hi = static_cast<uint16_t>(bitsAt(in + i) >> 16);
      std::memcpy(p.bytes_.data() + 2 * i, &hi, 2);
    }
  } else {
    p.layout_ = Layout::Float32;
    p.bytes_.resize(n * sizeof(float));
    if (n) std::memcpy(p.bytes_.data(), in, n * sizeof(float));
  }
  p.bytes_.shrink_to_fit();
  return p;
}

void PackedTensor::unpackInto(float* out) const {
  const size_t n = size();
  switch (layout_) {
  case Layout::Float32:
    if (n) std::memcpy(out, bytes_.data(), n * sizeof(float));
    return;
  case Layout::Bf16:
    for (size_t i = 0; i < n; ++i) {
      uint16_t hi;
      std::memcpy(&hi, bytes_.data() + 2 * i, 2);
      const uint32_t u = static_cast<uint32_t>(hi) << 16;
      std::memcpy(out + i, &u, sizeof u);
    }
    return;
  case Layout::Block8: {
    const size_t blocks = (n + kBlock - 1) / kBlock;
    const uint8_t* codes = bytes_.data() + blocks;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t u = decodeBlock8(bytes_[i / kBlock], codes[i]);
      std::memcpy(out + i, &u, sizeof u);
    }
    return;
  }
  }
}

Tensor PackedTensor::unpack() const {
  Tensor t(w, z, r, c);
  unpackInto(t.data.data());
  t.rawBits = rawBits;
  return t;
}

Tensor concatEntries(const std::vector<PackedTensor>& entries, int64_t z, int64_t r, int64_t c) {
  int64_t w = 0;
  for (const PackedTensor& e : entries) w += e.w;
  Tensor out(w, z, r, c);
  size_t at = 0;
  bool words = !entries.empty();
  for (const PackedTensor& e : entries) {
    if (e.size() > out.data.size() - at) break;  // an entry of another shape: never written (EpochIo checks)
    e.unpackInto(out.data.data() + at);
    at += e.size();
    words = words && e.rawBits.size() == e.size();
  }
  if (words)
    for (const PackedTensor& e : entries) out.rawBits.insert(out.rawBits.end(), e.rawBits.begin(), e.rawBits.end());
  return out;
}

} // namespace tessera::formats
