// The TOPK instruction (docs/device-model.md): each step on small rows
// worked by hand. Values go into dest through srcA (Float32 dest), the
// instruction runs, and dest is read back. Also ROWCOPY (embedding's row
// gather), whose effect is as easy to state.
#include "sim/coprocessor.hpp"

#include "device/device_contract.h"
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <vector>

using namespace tessera;
using namespace tessera::contract;
using sim::CopResult;
using sim::Coprocessor;
using tessera::DataFormat;

namespace {

using Tile = std::array<float, 1024>;
constexpr uint32_t kSlot = kDataBufferBase;

struct Rig {
  std::vector<uint8_t> l1 = std::vector<uint8_t>(kGrayskullL1Size, 0);
  Coprocessor cop{std::span<uint8_t>(l1)};

  CopResult push2(uint32_t thread, uint32_t word, uint32_t arg) {
    const CopResult first = cop.push(thread, word);
    REQUIRE(first.accepted());
    return cop.push(thread, arg);
  }
  void run2(uint32_t thread, uint32_t word, uint32_t arg) {
    const CopResult r = push2(thread, word, arg);
    INFO("fault " << r.fault);
    REQUIRE(r.accepted());
  }
  void load(uint32_t d, const Tile& t) {
    formats::packTile(DataFormat::Float32, std::span<const float, 1024>(t), std::span<uint8_t>(l1).subspan(kSlot));
    run2(kUnpackThread, encode(kOpUnpack, static_cast<uint32_t>(DataFormat::Float32) << kFormatShift), kSlot);
    REQUIRE(cop.push(kMathThread, encode(kOpDatacopy, d)).accepted());
  }
  CopResult topk(TopkStep step, uint32_t d, bool two, uint32_t position, uint32_t logA, uint32_t logB) {
    return push2(kMathThread, encode(kOpTopk, d | (step << kTopkStepShift) | (two ? kTopkTwoTiles : 0u)),
                 position | (logA << kTopkLogAShift) | (logB << kTopkLogBShift));
  }
  float at(uint32_t d, size_t row, size_t col) const { return cop.destValue(d, row * 32 + col); }
};

// Row 0 of a tile from a list; every other value is its column plus 100
// times its row (distinct, so no ties outside row 0).
Tile rowTile(std::vector<float> row0) {
  Tile t;
  for (size_t i = 0; i < 1024; ++i) t[i] = static_cast<float>(i % 32 + 100 * (i / 32));
  for (size_t c = 0; c < row0.size(); ++c) t[c] = row0[c];
  return t;
}

void requireRow(const Rig& rig, uint32_t d, size_t row, const std::vector<float>& want) {
  for (size_t c = 0; c < want.size(); ++c) {
    INFO("dest " << d << " row " << row << " col " << c);
    REQUIRE(rig.at(d, row, c) == want[c]);
  }
}

} // namespace

TEST_CASE("TOPK sort: k-runs in alternating directions, indices follow", "[sim][coprocessor][topk]") {
  Rig rig;
  rig.run2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kFloat32);
  rig.load(0, rowTile({1, 3, 2, 4, 5, 8, 6, 7}));
  rig.load(2, rowTile({0, 1, 2, 3, 4, 5, 6, 7}));
  const CopResult r = rig.topk(kTopkSort, 0, false, 0, 2, 0); // k = 4, one tile
  REQUIRE(r.accepted());
  // Run 0 (columns 0-3) descending, run 1 ascending (worked step by step:
  // len 2 gives 3 1 2 4 | 8 5 6 7, len 4 merges each half).
  requireRow(rig, 0, 0, {4, 3, 2, 1, 5, 6, 7, 8});
  requireRow(rig, 2, 0, {3, 1, 2, 0, 4, 6, 7, 5});
  // 3 stages (len 2: 1, len 4: 2) of 128 cycles on one value tile, plus 8.
  CHECK(r.cycles == 3 * 128 + 8);
  CHECK(r.unit == sim::CopUnit::Math);
}

TEST_CASE("TOPK compare: the larger value first; equal negatives swap", "[sim][coprocessor][topk]") {
  Rig rig;
  rig.run2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kFloat32);
  Tile v = rowTile({-1, -1, 1, 7});
  v[32] = 2;  // row 1: 2, 2
  v[33] = 2;
  Tile ix = rowTile({10, 11, 12, 13});
  ix[32] = 20;
  ix[33] = 21;
  rig.load(0, v);
  rig.load(2, ix);
  REQUIRE(rig.topk(kTopkCompare, 0, false, 0, 0, 0).accepted()); // count 1, dist 1
  requireRow(rig, 0, 0, {-1, -1, 7, 1});
  requireRow(rig, 2, 0, {11, 10, 13, 12});   // equal negatives swapped
  requireRow(rig, 2, 1, {20, 21});           // equal non-negatives kept
}

