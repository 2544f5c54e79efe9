// slotSuccessivePeriods (lib/pipe/period_slots.cpp) on hand-made buffers and
// pending pipes: when a packer's readers become the slots of one pipe, in
// which order, and when they stay forks. Expected values worked out by hand.
#include "pipe/period_slots.hpp"

#include <catch2/catch.hpp>

using namespace tessera::pipe;
using namespace tessera::pipe::build;

namespace {

// Buffer 0: a packer of 6 tiles per input; buffers 1..6: unpackers of op
// `consumer` input 0 on their own cores, all on chip 0.
std::vector<Buf> buffers() {
  std::vector<Buf> bufs(7);
  bufs[0].packer = true;
  bufs[0].doc.tilesPerInput = 6;
  for (uint32_t h = 1; h < 7; ++h) bufs[h].doc.core = CoreCoord{0, h};
  return bufs;
}

tessera::netlist::Op consumerOp;

// A pipe reading tiles [start, start + len) of the packer into `out`.
PendingPipe reader(int64_t start, int64_t len, uint32_t out) {
  PendingPipe p;
  for (int64_t i = start; i < start + len; ++i) p.tiles.push_back(SourceTile{0, i});
  p.outputs = {out};
  p.op = &consumerOp;
  p.input = 0;
  p.comment = "r" + std::to_string(out);
  return p;
}

bool independent(const PendingPipe&, const PendingPipe&) { return true; }

} // namespace

TEST_CASE("readers of successive shares become slots in the shares' order", "[pipe][period-slots]") {
  std::vector<Buf> bufs = buffers();
  // Three readers of 2 tiles each, in pipe order: [2, 4) -> 1, [0, 2) -> 2,
  // [4, 6) -> 3. The core has 2 streams of buffers and a limit of 3: two
  // forks make 4, so they share one stream.
  std::vector<PendingPipe> pending{reader(2, 2, 1), reader(0, 2, 2), reader(4, 2, 3)};
  CHECK(slotSuccessivePeriods(pending, bufs, 3, [](uint32_t) { return 2u; }, independent) == 1);
  REQUIRE(pending.size() == 1);
  const PendingPipe& p = pending.front();
  CHECK(p.successivePeriods);
  // Slot k takes the share at 2k: buffers 2, 1, 3.
  CHECK(p.slots == std::vector<std::vector<uint32_t>>{{2}, {1}, {3}});
  CHECK(p.outputs == std::vector<uint32_t>{2});
  // The list is one period: the packer's tiles 0 and 1 (its period is 2).
  CHECK(p.tiles == std::vector<SourceTile>{{0, 0}, {0, 1}});
  CHECK(bufs[0].period == 2);
  CHECK(p.comment == "r1; 3 slots take successive periods of 2 tiles (the core has too few streams for a fork per reader)");
}

TEST_CASE("a core with streams to spare keeps a fork per reader", "[pipe][period-slots]") {
  std::vector<Buf> bufs = buffers();
  std::vector<PendingPipe> pending{reader(0, 2, 1), reader(2, 2, 2), reader(4, 2, 3)};
  // 2 + 2 forks = 4 streams, the limit is 4.
  CHECK(slotSuccessivePeriods(pending, bufs, 4, [](uint32_t) { return 2u; }, independent) == 0);
  CHECK(pending.size() == 3);
  CHECK(bufs[0].period == 0);
}

TEST_CASE("readers that do not split the input into equal successive shares stay forks", "[pipe][period-slots]") {
  auto none = [](std::vector<PendingPipe> pending) {
    std::vector<Buf> bufs = buffers();
    const size_t n = pending.size();
    CHECK(slotSuccessivePeriods(pending, bufs, 1, [](uint32_t) { return 2u; }, independent) == 0);
    CHECK(pending.size() == n);
    CHECK(bufs[0].period == 0);
  };
  // Unequal shares.
  none({reader(0, 2, 1), reader(2, 4, 2)});
  // Overlapping shares (two read [0, 2)), so [4, 6) is nobody's.
  none({reader(0, 2, 1), reader(0, 2, 2), reader(2, 2, 3)});
  // Shares missing: 2 readers of 2 tiles leave [4, 6) unread.
  none({reader(0, 2, 1), reader(2, 2, 2)});
  // A reader taking its share out of order (tiles 1, 0).
  std::vector<PendingPipe> swapped{reader(0, 2, 1), reader(2, 2, 2), reader(4, 2, 3)};
  std::swap(swapped[0].tiles[0], swapped[0].tiles[1]);
  none(swapped);
}

TEST_CASE("readers that wait on each other stay forks", "[pipe][period-slots]") {
  std::vector<Buf> bufs = buffers();
  std::vector<PendingPipe> pending{reader(0, 2, 1), reader(2, 2, 2), reader(4, 2, 3)};
  auto dependent = [](const PendingPipe& a, const PendingPipe& b) { return a.outputs != std::vector<uint32_t>{1} && b.outputs != std::vector<uint32_t>{1}; };
  CHECK(slotSuccessivePeriods(pending, bufs, 1, [](uint32_t) { return 2u; }, dependent) == 0);
  CHECK(pending.size() == 3);
}
