// Injected faults (lib/sim/fault_injection.hpp) on hand-built blobs without
// kernels: for every seed tried, a fault that landed is reported (a named
// fault or a hang) or, for a flipped bit, shows in exactly the bit it names;
// a fault that did not land leaves the run as it was. The kinds that need
// kernels (hart-stop) and the check against the reference run in lit
// (test/lit/loader-sim/inject-*.test).
#include "simchip_helpers.hpp"

#include "sim/fault_injection.hpp"

using namespace simchip;

TEST_CASE("inject: KIND[:SEED] parsing", "[simchip][inject]") {
  Expected<InjectSpec> s = parseInjectSpec("drop-credit");
  REQUIRE(s);
  CHECK(s->kind == InjectKind::DropCredit);
  CHECK(s->seed == 1);
  s = parseInjectSpec("hart-stop:18446744073709551615");
  REQUIRE(s);
  CHECK(s->kind == InjectKind::HartStop);
  CHECK(s->seed == 18446744073709551615ull);
  REQUIRE(parseInjectSpec("noc-stall:0"));
  REQUIRE(parseInjectSpec("dram-bitflip:42"));
  Expected<InjectSpec> bad = parseInjectSpec("bitflip");
  REQUIRE_FALSE(bad);
  CHECK(bad.error() == "unknown fault kind 'bitflip' (expected drop-credit, dram-bitflip, noc-stall or hart-stop)");
  bad = parseInjectSpec("noc-stall:");
  REQUIRE_FALSE(bad);
  CHECK(bad.error() == "bad seed '' (expected a decimal number below 2^64)");
  CHECK_FALSE(parseInjectSpec("noc-stall:18446744073709551616")); // 2^64
  CHECK_FALSE(parseInjectSpec("noc-stall:-1"));
  CHECK_FALSE(parseInjectSpec("noc-stall:1x"));
  CHECK_FALSE(parseInjectSpec(""));
}

