// Unit tests of the sparse-matmul input generators. The encoding is decoded
// here by a plain reader written from the format's description (BUDA's strip
// encoding: 32-bit strip word with flags in bits 30/31, a 16-bit ublock count,
// per ublock a 16-bit header of index and tile count, per tile a 16-bit index
// of sparse tile and position in the ublock), not by lib/golden.
#include "host/sparse_stimulus.hpp"

#include "netlist/parser.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <stdexcept>

using namespace tessera;
using host::SparseOpShape;

namespace {

struct DecodedStrip {
  uint32_t index;
  bool lastInRow, lastInTile;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> ublocks; // (ublock index, tile words)
};

// The 16-bit fields of one encoding tile (1024 32-bit values, row-major).
std::vector<uint16_t> halvesOfTile(const formats::Tensor& enc, int64_t tileRow, int64_t tileCol) {
  std::vector<uint16_t> h;
  for (int64_t r = 0; r < 32; ++r)
    for (int64_t c = 0; c < 32; ++c) {
      uint32_t v = enc.rawBits[enc.index(0, 0, tileRow * 32 + r, tileCol * 32 + c)];
      h.push_back(static_cast<uint16_t>(v & 0xFFFF));
      h.push_back(static_cast<uint16_t>(v >> 16));
    }
  return h;
}

// Decodes the strips of one grid row: `tiles` encoding tiles starting at tile column `firstTile`.
std::vector<DecodedStrip> decodeRow(const formats::Tensor& enc, int64_t row, int64_t tiles, int ublockIdxBits,
                                    int64_t outputT) {
  std::vector<DecodedStrip> strips;
  int64_t tile = 0, ts = 0;
  while (ts < outputT) {
    REQUIRE(tile < tiles);
    std::vector<uint16_t> h = halvesOfTile(enc, row, tile);
    size_t pos = 0;
    for (;;) {
      DecodedStrip s;
      uint32_t word = h.at(pos) | (uint32_t{h.at(pos + 1)} << 16);
      s.index = word & 0x3FFFFFFF;
      s.lastInRow = (word >> 30) & 1;
      s.lastInTile = (word >> 31) & 1;
      uint32_t ublocks = h.at(pos + 2);
      pos += 3;
      for (uint32_t u = 0; u < ublocks; ++u) {
        uint32_t header = h.at(pos++);
        uint32_t count = header >> ublockIdxBits;
        if (count == 0) count = 1u << (16 - ublockIdxBits);
        std::vector<uint32_t> words;
        for (uint32_t i = 0; i < count; ++i) words.push_back(h.at(pos++));
        s.ublocks.push_back({header & ((1u << ublockIdxBits) - 1), words});
      }
      strips.push_back(s);
      if (s.lastInRow) ++ts;
      if (s.lastInTile || ts == outputT) break;
    }
    ++tile;
  }
  return strips;
}

SparseOpShape shape() {
  SparseOpShape s;
  s.opName = "mm";
  s.gridRows = 2;
  s.numSparseTiles = 8;
  s.numIndexTiles = 4;
  s.mK = 6;
  s.uKt = 3;
  s.mblockM = 3;
  s.ublockRt = 2;
  s.outputT = 2;
  s.actT = 2;
  s.tilePtrBits = 5;
  s.ublockIdxBits = 5;
  return s;
}

} // namespace

TEST_CASE("sparse tiles: one 1 per row, distinct tiles per grid row", "[host][sparse]") {
  SparseOpShape op = shape();
  std::mt19937_64 gen(7);
  // Grid rows of 8 tiles each: [1 x t][2 rows of tiles][8 tiles]
  formats::Tensor t = host::generateSparseTiles(op, 1, 2 * 32, 8 * 32, gen);
  for (int64_t rt = 0; rt < 2; ++rt) {
    std::set<std::vector<int>> seen;
    for (int64_t ct = 0; ct < 8; ++ct) {
      std::vector<int> ones;
      for (int64_t r = 0; r < 32; ++r) {
        int count = 0, where = -1;
        for (int64_t c = 0; c < 32; ++c) {
          float v = t.at(0, 0, rt * 32 + r, ct * 32 + c);
          REQUIRE((v == 0.0f || v == 1.0f));
          if (v == 1.0f) ++count, where = static_cast<int>(c);
        }
        REQUIRE(count == 1);
        ones.push_back(where);
      }
      CHECK(seen.insert(ones).second);
    }
  }
}