TEST_CASE("TOPK merge: direction from the position, across two tiles", "[sim][coprocessor][topk]") {
  Rig rig;
  rig.run2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kFloat32);
  rig.load(0, rowTile({5, 3}));
  rig.load(1, rowTile({1, 9}));
  rig.load(2, rowTile({0, 1}));
  rig.load(3, rowTile({32, 33}));
  // len 2, stride 32, window at position 32: the run at 32 is run 1
  // (ascending), the one at 64 run 2 (descending).
  REQUIRE(rig.topk(kTopkMerge, 0, true, 32, 1, 5).accepted());
  requireRow(rig, 0, 0, {3, 5});
  requireRow(rig, 1, 0, {9, 1});
  requireRow(rig, 2, 0, {1, 0});
  requireRow(rig, 3, 0, {33, 32});
}

TEST_CASE("TOPK zero tail keeps the first k positions", "[sim][coprocessor][topk]") {
  Rig rig;
  rig.run2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kFloat32);
  rig.load(0, rowTile({}));
  rig.load(2, rowTile({}));
  REQUIRE(rig.topk(kTopkZeroTail, 0, false, 0, 3, 0).accepted()); // k = 8
  for (size_t row : {size_t{0}, size_t{31}}) {
    CHECK(rig.at(0, row, 7) == static_cast<float>(7 + 100 * row));
    CHECK(rig.at(0, row, 8) == 0.0f);
    CHECK(rig.at(2, row, 31) == 0.0f);
  }
}

TEST_CASE("TOPK faults: bad parameters, an Int32 dest, a window past dest", "[sim][coprocessor][topk][fault]") {
  Rig rig;
  rig.run2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kFloat32);
  CHECK(rig.topk(kTopkSort, 0, false, 0, 6, 0).fault == kCopIllegalInstruction);    // k 64 > 32 columns
  CHECK(rig.topk(kTopkCompare, 0, true, 0, 5, 4).fault == kCopIllegalInstruction);  // count 32 > dist 16
  CHECK(rig.topk(kTopkMerge, 0, true, 16, 1, 1).fault == kCopIllegalInstruction);   // position not a tile start
  CHECK(rig.topk(kTopkSort, 5, false, 0, 1, 0).fault == kCopBadDestIndex);          // dest 5..8 of 8
  rig.run2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kInt32);
  CHECK(rig.topk(kTopkSort, 0, false, 0, 1, 0).fault == kCopBadFormat);
}

TEST_CASE("ROWCOPY moves one srcA row into one dest row", "[sim][coprocessor][rowcopy]") {
  Rig rig;
  rig.run2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kFloat32);
  REQUIRE(rig.cop.push(kMathThread, encode(kOpZeroDest, 1)).accepted());
  Tile t;
  for (size_t i = 0; i < 1024; ++i) t[i] = static_cast<float>(100 * (i / 32) + i % 32);
  formats::packTile(DataFormat::Float32, std::span<const float, 1024>(t), std::span<uint8_t>(rig.l1).subspan(kSlot));
  rig.run2(kUnpackThread, encode(kOpUnpack, static_cast<uint32_t>(DataFormat::Float32) << kFormatShift), kSlot);
  // Row 5 of srcA to row 31 of dest[1], srcA kept; then row 0 to row 0, srcA released.
  REQUIRE(rig.cop.push(kMathThread, encode(kOpRowCopy, 1 | kFieldKeepSrcA | (5u << kRowCopySrcShift) |
                                                           (31u << kRowCopyDstShift))).accepted());
  REQUIRE(rig.cop.srcValid(false, 0));
  const CopResult r = rig.cop.push(kMathThread, encode(kOpRowCopy, 1));
  REQUIRE(r.accepted());
  CHECK(r.cycles == 2);
  CHECK_FALSE(rig.cop.srcValid(false, 0));
  for (size_t c = 0; c < 32; ++c) {
    CHECK(rig.at(1, 31, c) == static_cast<float>(500 + c));
    CHECK(rig.at(1, 0, c) == static_cast<float>(c));
    CHECK(rig.at(1, 1, c) == 0.0f);
  }
  // The accumulate bit is not a ROWCOPY field.
  CHECK(rig.cop.push(kMathThread, encode(kOpRowCopy, 1 | kFieldAccumulate)).fault == kCopIllegalInstruction);
}
