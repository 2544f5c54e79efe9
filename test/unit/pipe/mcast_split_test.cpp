// splitExcessMulticasts (lib/pipe/mcast_split.cpp) on hand-made pending
// pipes: which multicasts become unicasts, in which order, and what each
// unicast carries. Expected values worked out by hand in the comments.
#include "pipe/mcast_split.hpp"

#include <catch2/catch.hpp>

using namespace tessera::pipe;
using namespace tessera::pipe::build;

namespace {

// Buffers 0..9 are packers, one per core (the core key is the buffer);
// buffer 100 stands for DRAM: a pipe reading it is hosted by its first
// destination (key 1000 + that buffer) and is not `single`.
PendingPipe pipe(uint32_t source, std::vector<uint32_t> outputs, int input = 0) {
  PendingPipe p;
  p.tiles = {SourceTile{source, 0}, SourceTile{source, 1}};
  p.outputs = std::move(outputs);
  p.input = input;
  p.comment = "m" + std::to_string(input) + (p.outputs.size() > 1 ? " (multicast)" : "");
  return p;
}

uint64_t keyOf(const PendingPipe& p, bool& single) {
  single = p.tiles.front().source < 100;
  return single ? p.tiles.front().source : 1000 + p.outputs.front();
}

} // namespace

TEST_CASE("a core within its multicast streams keeps its multicasts", "[pipe][mcast-split]") {
  std::vector<PendingPipe> pending{pipe(0, {10, 11}, 0), pipe(0, {12, 13}, 1), pipe(0, {14, 15}, 2), pipe(0, {16, 17}, 3)};
  CHECK(splitExcessMulticasts(pending, 4, keyOf) == 0);
  CHECK(pending.size() == 4);
}

TEST_CASE("the excess multicasts with the fewest destinations become unicasts, in place", "[pipe][mcast-split]") {
  // Core 0 sends 6 multicasts, 4 fit: the two with 2 destinations (inputs 1
  // and 4) are split, the 3-destination ones stay, whatever their order.
  std::vector<PendingPipe> pending{pipe(0, {10, 11, 12}, 0), pipe(0, {13, 14}, 1), pipe(0, {15, 16, 17}, 2),
                                   pipe(0, {18, 19, 20}, 3), pipe(0, {21, 22}, 4), pipe(0, {23, 24, 25}, 5),
                                   pipe(1, {30}, 6)};
  CHECK(splitExcessMulticasts(pending, 4, keyOf) == 2);
  REQUIRE(pending.size() == 9);
  // In order: m0, m1 as two unicasts, m2, m3, m4 as two unicasts, m5, core 1's unicast.
  const std::vector<std::vector<uint32_t>> outs{{10, 11, 12}, {13}, {14}, {15, 16, 17}, {18, 19, 20},
                                                {21}, {22}, {23, 24, 25}, {30}};
  const std::vector<int> inputs{0, 1, 1, 2, 3, 4, 4, 5, 6};
  for (size_t i = 0; i < outs.size(); ++i) {
    INFO(i);
    CHECK(pending[i].outputs == outs[i]);
    CHECK(pending[i].input == inputs[i]);
  }
  // Each unicast carries the multicast's tiles, in order.
  CHECK(pending[1].tiles == std::vector<SourceTile>{SourceTile{0, 0}, SourceTile{0, 1}});
  CHECK(pending[2].tiles == pending[1].tiles);
  CHECK(pending[1].comment == "m1; unicast 1 of 2 of a multicast (the sending core has no multicast stream left)");
  CHECK(pending[2].comment == "m1; unicast 2 of 2 of a multicast (the sending core has no multicast stream left)");
  CHECK(pending[8].comment == "m6");
}

