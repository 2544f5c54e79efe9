// Tile maps. Every TM is stored with its input and output shapes; an operand
// tile is traced back through the steps in reverse (each inverse is the
// index mapping of lib/golden/tm.cpp, in whole tiles).
#include "pipe/tile_map.hpp"

#include <algorithm>

namespace tessera::pipe {

std::optional<OperandMap> OperandMap::build(TensorShape producer, const std::optional<netlist::Pad>& unpad,
                                            const std::vector<netlist::Tm>& tms, const std::optional<netlist::Pad>& pad,
                                            std::string* why) {
  OperandMap m;
  m.producer_ = producer;
  TensorShape s = producer;
  auto fail = [&](std::string reason) -> std::optional<OperandMap> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  auto push = [&](Kind kind, int64_t factor, double value, TensorShape out) {
    m.steps_.push_back(Step{kind, factor, value, s, out});
    s = out;
  };
  if (unpad && (unpad->rt > 0 || unpad->ct > 0)) {
    if (unpad->rt < 0 || unpad->ct < 0 || unpad->rt >= s.r || unpad->ct >= s.c)
      return fail("unpad " + std::to_string(unpad->rt) + "x" + std::to_string(unpad->ct) + " tiles from " + s.str() +
                  " leaves no tile");
    push(Kind::Unpad, 1, 0.0, TensorShape{s.t, s.r - unpad->rt, s.c - unpad->ct});
  }
  for (const netlist::Tm& tm : tms) {
    const int64_t f = tm.factor;
    using netlist::TmKind;
    switch (tm.kind) {
    case TmKind::Broadcast:
      if (f < 1) return fail("broadcast factor " + std::to_string(f));
      if (tm.dim == 'r') push(Kind::BcastR, f, 0.0, {s.t, s.r * f, s.c});
      else if (tm.dim == 'c') push(Kind::BcastC, f, 0.0, {s.t, s.r, s.c * f});
      else push(Kind::BcastZ, f, 0.0, {s.t * f, s.r, s.c});
      break;
    case TmKind::Hslice:
      if (f < 1 || s.c % f != 0) return fail("hslice " + std::to_string(f) + " of " + s.str());
      push(Kind::Hslice, f, 0.0, {s.t * f, s.r, s.c / f});
      break;
    case TmKind::Vslice:
      if (f < 1 || s.r % f != 0) return fail("vslice " + std::to_string(f) + " of " + s.str());
      push(Kind::Vslice, f, 0.0, {s.t * f, s.r / f, s.c});
      break;
    case TmKind::Hstack:
      if (f < 1 || s.t % f != 0) return fail("hstack " + std::to_string(f) + " of " + s.str());
      push(Kind::Hstack, f, 0.0, {s.t / f, s.r, s.c * f});
      break;
    case TmKind::Vstack:
      if (f < 1 || s.t % f != 0) return fail("vstack " + std::to_string(f) + " of " + s.str());
      push(Kind::Vstack, f, 0.0, {s.t / f, s.r * f, s.c});
      break;
    case TmKind::Transpose: push(Kind::Transpose, 1, 0.0, {s.t, s.c, s.r}); break;
    case TmKind::TileBroadcast: break; // inside each tile: the unpacker's job
    case TmKind::Pad:
      if (tm.pad.rt < 0 || tm.pad.ct < 0) return fail("pad with a negative tile count");
      if (tm.pad.rt > 0 || tm.pad.ct > 0) push(Kind::Pad, 1, tm.pad.padValue, {s.t, s.r + tm.pad.rt, s.c + tm.pad.ct});
      break;
    }
  }
  if (pad && (pad->rt > 0 || pad->ct > 0)) {
    if (pad->rt < 0 || pad->ct < 0) return fail("pad with a negative tile count");
    push(Kind::Pad, 1, pad->padValue, {s.t, s.r + pad->rt, s.c + pad->ct});
  }
  m.operand_ = s;
  return m;
}

TileSource OperandMap::source(TileRef at) const {
  TileSource src;
  TileRef p = at;
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    const Step& st = *it;
    const TensorShape& in = st.in;
    switch (st.kind) {
    case Kind::BcastR: p.r %= in.r; break;
    case Kind::BcastC: p.c %= in.c; break;
    case Kind::BcastZ: p.t %= in.t; break;
    case Kind::Hslice: // out slice z*n+s, col c <- in slice z, col s*(C/n)+c
      p = TileRef{p.t / st.factor, p.r, (p.t % st.factor) * st.out.c + p.c};
      break;
    case Kind::Hstack: // out slice z, col s*C+c <- in slice z*n+s, col c
      p = TileRef{p.t * st.factor + p.c / in.c, p.r, p.c % in.c};
      break;
    case Kind::Vslice: // out slice z*n+s, row r <- in slice z, row s*(R/n)+r
      p = TileRef{p.t / st.factor, (p.t % st.factor) * st.out.r + p.r, p.c};
      break;
    case Kind::Vstack: // out slice z, row s*R+r <- in slice z*n+s, row r
      p = TileRef{p.t * st.factor + p.r / in.r, p.r % in.r, p.c};
      break;
    case Kind::Transpose: std::swap(p.r, p.c); break;
    case Kind::Pad:
      if (p.r >= in.r || p.c >= in.c) {
        src.padding = true;
        src.padValue = st.padValue;
        return src;
      }
      break;
    case Kind::Unpad: break; // the kept tiles keep their positions
    }
  }
  src.tile = p;
  return src;
}