TEST_CASE("sparse encoding decodes to valid strips for every grid row and t", "[host][sparse]") {
  SparseOpShape op = shape();
  host::EncodingFrequencies f; // 0.5 everywhere
  std::mt19937_64 gen(11);
  formats::Tensor enc = host::generateSparseEncoding(op, f, false, 1, 2 * 32, 4 * 32, gen);
  REQUIRE(enc.rawBits.size() == enc.data.size());
  const int tileIndexBits = 16 - op.tilePtrBits; // 11: 2 bits of u_kt column, the rest ublock row
  for (int64_t row = 0; row < 2; ++row) {
    std::vector<DecodedStrip> strips = decodeRow(enc, row, 4, op.ublockIdxBits, op.outputT);
    int64_t t = 0;
    int64_t lastLocal = -1;
    for (const DecodedStrip& s : strips) {
      // act_t == output_t: strip indices are m_k * t + local strip, never going back within a t.
      const int64_t local = static_cast<int64_t>(s.index) - op.mK * t;
      REQUIRE(local >= 0);
      REQUIRE(local < op.mK);
      CHECK(local >= std::max<int64_t>(0, lastLocal) - 0);
      lastLocal = local;
      uint32_t prevUblock = 0;
      bool first = true;
      for (const auto& [ub, words] : s.ublocks) {
        REQUIRE(ub < static_cast<uint32_t>(op.mblockM));
        if (!first) CHECK(ub > prevUblock); // ublocks in increasing order
        prevUblock = ub, first = false;
        REQUIRE(!words.empty());
        for (uint32_t w : words) {
          CHECK((w >> tileIndexBits) < static_cast<uint32_t>(op.numSparseTiles));
          uint32_t within = w & ((1u << tileIndexBits) - 1);
          CHECK((within & 3u) < static_cast<uint32_t>(op.uKt));   // column within u_kt (2 bits for u_kt 3)
          CHECK((within >> 2) < static_cast<uint32_t>(op.ublockRt));
        }
      }
      if (s.lastInRow) ++t, lastLocal = -1;
    }
    CHECK(t == op.outputT);
  }
  // The floats carry the same numbers where they are exact.
  for (size_t i = 0; i < enc.data.size(); ++i)
    if (enc.rawBits[i] < (1u << 24)) REQUIRE(enc.data[i] == static_cast<float>(enc.rawBits[i]));
}

TEST_CASE("sparse encoding: a non-fitting encoding is an error unless adaptive", "[host][sparse]") {
  SparseOpShape op = shape();
  op.numIndexTiles = 1;
  op.mK = 64;
  op.uKt = 4;
  op.ublockRt = 8;
  op.mblockM = 8;
  op.tilePtrBits = 4;
  op.ublockIdxBits = 4;
  op.outputT = 1;
  op.actT = 1;
  host::EncodingFrequencies dense{0.0, 0.0, 0.0, 4096}; // every strip, ublock and tile: far beyond one tile
  std::mt19937_64 gen(3);
  CHECK_THROWS_WITH(host::generateSparseEncoding(op, dense, false, 1, 32, 32, gen),
                    Catch::Contains("does not fit num_index_tiles 1"));
  formats::Tensor enc = host::generateSparseEncoding(op, dense, true, 1, 32, 32, gen);
  std::vector<DecodedStrip> strips = decodeRow(enc, 0, 1, op.ublockIdxBits, 1);
  CHECK(!strips.empty());
  CHECK(strips.back().lastInRow);
}

