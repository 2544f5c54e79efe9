#include "netlist/shape.hpp"

#include <limits>

namespace tessera::netlist {

namespace {
constexpr int64_t kMaxDim = int64_t{1} << 40; // far beyond any device; keeps products overflow-free

std::optional<TensorShape> blockShape(const Field<int64_t>& t, const Field<Dim2>& grid, const Field<Dim2>& mblock,
                                      const Field<Dim2>& ublock) {
  if (!t.present() || !grid.present() || !mblock.present() || !ublock.present()) return std::nullopt;
  for (int64_t v : {t.value, grid.value.r, grid.value.c, mblock.value.r, mblock.value.c, ublock.value.r, ublock.value.c})
    if (v < 1 || v > (int64_t{1} << 20)) return std::nullopt;
  return TensorShape{t.value, grid.value.r * mblock.value.r * ublock.value.r, grid.value.c * mblock.value.c * ublock.value.c};
}
} // namespace

std::string TensorShape::str() const {
  return "[t=" + std::to_string(t) + ", " + std::to_string(r) + "x" + std::to_string(c) + " tiles]";
}

std::optional<TensorShape> opOutputShape(const Op& op) { return blockShape(op.t, op.gridSize, op.mblock, op.ublock); }
std::optional<TensorShape> queueShape(const Queue& queue) {
  return blockShape(queue.t, queue.gridSize, queue.mblock, queue.ublock);
}

uint64_t queueBufferBytes(const Queue& q) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max(), kHeaderBytes = 32;
  auto mul = [](uint64_t a, uint64_t b) {
    const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    return p > kMax ? kMax : static_cast<uint64_t>(p);
  };
  auto count = [](const Field<int64_t>& f) -> uint64_t { return f.present() && f.value > 0 ? static_cast<uint64_t>(f.value) : 0; };
  auto area = [&](const Field<Dim2>& f) -> uint64_t {
    if (!f.present() || f.value.r < 0 || f.value.c < 0) return 0;
    return mul(static_cast<uint64_t>(f.value.r), static_cast<uint64_t>(f.value.c));
  };
  const uint64_t tiles = mul(mul(count(q.entries), count(q.t)), mul(area(q.mblock), area(q.ublock)));
  const uint64_t bytes = mul(tiles, q.df.present() ? tileSizeBytes(q.df.value) : 0);
  return bytes > kMax - kHeaderBytes ? kMax : bytes + kHeaderBytes;
}

std::optional<TensorShape> applyTms(TensorShape s, const std::vector<Tm>& tms, const Tm** failed, std::string* why) {
  auto fail = [&](const Tm& tm, std::string reason) -> std::optional<TensorShape> {
    if (failed) *failed = &tm;
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  for (const Tm& tm : tms) {
    std::string name(tmKindName(tm.kind));
    std::string f = std::to_string(tm.factor);
    switch (tm.kind) {
    case TmKind::Broadcast: {
      if (tm.factor < 1) return fail(tm, "broadcast factor must be at least 1, got " + f);
      int64_t& d = tm.dim == 'r' ? s.r : tm.dim == 'c' ? s.c : s.t;
      if (d > kMaxDim / tm.factor) return fail(tm, "broadcast factor " + f + " is too large");
      d *= tm.factor;
      break;
    }
    case TmKind::Hslice:
    case TmKind::Vslice: {
      int64_t& d = tm.kind == TmKind::Hslice ? s.c : s.r;
      const char* dimName = tm.kind == TmKind::Hslice ? "cols" : "rows";
      if (tm.factor < 1) return fail(tm, name + " factor must be at least 1, got " + f);
      if (d % tm.factor != 0)
        return fail(tm, name + " " + f + " needs " + dimName + " divisible by " + f + ", got " + std::to_string(d));
      if (s.t > kMaxDim / tm.factor) return fail(tm, name + " factor " + f + " is too large");
      d /= tm.factor;
      s.t *= tm.factor;
      break;
    }
    case TmKind::Hstack:
    case TmKind::Vstack: {
      int64_t& d = tm.kind == TmKind::Hstack ? s.c : s.r;
      if (tm.factor < 1) return fail(tm, name + " factor must be at least 1, got " + f);
      if (s.t % tm.factor != 0)
        return fail(tm, name + " " + f + " needs t divisible by " + f + ", got t=" + std::to_string(s.t));
      if (d > kMaxDim / tm.factor) return fail(tm, name + " factor " + f + " is too large");
      s.t /= tm.factor;
      d *= tm.factor;
      break;
    }
    case TmKind::Transpose:
      std::swap(s.r, s.c);
      break;
    case TmKind::TileBroadcast:
      break; // within a tile: the shape in tiles is unchanged
    case TmKind::Pad:
      if (tm.pad.rt < 0 || tm.pad.ct < 0 || tm.pad.rt > kMaxDim || tm.pad.ct > kMaxDim)
        return fail(tm, "pad tile counts must not be negative");
      s.r += tm.pad.rt;
      s.c += tm.pad.ct;
      break;
    }
  }
  return s;
}

} // namespace tessera::netlist