TileLocation locateTile(const formats::Blocking& b, TileRef tile) {
  const int64_t rowsPerCore = b.mblockR * b.ublockR, colsPerCore = b.mblockC * b.ublockC;
  TileLocation loc;
  loc.coreR = tile.r / rowsPerCore;
  loc.coreC = tile.c / colsPerCore;
  const int64_t rr = tile.r % rowsPerCore, cc = tile.c % colsPerCore;
  const int64_t ubR = rr / b.ublockR, tr = rr % b.ublockR, ubC = cc / b.ublockC, tc = cc % b.ublockC;
  const int64_t ublock = b.order == netlist::UblockOrder::R ? ubR * b.mblockC + ubC : ubC * b.mblockR + ubR;
  const int64_t ublockTiles = b.ublockR * b.ublockC;
  loc.index = tile.t * rowsPerCore * colsPerCore + ublock * ublockTiles + tr * b.ublockC + tc;
  return loc;
}

std::vector<TileRef> consumerTiles(const KernelLayout& l, int64_t rowOrigin, int64_t colOrigin) {
  formats::Blocking b;
  b.t = l.t;
  b.mblockR = l.mblock.r;
  b.mblockC = l.mblock.c;
  b.ublockR = l.ublock.r;
  b.ublockC = l.ublock.c;
  b.order = l.order;
  std::vector<TileRef> out;
  for (const formats::TileCoord& tc : formats::coreTileOrder(b, 0, 0))
    out.push_back(TileRef{tc.t, tc.rt + rowOrigin, tc.ct + colOrigin});
  return out;
}

std::optional<Origin> coreOrigin(const KernelLayout& layout, const TensorShape& operand, int64_t gridR, int64_t gridC,
                                 int64_t coreR, int64_t coreC, std::string* why) {
  auto along = [&](int64_t extent, int64_t total, int64_t grid, int64_t core, const char* what) -> std::optional<int64_t> {
    if (extent * grid == total) return core * extent;
    if (extent == total) return 0;
    if (why)
      *why = std::string("the kernel reads ") + std::to_string(extent) + " tile " + what + " per core on a grid of " +
             std::to_string(grid) + " but the operand has " + std::to_string(total);
    return std::nullopt;
  };
  if (layout.t != operand.t) {
    if (why)
      *why = "the kernel reads " + std::to_string(layout.t) + " t slices per entry but the operand has " +
             std::to_string(operand.t);
    return std::nullopt;
  }
  auto r = along(layout.rowTiles(), operand.r, gridR, coreR, "rows");
  if (!r) return std::nullopt;
  auto c = along(layout.colTiles(), operand.c, gridC, coreC, "columns");
  if (!c) return std::nullopt;
  return Origin{*r, *c};
}

std::vector<Run> toRuns(const std::vector<SourceTile>& tiles) {
  std::vector<Run> runs;
  for (const SourceTile& t : tiles) {
    if (!runs.empty() && runs.back().source == t.source && runs.back().start + runs.back().length == t.index)
      ++runs.back().length;
    else
      runs.push_back(Run{t.source, t.index, 1});
  }
  return runs;
}

int64_t reorderWindow(const std::vector<int64_t>& order) {
  if (order.empty()) return 0;
  const int64_t tiles = *std::max_element(order.begin(), order.end()) + 1;
  // last[j]: the last position reading tile j (-1: never read; free at once).
  std::vector<int64_t> last(static_cast<size_t>(tiles), -1);
  for (size_t i = 0; i < order.size(); ++i) last[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  // Before position i the buffer has freed tiles [0, firstLive): a tile is
  // freed once it and every earlier tile have had their last read.
  int64_t firstLive = 0, window = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    while (firstLive < tiles && last[static_cast<size_t>(firstLive)] < static_cast<int64_t>(i)) ++firstLive;
    window = std::max(window, order[i] - firstLive + 1);
  }
  return window;
}

} // namespace tessera::pipe
