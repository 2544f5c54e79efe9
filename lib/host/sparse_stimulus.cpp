// Sparse matmul inputs. The encoding layout (strip word, ublock headers, tile
// indices, 16-bit fields little-endian) is BUDA's; the choice of non-zero
// strips, ublocks and tiles follows its `sparse_encoding` stimulus in spirit
// (strips advance within each t, at least one non-zero ublock per non-zero
// strip and one tile per ublock) with our reproducible random numbers.
#include "host/sparse_stimulus.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>

namespace tessera::host {
namespace {

using formats::Tensor;
constexpr int64_t kTile = formats::kTileDim;

std::string str(int64_t v) { return std::to_string(v); }

double unitDraw(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1p-53; }
int64_t drawInt(std::mt19937_64& g, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(g() % static_cast<uint64_t>(hi - lo + 1));
}

struct TileRef {
  uint16_t uniqueIndex, withinUblock;
};
struct Ublock {
  uint16_t index;
  std::vector<TileRef> tiles;
};
struct Strip {
  uint32_t index = 0;
  bool lastInRow = false, lastInTile = false;
  std::vector<Ublock> ublocks;
  int64_t bytes() const {
    int64_t n = 4 + 2; // strip word, ublock count
    for (const Ublock& u : ublocks) n += 2 + 2 * static_cast<int64_t>(u.tiles.size());
    return n;
  }
};

int colBits(int64_t uKt) {
  int bits = 1;
  while (((uKt - 1) >> bits) > 0) ++bits;
  return bits;
}

// The strips of one grid row, drawn with the given zero frequencies.
std::vector<Strip> drawStrips(const SparseOpShape& op, const EncodingFrequencies& f, std::mt19937_64& g,
                              int64_t& uniqueCursor) {
  // Strips per t: m_k, unless the activations hold fewer (then m_k cannot be
  // what the encoding indexes; only strips that read real rows are drawn).
  const int64_t perT = op.actStrips > 0 ? std::min(op.mK, op.actStrips) : op.mK;
  const int64_t groupWidth = (perT + op.outputT - 1) / op.outputT;
  const int cBits = colBits(op.uKt);
  // Entries name sparse tiles by a tilePtrBits-bit pointer.
  const int64_t addressable = std::min<int64_t>(op.numSparseTiles, int64_t{1} << op.tilePtrBits);
  std::vector<Strip> strips;
  int64_t lowerBound = 0; // strips of a row never go back
  for (int64_t t = 0; t < op.outputT; ++t) {
    bool empty = true;
    for (int64_t s = 0; s < perT; ++s) {
      if (s < lowerBound || s >= (t + 1) * groupWidth || unitDraw(g) <= f.zeroStrip) continue;
      Strip strip;
      strip.index = static_cast<uint32_t>(op.actT == 1 ? s : perT * t + s);
      const int64_t keptUblock = drawInt(g, 0, op.mblockM - 1);
      for (int64_t u = 0; u < op.mblockM; ++u) {
        if (u != keptUblock && unitDraw(g) <= f.zeroUblock) continue;
        Ublock ub{static_cast<uint16_t>(u), {}};
        const int64_t keptR = drawInt(g, 0, op.ublockRt - 1), keptC = drawInt(g, 0, op.uKt - 1);
        for (int64_t r = 0; r < op.ublockRt; ++r)
          for (int64_t c = 0; c < op.uKt; ++c) {
            if ((r != keptR || c != keptC) && unitDraw(g) <= f.zeroTile) continue;
            ub.tiles.push_back({static_cast<uint16_t>(uniqueCursor),
                                static_cast<uint16_t>((r << cBits) | c)});
            uniqueCursor = (uniqueCursor + 1) % addressable;
          }
        strip.ublocks.push_back(std::move(ub));
      }
      strips.push_back(std::move(strip));
      lowerBound = s;
      empty = false;
    }
    // Every t needs a strip to end it: an empty one repeats the last index.
    if (empty) {
      Strip strip;
      strip.index = strips.empty() ? 0 : strips.back().index;
      strips.push_back(strip);
    }
    strips.back().lastInRow = true;
  }
  return strips;
}

void push16(std::vector<uint8_t>& bytes, uint32_t v) {
  bytes.push_back(static_cast<uint8_t>(v & 0xFF));
  bytes.push_back(static_cast<uint8_t>((v >> 8) & 0xFF));
}

// Packs strips into encoding tiles of `tileBytes`; false when a strip alone
// exceeds a tile or the row needs more than numIndexTiles tiles.
bool encodeRow(const SparseOpShape& op, std::vector<Strip>& strips, int64_t tileBytes,
               std::vector<std::vector<uint8_t>>& tiles) {
  tiles.clear();
  int64_t used = 0;
  for (size_t i = 0; i < strips.size(); ++i) {
    const int64_t b = strips[i].bytes();
    if (b > tileBytes) return false;
    if (i > 0 && used + b > tileBytes) {
      strips[i - 1].lastInTile = true;
      used = 0;
    }
    used += b;
  }
  strips.back().lastInTile = true;

  const int tileIndexBits = 16 - op.tilePtrBits;
  const uint32_t maxTiles = 1u << (16 - op.ublockIdxBits);
  std::vector<uint8_t> cur;
  for (const Strip& s : strips) {
    const uint32_t word = (s.index & ((1u << 30) - 1)) | (s.lastInRow ? 1u << 30 : 0) | (s.lastInTile ? 1u << 31 : 0);
    push16(cur, word & 0xFFFF);
    push16(cur, word >> 16);
    push16(cur, static_cast<uint32_t>(s.ublocks.size()));
    for (const Ublock& u : s.ublocks) {
      // A full ublock's tile count does not fit its field and is stored as 0.
      const uint32_t count = static_cast<uint32_t>(u.tiles.size()) == maxTiles ? 0 : static_cast<uint32_t>(u.tiles.size());
      push16(cur, (count << op.ublockIdxBits) | (u.index & ((1u << op.ublockIdxBits) - 1)));
      for (const TileRef& t : u.tiles)
        push16(cur, (uint32_t{t.uniqueIndex} << tileIndexBits) | (t.withinUblock & ((1u << tileIndexBits) - 1)));
    }
    if (s.lastInTile) {
      cur.resize(static_cast<size_t>(tileBytes), 0);
      tiles.push_back(std::move(cur));
      cur.clear();
    }
  }
  return static_cast<int64_t>(tiles.size()) <= op.numIndexTiles;
}

int64_t intAttr(const netlist::Field<int64_t>& f, int64_t fallback) { return f.present() ? f.value : fallback; }

int64_t producerT(const netlist::Netlist& nl, const std::string& name) {
  for (const auto& q : nl.queues)
    if (q.name == name) return q.t.value;
  for (const auto& g : nl.graphs)
    for (const auto& o : g.ops)
      if (o.name == name) return o.t.value;
  return 1;
}

// Tile rows per t of what `name` (a queue or op) produces; 0 when unknown.
int64_t producerRowTiles(const netlist::Netlist& nl, const std::string& name) {
  auto rows = [](const auto& x) { return x.gridSize.value.r * x.mblock.value.r * x.ublock.value.r; };
  for (const auto& q : nl.queues)
    if (q.name == name) return rows(q);
  for (const auto& g : nl.graphs)
    for (const auto& o : g.ops)
      if (o.name == name) return rows(o);
  return 0;
}

} // namespace

const netlist::Op* findOp(const netlist::Netlist& nl, const std::string& name) {
  for (const auto& g : nl.graphs)
    for (const auto& o : g.ops)
      if (o.name == name) return &o;
  return nullptr;
}

const netlist::Op* sparseConsumer(const netlist::Netlist& nl, const std::string& queue, size_t inputIndex) {
  for (const auto& g : nl.graphs)
    for (const auto& o : g.ops)
      if (o.type.value == "matmul" && o.attributes.identity.value && o.inputs.size() > inputIndex &&
          o.inputs[inputIndex].name == queue)
        return &o;
  return nullptr;
}

SparseOpShape sparseOpShape(const netlist::Netlist& nl, const netlist::Op& op) {
  const auto& a = op.attributes;
  auto need = [&](const netlist::Field<int64_t>& f, const char* name, int64_t lo, int64_t hi) {
    if (!f.present() || f.value < lo || f.value > hi)
      throw std::invalid_argument("sparse stimulus for op '" + op.name + "': attribute " + name + " must be in [" +
                                  str(lo) + ", " + str(hi) + "]" + (f.present() ? ", not " + str(f.value) : " (missing)"));
    return f.value;
  };
  SparseOpShape s;
  s.opName = op.name;
  s.gridRows = op.gridSize.value.r;
  s.numSparseTiles = need(a.numSparseTiles, "num_sparse_tiles", 1, 1 << 15);
  s.numIndexTiles = need(a.numIndexTiles, "num_index_tiles", 1, 1 << 15);
  // Absent: 0, as BUDA parses it (older netlists omit it).
  s.tilePtrBits = a.sparseTilePtrBits.present() ? static_cast<int>(need(a.sparseTilePtrBits, "sparse_tile_ptr_bits", 0, 15))
                                                : 0;
  s.ublockIdxBits = a.sparseUblockIdxBits.present() && a.sparseUblockIdxBits.value > 0
                        ? static_cast<int>(need(a.sparseUblockIdxBits, "sparse_ublock_idx_bits", 1, 15))
                        : s.tilePtrBits;
  s.mK = intAttr(a.mK, 1);
  s.uKt = intAttr(a.uKt, 1);
  s.mblockM = op.mblock.value.r;
  s.ublockRt = op.ublock.value.r;
  s.outputT = op.t.value;
  s.actT = a.actT.present() && a.actT.value > 0 ? a.actT.value
                                                   : (op.inputs.size() > 1 ? producerT(nl, op.inputs[1].name) : 1);
  if (s.actT != 1 && s.actT != s.outputT) s.actT = s.outputT;
  // The activations' rows, when input 1 reaches the op unchanged.
  if (op.inputs.size() > 1 && op.inputs[1].tms.empty() && !op.inputs[1].pad && !op.inputs[1].unpad) {
    const int64_t rowTiles = producerRowTiles(nl, op.inputs[1].name);
    if (rowTiles > 0 && s.uKt > 0) {
      if (rowTiles < s.uKt)
        throw std::invalid_argument("sparse stimulus for op '" + op.name + "': the activations have " + str(rowTiles) +
                                    " tile rows, fewer than u_kt " + str(s.uKt));
      s.actStrips = rowTiles / s.uKt;
    }
  }
  if (s.mK < 1 || s.uKt < 1 || s.outputT < 1)
    throw std::invalid_argument("sparse stimulus for op '" + op.name + "': m_k, u_kt and t must be positive");
  if (s.mblockM > (int64_t{1} << s.ublockIdxBits))
    throw std::invalid_argument("sparse stimulus for op '" + op.name + "': mblock rows " + str(s.mblockM) +
                                " do not fit sparse_ublock_idx_bits " + str(s.ublockIdxBits));
  const int tileIndexBits = 16 - s.tilePtrBits;
  if (s.ublockRt > (int64_t{1} << (tileIndexBits - colBits(s.uKt))))
    throw std::invalid_argument("sparse stimulus for op '" + op.name + "': 16 - sparse_tile_ptr_bits leaves no room for " +
                                str(s.ublockRt) + " ublock rows and u_kt " + str(s.uKt) + " in a tile index");
  return s;
}

Tensor generateSparseTiles(const SparseOpShape& op, int64_t t, int64_t rows, int64_t cols, std::mt19937_64& gen) {
  Tensor out(1, t, rows, cols, 0.0f);
  const int64_t rowTiles = rows / kTile, colTiles = cols / kTile;
  std::vector<std::set<std::array<uint8_t, kTile>>> seen(static_cast<size_t>(op.gridRows));
  int64_t k = 0;
  for (int64_t z = 0; z < t; ++z)
    for (int64_t rt = 0; rt < rowTiles; ++rt)
      for (int64_t ct = 0; ct < colTiles; ++ct, ++k) {
        const int64_t gridRow = k / op.numSparseTiles;
        if (gridRow >= op.gridRows) continue; // beyond what the op reads: zeros
        std::array<uint8_t, kTile> ones{};
        do {
          for (auto& col : ones) col = static_cast<uint8_t>(drawInt(gen, 0, kTile - 1));
        } while (!seen[static_cast<size_t>(gridRow)].insert(ones).second);
        for (int64_t r = 0; r < kTile; ++r) out.at(0, z, rt * kTile + r, ct * kTile + ones[static_cast<size_t>(r)]) = 1.0f;
      }
  return out;
}

Tensor generateSparseEncoding(const SparseOpShape& op, const EncodingFrequencies& freq, bool adaptive, int64_t t,
                              int64_t rows, int64_t cols, std::mt19937_64& gen) {
  if (freq.tileBytes < 1024 || freq.tileBytes % 1024 != 0 || freq.tileBytes > 4096)
    throw std::invalid_argument("sparse encoding for op '" + op.opName + "': enc_tile_byte_size " + str(freq.tileBytes) +
                                " must be 1024, 2048, 3072 or 4096 (bytes of 1024 values)");
  const int64_t bytesPerValue = freq.tileBytes / 1024;
  std::vector<std::vector<std::vector<uint8_t>>> rowTiles(static_cast<size_t>(op.gridRows));
  for (int64_t r = 0; r < op.gridRows; ++r) {
    EncodingFrequencies f = freq;
    int64_t cursor = 0;
    for (int attempt = 0;; ++attempt) {
      std::vector<Strip> strips = drawStrips(op, f, gen, cursor);
      if (encodeRow(op, strips, freq.tileBytes, rowTiles[static_cast<size_t>(r)])) break;
      // More zeros each time; from the 8th draw on every zero frequency is 1,
      // which leaves one strip per t, one ublock and one tile: the minimum.
      if (!adaptive || attempt >= 8)
        throw std::invalid_argument("sparse encoding for op '" + op.opName + "' (grid row " + str(r) +
                                    ") does not fit num_index_tiles " + str(op.numIndexTiles) + " tiles of " +
                                    str(freq.tileBytes) + " bytes; raise the zero frequencies");
      auto more = [&](double& p) { p = attempt >= 6 ? 1.0 : 1.0 - (1.0 - p) / 2; };
      more(f.zeroStrip), more(f.zeroUblock), more(f.zeroTile);
    }
  }

  Tensor out(1, t, rows, cols, 0.0f);
  out.rawBits.assign(out.data.size(), 0);
  const int64_t rt = rows / kTile, ctN = cols / kTile;
  int64_t k = 0;
  for (int64_t z = 0; z < t; ++z)
    for (int64_t tr = 0; tr < rt; ++tr)
      for (int64_t tc = 0; tc < ctN; ++tc, ++k) {
        const int64_t gridRow = k / op.numIndexTiles, tileInRow = k % op.numIndexTiles;
        if (gridRow >= op.gridRows) continue;
        const auto& tiles = rowTiles[static_cast<size_t>(gridRow)];
        if (tileInRow >= static_cast<int64_t>(tiles.size())) continue; // padding tiles are zero
        const std::vector<uint8_t>& bytes = tiles[static_cast<size_t>(tileInRow)];
        for (int64_t i = 0; i < kTile * kTile; ++i) {
          uint32_t v = 0;
          for (int64_t b = 0; b < bytesPerValue; ++b)
            v |= uint32_t{bytes[static_cast<size_t>(i * bytesPerValue + b)]} << (8 * b);
          const size_t at = out.index(0, z, tr * kTile + i / kTile, tc * kTile + i % kTile);
          out.rawBits[at] = v;
          out.data[at] = static_cast<float>(v);
        }
      }
  return out;
}

} // namespace tessera::host
