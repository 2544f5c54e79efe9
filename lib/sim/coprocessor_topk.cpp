// The TOPK instruction's steps (contract::kOpTopk): the compare-exchange
// network of BUDA's topk on one window of dest, row by row. The reference
// (lib/golden special_ops, topkNetwork) runs the same network over whole
// rows; it is not called here, so it stays an independent check.
#include "sim/coprocessor_math.hpp"

#include "device/device_contract.h"

#include <utility>

namespace tessera::sim::copmath {

namespace {

namespace c = tessera::contract;

// One row of the window: position p is column p % 32 of tile p / 32.
struct Row {
  Tile* const* values;
  Tile* const* indices;
  size_t row;
  float& v(size_t p) const { return (*values[p / kDim])[row * kDim + p % kDim]; }
  float& i(size_t p) const { return (*indices[p / kDim])[row * kDim + p % kDim]; }
};

// Equal values still swap when both are negative (descending) or both
// non-negative (ascending), moving their indices, as the device's network
// does; `force` inverts the decision (the k >= 64 reversed runs).
void compareExchange(const Row& r, size_t lo, size_t hi, bool descending, bool force) {
  const float l = r.v(lo), h = r.v(hi);
  const bool swap = descending ? (h > l || (h == l && h < 0.0f && l < 0.0f))
                               : (h < l || (h == l && h >= 0.0f && l >= 0.0f));
  if (swap != force) {
    std::swap(r.v(lo), r.v(hi));
    std::swap(r.i(lo), r.i(hi));
  }
}

void bitonicMerge(const Row& r, size_t base, size_t len, bool descending, bool force) {
  for (size_t dist = len / 2; dist >= 1; dist /= 2)
    for (size_t start = base; start < base + len; start += 2 * dist)
      for (size_t j = 0; j < dist; ++j) compareExchange(r, start + j, start + j + dist, descending, force);
}

uint32_t log2Of(size_t v) {
  uint32_t n = 0;
  while ((size_t{1} << n) < v) ++n;
  return n;
}

} // namespace

int topkStep(uint32_t step, bool twoTiles, uint32_t arg, Tile* const values[2], Tile* const indices[2]) {
  const size_t width = twoTiles ? 2 * kDim : kDim;
  const size_t start = arg & 0xFFFFu;
  const size_t a = size_t{1} << ((arg >> c::kTopkLogAShift) & 0xFu);
  const size_t b = size_t{1} << ((arg >> c::kTopkLogBShift) & 0xFu);
  if (arg >> 24) return -1;
  if (start % kDim != 0) return -1;
  int stages = 0;
  switch (step) {
  case c::kTopkSort: // a = k
    if (a > width || (arg >> c::kTopkLogBShift & 0xFu) != 0) return -1;
    for (size_t len = 2; len <= a; len *= 2) stages += static_cast<int>(log2Of(len));
    break;
  case c::kTopkCompare: // a = count, b = dist
    if (2 * b > width || a > b) return -1;
    stages = 1;
    break;
  case c::kTopkMerge: // a = len, b = stride
    if (a > b || b > width || a < 2) return -1;
    stages = static_cast<int>(log2Of(a));
    break;
  case c::kTopkZeroTail: // a = k
    if ((arg >> c::kTopkLogBShift & 0xFu) != 0) return -1;
    break;
  default: return -1;
  }
  for (size_t row = 0; row < kDim; ++row) {
    const Row r{values, indices, row};
    switch (step) {
    case c::kTopkSort: {
      const size_t k = a;
      for (size_t len = 2, phase = 0; len <= k; len *= 2, ++phase)
        for (size_t base = 0; base < width; base += len) {
          const size_t global = start + base;
          const bool descending = (global / len) % 2 == 0;
          const bool force = k >= 64 && phase >= 3 && phase < 5 && global % 128 >= 64;
          bitonicMerge(r, base, len, descending, force);
        }
      break;
    }
    case c::kTopkCompare:
      for (size_t base = 0; base < width; base += 2 * b)
        for (size_t j = 0; j < a; ++j) compareExchange(r, base + j, base + j + b, true, false);
      break;
    case c::kTopkMerge:
      for (size_t base = 0; base < width; base += b) bitonicMerge(r, base, a, ((start + base) / b) % 2 == 0, false);
      break;
    case c::kTopkZeroTail:
      for (size_t p = a; p < width; ++p) r.v(p) = r.i(p) = 0.0f;
      break;
    }
  }
  return stages;
}

} // namespace tessera::sim::copmath