namespace {

// Core 1-1's packer pushed 3 tiles; stream 24 sends them to core 3-2's
// operand 0 (3 slots). The packer's ring frees one slot per tile sent: 3
// free events.
ChipRunResult packerToCore(Chip& chip, FaultInjector* inject) {
  chip.beginEpoch();
  loadBlob(chip, 1, 1, {streamOf(1, 1, 24, {packerToRemote(3, kBuf0, 4, {sname(3, 2, 8)})})});
  loadBlob(chip, 3, 2, {streamOf(3, 2, 8, {remoteToKernel(3, kBuf1, 3, {sname(1, 1, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 4, {7, 8, 9});
  ChipRunOptions options;
  options.inject = inject;
  return run(chip, options);
}

}  // namespace

TEST_CASE("inject: without an injector the credit audit passes a clean run", "[simchip][inject]") {
  Chip chip(grayskull());
  ChipRunResult r = packerToCore(chip, nullptr);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(r.ok());
}

TEST_CASE("inject: a dropped credit is a stream-credit fault, or a clean run when it did not land", "[simchip][inject]") {
  int landedRuns = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    INFO("seed " << seed);
    Chip chip(grayskull());
    FaultInjector inject({InjectKind::DropCredit, seed});
    ChipRunResult r = packerToCore(chip, &inject);
    if (inject.landed().empty()) {
      CHECK(r.stop == ChipStop::Done);  // the seed asked for a 4th..8th free: there are 3
      continue;
    }
    ++landedRuns;
    CHECK(contains(inject.landed(), "core '1-1': the buffer at 0x20000 (operand 16) lost the credit of a freed slot"));
    // Every tile still arrived (4 slots for 3 tiles): only the audit sees it.
    REQUIRE(r.stop == ChipStop::Fault);
    CHECK(r.faultCategory == "stream-credit");
    CHECK(r.faultCore == "1-1");
    CHECK(r.message ==
          "core '1-1': stream 24: 1 of 3 slots taken in its buffer at 0x20000 were never freed when the epoch "
          "ended (a lost credit)");
    CHECK(chip.core({3, 2})->tilesReceived(0) == 3);
    CHECK(chip.core({1, 1})->tilesAcked(16) == 2);  // the packer got one slot fewer back
  }
  CHECK(landedRuns > 0);
  CHECK(landedRuns < 16);
}

TEST_CASE("inject: the same seed lands on the same event", "[simchip][inject]") {
  std::string first;
  for (int i = 0; i < 2; ++i) {
    Chip chip(grayskull());
    FaultInjector inject({InjectKind::NocStall, 5});
    ChipRunResult r = packerToCore(chip, &inject);
    if (i == 0) first = inject.landed() + "|" + r.message;
    else CHECK(inject.landed() + "|" + r.message == first);
  }
}

TEST_CASE("inject: a stalled NOC port is a hang that names it", "[simchip][inject]") {
  int landedRuns = 0;
  for (uint64_t seed = 1; seed <= 32; ++seed) {
    INFO("seed " << seed);
    Chip chip(grayskull());
    FaultInjector inject({InjectKind::NocStall, seed});
    ChipRunResult r = packerToCore(chip, &inject);
    if (inject.landed().empty()) {
      CHECK(r.stop == ChipStop::Done);
      continue;
    }
    ++landedRuns;
    CHECK(contains(inject.landed(), "core '1-1': its NOC 0 sender port stalled from cycle "));
    REQUIRE(r.stop == ChipStop::Hang);
    CHECK(contains(r.message, "core '1-1' stream 24 phase 0"));
    CHECK(contains(r.message, "its core's NOC 0 sender port, which is stalled"));
  }
  // All three tiles leave in the first window: only a seed that picks the
  // first window (1 in 8) finds a port still to send on.
  CHECK(landedRuns > 0);
  CHECK(landedRuns < 32);
}

TEST_CASE("inject: a flipped DRAM bit shows in exactly that bit of the tile read", "[simchip][inject]") {
  int landedRuns = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    INFO("seed " << seed);
    Chip chip(grayskull());
    chip.beginEpoch();
    // Queue on channel 3: 4 slots of 2 tiles, entries at pointers 1..3; the
    // core's operand 0 reads 2 entries (4 tiles) in two phases (no prologue).
    const Queue q{3, 0x1000, 4, 2};
    QueueHeader h;
    h.rdPtr = 1;
    h.wrPtr = 4;
    REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, h));
    for (uint32_t slot = 0; slot < 4; ++slot)
      for (uint32_t t = 0; t < 2; ++t) writeDramTile(chip.dram(), q, slot, t, 100 + slot * 10 + t);
    const uint64_t noc = 0x18400001000ull;
    loadBlob(chip, 1, 1,
             {streamOf(1, 1, 8, {dramToKernel(2, kBuf0, 4, noc, 4, 2), dramToKernel(2, kBuf0, 4, noc, 4, 2)})});
    FaultInjector inject({InjectKind::DramBitflip, seed});
    ChipRunOptions options;
    options.inject = &inject;
    ChipRunResult r = run(chip, options);
    REQUIRE(r.stop == ChipStop::Done);  // data is not checked by the chip: the loader's check finds it
    // Count the differing bits of the 4 tiles against what DRAM holds.
    int flipped = 0;
    size_t where = 0;
    const uint32_t ids[4] = {110, 111, 120, 121};
    for (uint32_t t = 0; t < 4; ++t) {
      const std::vector<uint8_t> want = patternTile(ids[t]);
      std::span<const uint8_t> got = l1Slot(chip, 1, 1, kBuf0, t);
      for (size_t b = 0; b < kTile; ++b)
        if (uint8_t x = got[b] ^ want[b]) {
          flipped += __builtin_popcount(x);
          where = b;
          CHECK(x == 0x40);
        }
    }
    if (inject.landed().empty()) {
      CHECK(flipped == 0);
      continue;
    }
    ++landedRuns;
    CHECK(flipped == 1);
    CHECK(where >= 16);
    CHECK(where < kTile - 16);
    CHECK(where % 4 == 3);
    CHECK(contains(inject.landed(), "core '1-1' stream 8: bit "));
    CHECK(contains(inject.landed(), "(byte " + std::to_string(where) + " of the tile) read from channel 3 address "));
    // DRAM itself is unchanged: the flip is on the read.
    CHECK(isPattern(readDramTile(chip.dram(), q, 1, 0), 110));
  }
  CHECK(landedRuns > 0);
}
