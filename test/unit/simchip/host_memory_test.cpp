// Host memory behind the PCIe core (`loc: host` queues): NOC addresses on the
// PCIe core decode to host memory, the stream engine reads and writes host
// memory (never DRAM) for them, with the PCIe link's timing.
#include "simchip_helpers.hpp"

#include "sim/noc.hpp"

using namespace simchip;

TEST_CASE("host memory: NOC addresses on the PCIe core", "[simchip][host]") {
  const SocDescriptor& soc = grayskull();  // PCIe core 0-4: (4 << 6 | 0) << 32
  std::optional<DramLocation> loc = decodeDramNocAddress(soc, 0x10000001000ull);
  REQUIRE(loc);
  CHECK(loc->host);
  CHECK(loc->channel == 0);
  CHECK(loc->address == 0x1000);
  CHECK(loc->core == CoreCoord{0, 4});
  loc = decodeDramNocAddress(soc, 0x100C0002000ull);  // host memory 3: 3 GiB into the window
  REQUIRE(loc);
  CHECK(loc->host);
  CHECK(loc->channel == 3);
  CHECK(loc->address == 0x2000);
  CHECK(hostNocAddress(soc, 3, 0x2000) == 0x100C0002000ull);
  CHECK_FALSE(hostNocAddress(soc, kHostChannels, 0));
  CHECK_FALSE(hostNocAddress(soc, 0, kHostChannelBytes));
  // DRAM stays DRAM.
  loc = decodeDramNocAddress(soc, dramNocAddress(soc, 3, 0x1000));
  REQUIRE(loc);
  CHECK_FALSE(loc->host);
  // wormhole_b0's PCIe core is 0-3.
  const SocDescriptor wh = loadBundledDescriptor("wormhole_b0_8x10");
  CHECK(hostNocAddress(wh, 0, 0x1000) == 0xC000001000ull);
  loc = decodeDramNocAddress(wh, 0xC000001000ull);
  REQUIRE(loc);
  CHECK(loc->host);
}

TEST_CASE("host memory: a host queue read into a core's input operand", "[simchip][host]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // Host memory 0 at 0x1000: 4 slots of 2 tiles, rd 1, wr 3 (2 entries).
  const Queue q{0, 0x1000, 4, 2};
  QueueHeader h;
  h.rdPtr = 1;
  h.wrPtr = 3;
  REQUIRE(writeQueueHeader(chip.hostMemory(), q.channel, q.address, h));
  for (uint32_t slot = 0; slot < 4; ++slot)
    for (uint32_t t = 0; t < 2; ++t) writeDramTile(chip.hostMemory(), q, slot, t, 100 + slot * 10 + t);
  // The same address in DRAM channel 0 holds other tiles: they must not be read.
  for (uint32_t slot = 0; slot < 4; ++slot)
    for (uint32_t t = 0; t < 2; ++t) writeDramTile(chip.dram(), q, slot, t, 200 + slot * 10 + t);
  REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, h));
  const uint64_t noc = *hostNocAddress(grayskull(), q.channel, q.address);
  // Two phases of 2 tiles (more than the ring): no prologue, the streamed path.
  loadBlob(chip, 1, 1,
           {streamOf(1, 1, 8, {dramToKernel(2, kBuf0, 4, noc, 4, 2), dramToKernel(2, kBuf0, 4, noc, 4, 2)})});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(chip.core({1, 1})->tilesReceived(0) == 4);
  CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, 0), 110));
  CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, 1), 111));
  CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, 2), 120));
  CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, 3), 121));
  CHECK(readQueueHeader(chip.hostMemory(), q.channel, q.address).rdPtr == 3);  // popped in host memory
  CHECK(readQueueHeader(chip.dram(), q.channel, q.address).rdPtr == 1);        // DRAM untouched
  // Cycle model: reads serialise on the PCIe link; a tile arrives after the
  // PCIe latency and NOC 0 from 0-4 to 1-1: 1 + (1 - 4) mod 12 = 10 hops.
  const DataMovementModel& m = chip.model();
  const uint64_t xfer = (kTile + m.pcie.bytesPerCycle - 1) / m.pcie.bytesPerCycle;
  const uint64_t latency = m.pcie.latency + m.noc.baseLatency + 10 * m.noc.hopCycles;
  const uint64_t phase1 = (2 * xfer + latency) / 256 * 256;
  CHECK(r.cycles == phase1 + 2 * xfer + latency);
}

TEST_CASE("host memory: a packer writes a host queue", "[simchip][host]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  const Queue q{1, 0x8000, 4, 2};
  QueueHeader h;
  h.rdPtr = 2;
  h.wrPtr = 3;
  REQUIRE(writeQueueHeader(chip.hostMemory(), q.channel, q.address, h));
  loadBlob(chip, 2, 3,
           {streamOf(2, 3, 24, {packerToDram(4, kBuf0, 4, *hostNocAddress(grayskull(), q.channel, q.address), 4, 2)})});
  prePush(chip, 2, 3, 16, kBuf0, 4, {10, 11, 12, 13});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(isPattern(readDramTile(chip.hostMemory(), q, 3, 0), 10));
  CHECK(isPattern(readDramTile(chip.hostMemory(), q, 3, 1), 11));
  CHECK(isPattern(readDramTile(chip.hostMemory(), q, 0, 0), 12));
  CHECK(isPattern(readDramTile(chip.hostMemory(), q, 0, 1), 13));
  CHECK(readQueueHeader(chip.hostMemory(), q.channel, q.address).wrPtr == 5);
  CHECK(chip.dram().residentBytes() == 0);  // nothing went to device DRAM
  CHECK(chip.core({2, 3})->tilesAcked(16) == 4);
}

TEST_CASE("host memory: a padding tile in host memory is a bad blob", "[simchip][host]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  StreamPhase p = dramToKernel(1, kBuf0, 1, *hostNocAddress(grayskull(), 0, 0), 1, 1);
  p.dramRam = true;
  p.dramPadding = true;
  loadBlob(chip, 1, 1, {streamOf(1, 1, 8, {p})});
  ChipRunResult r = run(chip);
  CHECK(r.stop == ChipStop::Fault);
  CHECK(contains(r.message, "must be in device DRAM, not host memory"));
}