TEST_CASE("a packer's own multicasts are split before DRAM multicasts relayed on its core", "[pipe][mcast-split]") {
  // One core (key 10) sends 3 multicasts of its packer (3 destinations
  // each) and relays 2 DRAM multicasts (2 destinations each).
  SendingCoreFn key = [](const PendingPipe& p, bool& single) -> uint64_t {
    single = p.tiles.front().source < 100;
    return 10;
  };
  std::vector<PendingPipe> pending{pipe(100, {20, 21}, 0), pipe(10, {30, 31, 32}, 1), pipe(100, {22, 23}, 2),
                                   pipe(10, {33, 34, 35}, 3), pipe(10, {36, 37, 38}, 4)};
  // 5 multicasts, limit 3: two split, both the packer's (inputs 1 and 3,
  // the first two of equal size), though the DRAM ones have fewer destinations.
  CHECK(splitExcessMulticasts(pending, 3, key) == 2);
  REQUIRE(pending.size() == 9);
  CHECK(pending[0].outputs == std::vector<uint32_t>{20, 21});
  CHECK(pending[1].outputs == std::vector<uint32_t>{30});
  CHECK(pending[3].outputs == std::vector<uint32_t>{32});
  CHECK(pending[4].outputs == std::vector<uint32_t>{22, 23});
  CHECK(pending[5].outputs == std::vector<uint32_t>{33});
  CHECK(pending[8].outputs == std::vector<uint32_t>{36, 37, 38});
  // With limit 0 every multicast goes, the DRAM ones too.
  std::vector<PendingPipe> all{pipe(100, {20, 21}, 0), pipe(10, {30, 31}, 1)};
  CHECK(splitExcessMulticasts(all, 0, key) == 2);
  CHECK(all.size() == 4);
}

TEST_CASE("time-multiplexed pipes and DRAM writes are never split", "[pipe][mcast-split]") {
  PendingPipe mux = pipe(0, {10, 11}, 0);
  mux.slots = {{10, 11}, {12, 13}};
  PendingPipe write = pipe(0, {50}, 1);
  write.toDram = true;
  std::vector<PendingPipe> pending{mux, pipe(0, {14, 15}, 2), write};
  // Two multicasts on core 0, limit 1: only the plain one can go.
  CHECK(splitExcessMulticasts(pending, 1, keyOf) == 1);
  REQUIRE(pending.size() == 4);
  CHECK(pending[0].slots.size() == 2);
  CHECK(pending[1].outputs == std::vector<uint32_t>{14});
  CHECK(pending[2].outputs == std::vector<uint32_t>{15});
  CHECK(pending[3].toDram);
}

TEST_CASE("splitMulticastsWhere splits the multicasts it is asked to, in place, and nothing else", "[pipe][mcast-split]") {
  // Picks input 1: m1 (a multicast) becomes two unicasts; m3 (input 1 but a
  // unicast already), m0 and m2 (other inputs) and the time-multiplexed m4
  // stay as they are.
  PendingPipe tm = pipe(0, {40, 41}, 1);
  tm.slots = {{40, 41}, {42, 43}};
  tm.comment = "m4";
  std::vector<PendingPipe> pending{pipe(100, {10, 11}, 0), pipe(100, {12, 13}, 1), pipe(0, {14, 15}, 2),
                                   pipe(100, {16}, 1), tm};
  const size_t n = splitMulticastsWhere(pending, [](const PendingPipe& p) { return p.input == 1; }, "why");
  CHECK(n == 1);
  REQUIRE(pending.size() == 6);
  const std::vector<std::vector<uint32_t>> outs{{10, 11}, {12}, {13}, {14, 15}, {16}, {40, 41}};
  for (size_t i = 0; i < outs.size(); ++i) {
    INFO(i);
    CHECK(pending[i].outputs == outs[i]);
  }
  CHECK(pending[1].comment == "m1; unicast 1 of 2 of a multicast (why)");
  CHECK(pending[2].comment == "m1; unicast 2 of 2 of a multicast (why)");
  CHECK(pending[2].tiles == std::vector<SourceTile>{SourceTile{100, 0}, SourceTile{100, 1}});
  CHECK(pending[4].comment == "m1");
  CHECK(pending[5].slots.size() == 2);
  // Nothing picked: nothing changes.
  CHECK(splitMulticastsWhere(pending, [](const PendingPipe&) { return false; }, "why") == 0);
  CHECK(pending.size() == 6);
}
