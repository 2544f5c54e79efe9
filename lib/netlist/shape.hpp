// Tensor shapes in tiles and how TMs change them. Shared by the validator and
// the later stages (net2pipe builds tile maps on the same arithmetic).
#pragma once
#include "netlist/model.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tessera::netlist {

struct TensorShape {
  int64_t t = 1; // z: number of macroblocks in time
  int64_t r = 1; // rows, in tiles
  int64_t c = 1; // cols, in tiles
  friend bool operator==(const TensorShape&, const TensorShape&) = default;
  std::string str() const; // "[t=1, 2x4 tiles]"
};

// rows = grid.r * mblock.r * ublock.r (cols alike). nullopt when a field is
// missing or the product overflows.
std::optional<TensorShape> opOutputShape(const Op& op);
std::optional<TensorShape> queueShape(const Queue& queue);

// Bytes of one buffer (grid cell) of a queue: its entries of t macroblocks of
// tiles in its format, plus the 32-byte header every BUDA queue buffer
// starts with (rd/wr pointers). Absent or negative fields count as 0 (so an
// invalid netlist can still be summarised); saturates at UINT64_MAX.
uint64_t queueBufferBytes(const Queue& queue);

// Applies TMs in order. On failure returns nullopt, sets `*failed` to the TM
// that cannot apply and `*why` to the reason (e.g. "hslice 3 needs cols
// divisible by 3, got 4").
std::optional<TensorShape> applyTms(TensorShape shape, const std::vector<Tm>& tms, const Tm** failed, std::string* why);

} // namespace tessera::netlist
