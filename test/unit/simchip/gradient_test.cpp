// Gradient accumulators (docs/device-model.md, "Gradient accumulation") in the
// stream engine, driven directly as the chip does: the prologue loads the ram
// cell's slot into the operand buffer, the test plays the kernel (changes
// the buffer), kernelFinished stores it back. Checked byte for byte, with the
// DRAM time and the configuration faults.
#include "simchip_helpers.hpp"

#include "sim/noc.hpp"
#include "sim/stream_engine.hpp"
#include "sim/tensix_core.hpp"

using namespace simchip;

namespace {

// One gradient_op buffer: operand 16 (stream 24), `tiles` tiles at kBuf0,
// its ram cell at `nocAddr` (one slot of `tiles` tiles).
StreamPhase gradientPhase(uint32_t tiles, uint64_t nocAddr, uint32_t qSlots) {
  StreamPhase p = phaseOf(tiles, kBuf0, tiles);
  p.intermediate = true;
  p.sourceEndpoint = true;
  p.localReceiver = true;
  p.dramRam = true;
  p.dramBufNocAddr = nocAddr;
  p.dramBufSizeQSlots = qSlots;
  p.dramBufSizeTiles = tiles;
  return p;
}

struct Rig {
  Dram dram{grayskull()};
  DataMovementModel model = DataMovementModel::forArch(grayskull().arch);
  StreamEngine engine{grayskull(), dram, model};
  TensixCore core{CoreConfig{grayskull().arch, "grad[0,0]", {}}};
  CoreCoord noc{1, 1};
  Rig() { engine.attachCore(noc, core); }
  bool configure(std::vector<StreamPhase> phases, StreamFault& fault) {
    CoreBlob b;
    b.x = 1;
    b.y = 1;
    b.streams.push_back(streamOf(1, 1, 24, std::move(phases)));
    return engine.configure(b, fault);
  }
};

}  // namespace

TEST_CASE("gradient: the ram cell is loaded before the kernel and stored after it", "[simchip][gradient]") {
  Rig rig;
  const Queue q{3, 0x4000, 2, 3};  // two slots of 3 tiles
  QueueHeader h;
  h.wrPtr = 1;  // the slot the device accumulates into
  h.slots = 2;
  REQUIRE(writeQueueHeader(rig.dram, q.channel, q.address, h));
  for (uint32_t t = 0; t < 3; ++t) {
    writeDramTile(rig.dram, q, 0, t, 10 + t);
    writeDramTile(rig.dram, q, 1, t, 20 + t);
  }
  StreamFault fault;
  REQUIRE(rig.configure({gradientPhase(3, dramNocAddress(grayskull(), q.channel, q.address), 2)}, fault));
  rig.engine.start(0);
  const uint64_t prologue = rig.engine.runPrologue(0);
  REQUIRE_FALSE(rig.engine.fault());
  // Three Float16_b tiles over a 12 bytes/cycle channel, plus the latency.
  CHECK(prologue == 3 * dramTransferCycles(rig.model.dram, kTile) + rig.model.dram.latency);
  CHECK(rig.engine.counters().prologueTiles == 3);
  auto slot = [&](uint32_t k) { return std::span<uint8_t>(rig.core.l1().data() + kBuf0 + k * kTile, kTile); };
  for (uint32_t k = 0; k < 3; ++k) CHECK(isPattern(slot(k), 20 + k));
  // Kernel-local: no counter moved, nothing for the engine to wait on.
  CHECK(rig.core.tilesReceived(16) == 0);
  CHECK(rig.engine.done());

  // The kernel's accumulation, then its end at cycle 5000.
  for (uint32_t k = 0; k < 3; ++k) {
    const std::vector<uint8_t> t = patternTile(30 + k);
    std::memcpy(slot(k).data(), t.data(), t.size());
  }
  rig.engine.kernelFinished({2, 2}, 6000);  // another core: nothing to store
  CHECK(rig.engine.counters().epilogueTiles == 0);
  rig.engine.kernelFinished(rig.noc, 5000);
  for (uint32_t k = 0; k < 3; ++k) {
    CHECK(isPattern(readDramTile(rig.dram, q, 1, k), 30 + k));
    CHECK(isPattern(readDramTile(rig.dram, q, 0, k), 10 + k));  // the other slot untouched
  }
  CHECK(rig.engine.counters().epilogueTiles == 3);
  CHECK(rig.engine.counters().dramWriteBytes == 3 * kTile);
  // The writes start at the kernel's end and follow each other on the channel.
  CHECK(rig.engine.lastActivity(rig.noc) > 5000 + 3 * dramTransferCycles(rig.model.dram, kTile) - 1);
  const QueueHeader after = readQueueHeader(rig.dram, q.channel, q.address);
  CHECK(after.wrPtr == 1);  // a ram's pointers do not move
  CHECK(after.rdPtr == 0);
  // Stored once per epoch.
  rig.engine.kernelFinished(rig.noc, 9000);
  CHECK(rig.engine.counters().epilogueTiles == 3);
}

TEST_CASE("gradient: configuration faults name the stream and the rule", "[simchip][gradient][fault]") {
  Rig rig;
  const uint64_t addr = dramNocAddress(grayskull(), 0, 0x4000);
  StreamFault fault;
  SECTION("without dram_ram") {
    StreamPhase p = gradientPhase(2, addr, 1);
    p.dramRam = false;
    REQUIRE_FALSE(rig.configure({p}, fault));
    CHECK(fault.category == "bad-stream-config");
    CHECK(contains(fault.message, "core 'grad[0,0]': stream 24: phase 0 (phase_id 0): a gradient accumulator"));
  }
  SECTION("more tiles than the buffer holds") {
    StreamPhase p = gradientPhase(2, addr, 1);
    p.bufSize = kTile;
    REQUIRE_FALSE(rig.configure({p}, fault));
    CHECK(fault.category == "bad-stream-config");
    CHECK(contains(fault.message, "a gradient accumulator of 2 tiles must fit its buffer of 1 tiles"));
  }
  SECTION("an address naming no DRAM channel") {
    REQUIRE_FALSE(rig.configure({gradientPhase(2, 0x10100001000ull, 1)}, fault));
    CHECK(fault.category == "dram-address");
  }
  SECTION("a slot past the channel's end") {
    const uint64_t end = rig.dram.channelBytes() - 64;
    REQUIRE(rig.configure({gradientPhase(2, dramNocAddress(grayskull(), 0, end), 1)}, fault));
    rig.engine.start(0);
    rig.engine.runPrologue(0);
    REQUIRE(rig.engine.fault());
    CHECK(rig.engine.fault()->category == "dram-address");
    CHECK(contains(rig.engine.fault()->message, "gradient accumulator: the ram cell's slot"));
  }
}
