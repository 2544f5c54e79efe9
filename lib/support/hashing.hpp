// Hashes, header-only, checked against published test vectors in
// test/unit/hashing_test.cpp.
// - Fnv1a64: 64-bit FNV-1a, a fast non-cryptographic hash for names that must
//   be stable across runs and machines (kernel directory names, per-queue
//   stimulus seeds).
// - Sha256 (FIPS 180-4, written from section 6.2 of the standard): hlkc's
//   cache keys, where a collision would reuse a wrong binary.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::support {

class Fnv1a64 {
public:
  static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  static constexpr uint64_t kPrime = 0x100000001b3ull;

  void update(std::string_view bytes) {
    for (unsigned char ch : bytes) updateByte(ch);
  }
  void updateByte(uint8_t byte) {
    h_ ^= byte;
    h_ *= kPrime;
  }
  uint64_t value() const { return h_; }

  static uint64_t of(std::string_view bytes) {
    Fnv1a64 h;
    h.update(bytes);
    return h.value();
  }

private:
  uint64_t h_ = kOffsetBasis;
};

class Sha256 {
public:
  Sha256() { reset(); }

  void reset() {
    static constexpr uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                          0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    for (int i = 0; i < 8; ++i) h_[i] = kInit[i];
    bytes_ = 0;
    used_ = 0;
  }

  void update(const void* data, size_t size) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    bytes_ += size;
    while (size > 0) {
      size_t take = 64 - used_;
      if (take > size) take = size;
      for (size_t i = 0; i < take; ++i) block_[used_ + i] = p[i];
      used_ += take;
      p += take;
      size -= take;
      if (used_ == 64) {
        compress(block_);
        used_ = 0;
      }
    }
  }
  void update(std::string_view s) { update(s.data(), s.size()); }

  // Appends a length-prefixed field: keys built from several parts cannot
  // collide by moving bytes from one part to the next.
  void field(std::string_view s) {
    uint8_t len[8];
    uint64_t n = s.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
    update(len, 8);
    update(s);
  }

  // The digest as 64 lowercase hex digits. Ends this hash (reset() to reuse).
  std::string hexDigest() {
    uint64_t bits = bytes_ * 8;
    uint8_t pad = 0x80;
    update(&pad, 1);
    uint8_t zero = 0;
    while (used_ != 56) update(&zero, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
    update(len, 8);
    static const char* kHex = "0123456789abcdef";
    std::string s;
    for (uint32_t w : h_)
      for (int shift = 28; shift >= 0; shift -= 4) s += kHex[(w >> shift) & 0xF];
    return s;
  }

  static std::string hex(std::string_view data) {
    Sha256 h;
    h.update(data);
    return h.hexDigest();
  }

private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress(const uint8_t* block) {
    static constexpr uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int t = 0; t < 16; ++t)
      w[t] = uint32_t(block[4 * t]) << 24 | uint32_t(block[4 * t + 1]) << 16 | uint32_t(block[4 * t + 2]) << 8 |
             uint32_t(block[4 * t + 3]);
    for (int t = 16; t < 64; ++t) {
      uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int t = 0; t < 64; ++t) {
      uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[t] + w[t];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h_[0] += a, h_[1] += b, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
  }

  uint32_t h_[8];
  uint8_t block_[64];
  uint64_t bytes_;
  size_t used_;
};

} // namespace tessera::support