namespace {

// The attributes of op_tests/pytorch_bin/matmul_ident/single_tile: no
// sparse_tile_ptr_bits (an older attribute set: num_columns, indices_len,
// starting_row), m_k 10 but activations of a single tile row.
std::string identNetlist(const std::string& mblock) {
  return R"(devices:
  arch: grayskull
queues:
  act:  {input: HOST, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x30000000]]}
  sp:   {input: HOST, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [10, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x8200100]]}
  enc:  {input: HOST, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: RawUInt32, target_device: 0, loc: dram, dram: [[1, 0x8200100]]}
  out:  {input: mm, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: )" + mblock + R"(, ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x31000000]]}
graphs:
  g:
    target_device: 0
    input_count: 1
    mm: {type: matmul, grid_loc: [0, 0], grid_size: [1, 1], inputs: [sp, act, enc], t: 1, mblock: )" + mblock + R"(, ublock: [1, 1], buf_size_mb: 2, ublock_order: r, in_df: [Float16, Float16, RawUInt32], out_df: Float16, intermed_df: Float16, acc_df: Float16, math_fidelity: HiFi3,
         attributes: {m_k: 10, u_kt: 1, identity: true, num_index_tiles: 1, num_sparse_tiles: 10, num_columns: 1, indices_len: 11, starting_row: 0, act_t: 1}}
programs:
  - p:
    - execute: {graph_name: g}
)";
}

netlist::Netlist parsed(const std::string& text) {
  SourceBuffer source("ident.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  REQUIRE(nl);
  return *nl;
}

} // namespace

TEST_CASE("sparse stimulus without sparse_tile_ptr_bits: BUDA's default of 0 bits", "[host][sparse]") {
  const netlist::Netlist nl = parsed(identNetlist("[1, 1]"));
  const netlist::Op* op = host::findOp(nl, "mm");
  REQUIRE(op);
  const SparseOpShape s = host::sparseOpShape(nl, *op);
  CHECK(s.tilePtrBits == 0);
  CHECK(s.ublockIdxBits == 0);
  CHECK(s.actStrips == 1); // one tile row of activations, u_kt 1

  // Every strip reads activation row 0 (the only one), every header is a bare
  // tile count, every tile entry is a bare position (u_kt 1, ublock 1x1: 0)
  // and so names sparse tile 0, the only one 0 pointer bits can name.
  host::EncodingFrequencies dense{0.0, 0.0, 0.0, 4096};
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 gen(seed);
    const formats::Tensor enc = host::generateSparseEncoding(s, dense, true, 1, 32, 32, gen);
    const std::vector<DecodedStrip> strips = decodeRow(enc, 0, 1, 0, 1);
    REQUIRE(strips.size() == 1);
    CHECK(strips[0].index == 0);
    CHECK(strips[0].lastInRow);
    REQUIRE(strips[0].ublocks.size() == 1);
    CHECK(strips[0].ublocks[0].first == 0);
    CHECK(strips[0].ublocks[0].second == std::vector<uint32_t>{0});
  }
}

TEST_CASE("sparse stimulus: strips stay within the activations when m_k says more", "[host][sparse]") {
  SparseOpShape op = shape();
  op.gridRows = 1;
  op.outputT = 1;
  op.actT = 1;
  op.actStrips = 2; // m_k 6, but the activations hold 2 strips of u_kt rows
  host::EncodingFrequencies none{0.0, 0.5, 0.5, 4096};
  std::mt19937_64 gen(5);
  const formats::Tensor enc = host::generateSparseEncoding(op, none, true, 1, 32, 4 * 32, gen);
  const std::vector<DecodedStrip> strips = decodeRow(enc, 0, 4, op.ublockIdxBits, 1);
  REQUIRE(strips.size() == 2); // zero_strip_freq 0: both strips, no more
  CHECK(strips[0].index == 0);
  CHECK(strips[1].index == 1);
}

TEST_CASE("sparse stimulus rejects default bit fields that cannot hold the mblock", "[host][sparse]") {
  // mblock of 8 rows: 0 ublock index bits name one ublock row only.
  const netlist::Netlist nl = parsed(identNetlist("[8, 1]"));
  CHECK_THROWS_WITH(host::sparseOpShape(nl, *host::findOp(nl, "mm")),
                    Catch::Contains("mblock rows 8 do not fit sparse_ublock_idx_bits 0"));
}
