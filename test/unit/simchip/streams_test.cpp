// The stream engine on the chip without kernels: hand-built blobs (encoded
// with lib/blob and loaded into L1 as .hex), the packer's pushes done by the
// test before the epoch, the unpacker's pops never done (buffers sized to
// hold everything unless the test is about flow control). Every moved tile
// is compared byte for byte with the pattern the test wrote.
#include "simchip_helpers.hpp"

#include "sim/noc.hpp"

using namespace simchip;

TEST_CASE("noc: hop counts follow the two NOC directions on the torus", "[simchip][noc]") {
  // grayskull grid 13 x 12
  CHECK(nocHops(0, {1, 1}, {3, 2}, 13, 12) == 3);
  CHECK(nocHops(1, {1, 1}, {3, 2}, 13, 12) == 11 + 11);
  CHECK(nocHops(0, {3, 2}, {1, 1}, 13, 12) == 11 + 11);
  CHECK(nocHops(1, {3, 2}, {1, 1}, 13, 12) == 3);
  CHECK(nocHops(0, {12, 11}, {0, 0}, 13, 12) == 2);  // wraps
  CHECK(nocHops(0, {5, 5}, {5, 5}, 13, 12) == 0);
  NocParams p;
  p.bytesPerCycle = 32;
  p.headerCycles = 2;
  p.baseLatency = 16;
  p.hopCycles = 2;
  CHECK(nocSerializationCycles(p, 2080) == 2 + 65);
  CHECK(nocLatencyCycles(p, 3) == 22);
}

TEST_CASE("dram: sparse channels, headers and NOC addresses", "[simchip][dram]") {
  const SocDescriptor& soc = grayskull();
  Dram dram(soc);
  CHECK(dram.channelCount() == 8);
  CHECK(dram.residentBytes() == 0);
  std::vector<uint8_t> b(8, 0xAA);
  REQUIRE(dram.read(3, 0x3FFFFFF0, b));
  CHECK(b == std::vector<uint8_t>(8, 0));
  CHECK_FALSE(dram.read(3, dram.channelBytes() - 4, b));  // crosses the end
  CHECK_FALSE(dram.write(8, 0, b));                        // no channel 8
  const std::vector<uint8_t> data = {1, 2, 3, 4, 5, 6, 7, 8};
  REQUIRE(dram.write(2, Dram::kPageBytes - 4, data));  // across a page boundary
  REQUIRE(dram.read(2, Dram::kPageBytes - 4, b));
  CHECK(b == data);
  CHECK(dram.residentBytes() == 2 * Dram::kPageBytes);

  QueueHeader h;
  h.rdPtr = 3;
  h.wrPtr = 7;
  h.slots = 4;
  REQUIRE(writeQueueHeader(dram, 1, 0x100, h));
  CHECK(dram.read32(1, 0x100) == 3);
  CHECK(dram.read32(1, 0x110) == 7);
  CHECK(dram.read32(1, 0x118) == 4);
  CHECK(readQueueHeader(dram, 1, 0x100).wrPtr == 7);
  CHECK(queueOccupancy(3, 7, 4) == 4);
  CHECK(queueOccupancy(7, 1, 4) == 2);
  CHECK(queueOccupancy(5, 5, 4) == 0);

  // Channel 3's NOC core is 4-6: (6 << 6 | 4) << 32, as BUDA's dram_buf_noc_addr.
  std::optional<DramLocation> loc = decodeDramNocAddress(soc, 0x18400001000ull);
  REQUIRE(loc);
  CHECK(loc->channel == 3);
  CHECK(loc->address == 0x1000);
  CHECK(dramNocAddress(soc, 3, 0x1000) == 0x18400001000ull);
  CHECK_FALSE(decodeDramNocAddress(soc, 0x10100001000ull));  // 1-4 is a worker, not DRAM
}

TEST_CASE("streams: DRAM queue to a core's input operand", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // Queue buffer on channel 3 at 0x1000: 4 slots of 2 tiles, rd 1, wr 4 (3 entries).
  const Queue q{3, 0x1000, 4, 2};
  QueueHeader h;
  h.rdPtr = 1;
  h.wrPtr = 4;
  REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, h));
  for (uint32_t slot = 0; slot < 4; ++slot)
    for (uint32_t t = 0; t < 2; ++t) writeDramTile(chip.dram(), q, slot, t, 100 + slot * 10 + t);
  // Stream 8 (operand 0) of core 1-1 reads 2 entries (4 tiles) into a ring of
  // 2 slots: more than one phase of 2 tiles each, so the prologue does not apply.
  const uint64_t noc = 0x18400001000ull;
  loadBlob(chip, 1, 1,
           {streamOf(1, 1, 8, {dramToKernel(2, kBuf0, 4, noc, 4, 2), dramToKernel(2, kBuf0, 4, noc, 4, 2)})});
  // Something a blob cannot say is added after the firmware, before the harts.
  ChipRunOptions options;
  std::vector<CoreCoord> seen;
  options.afterFirmware = [&](CoreCoord at, TensixCore& c) {
    seen.push_back(at);
    CHECK(c.operand(0).baseAddress == kBuf0);  // the firmware's table is there
    contract::OperandEntry out{};
    out.baseAddress = kBuf2;
    out.capacityTiles = 1;
    out.flags = contract::kOperandUntilized;
    c.writeOperand(16, out);
  };
  ChipRunResult r = run(chip, options);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == CoreCoord{1, 1});
  REQUIRE(r.stop == ChipStop::Done);
  TensixCore& core = *chip.core({1, 1});
  CHECK(core.tilesReceived(0) == 4);
  // Entries at pointers 1 and 2 = slots 1 and 2.
  CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, 0), 110));
  CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, 1), 111));
  CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, 2), 120));
  CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, 3), 121));
  // The firmware wrote the operand table from the blob.
  const contract::OperandEntry e = core.operand(0);
  CHECK(e.baseAddress == kBuf0);
  CHECK(e.tileSizeBytes == kTile);
  CHECK(e.capacityTiles == 4);
  CHECK(e.dataFormat == 2);
  CHECK(e.flags == 0);
  CHECK(core.operand(16).flags == contract::kOperandUntilized);  // added by afterFirmware
  // The only reader (total_readers 1) left slots 1 and 2: rd_ptr 1 -> 3.
  const QueueHeader after = readQueueHeader(chip.dram(), q.channel, q.address);
  CHECK(after.rdPtr == 3);
  CHECK(after.wrPtr == 4);
  CHECK(r.streams.dramReadTiles == 4);
  CHECK(r.streams.prologueTiles == 0);
  // Cycle model: reads serialise on channel 3 (each keeps it busy
  // ceil(2080 / bw) cycles); a tile arrives after the DRAM latency and NOC 0
  // from 4-6 to 1-1: (1 - 4) mod 13 + (1 - 6) mod 12 = 17 hops. Phase 1
  // starts when phase 0's tiles have arrived, at the start of the 256-cycle
  // round in which the second one arrived.
  const DataMovementModel& m = chip.model();
  const uint64_t xfer = (kTile + m.dram.bytesPerCycle - 1) / m.dram.bytesPerCycle;
  const uint64_t latency = m.dram.latency + m.noc.baseLatency + 17 * m.noc.hopCycles;
  const uint64_t phase1 = (2 * xfer + latency) / 256 * 256;
  CHECK(r.cycles == phase1 + 2 * xfer + latency);
}

TEST_CASE("streams: the prologue preloads a DRAM buffer that fits in L1", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  const Queue q{0, 0x2000, 1, 3};
  QueueHeader h;
  h.wrPtr = 1;
  REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, h));
  for (uint32_t t = 0; t < 3; ++t) writeDramTile(chip.dram(), q, 0, t, 50 + t);
  loadBlob(chip, 2, 1, {streamOf(2, 1, 9, {dramToKernel(3, kBuf0, 3, dramNocAddress(grayskull(), 0, 0x2000), 1, 3)})});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(r.streams.prologueTiles == 3);
  CHECK(r.prologueCycles > 0);
  CHECK(chip.core({2, 1})->tilesReceived(1) == 3);
  for (uint32_t t = 0; t < 3; ++t) CHECK(isPattern(l1Slot(chip, 2, 1, kBuf0, t), 50 + t));
  // A FIFO reader (no period) leaves the slot after its last tile: popped.
  CHECK(readQueueHeader(chip.dram(), q.channel, q.address).rdPtr == 1);
}

TEST_CASE("streams: packer to a remote core, unicast", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  loadBlob(chip, 1, 1, {streamOf(1, 1, 24, {packerToRemote(3, kBuf0, 4, {sname(3, 2, 8)})})});
  loadBlob(chip, 3, 2, {streamOf(3, 2, 8, {remoteToKernel(3, kBuf1, 3, {sname(1, 1, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 4, {7, 8, 9});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(r.ok());
  CHECK(chip.core({3, 2})->tilesReceived(0) == 3);
  CHECK(chip.core({1, 1})->tilesAcked(16) == 3);  // the stream freed the packer's slots
  for (uint32_t t = 0; t < 3; ++t) CHECK(isPattern(l1Slot(chip, 3, 2, kBuf1, t), 7 + t));
  CHECK(r.streams.nocTiles == 3);
  CHECK(r.streams.nocBytes == 3 * kTile);
  // Cycle model: three packets serialised on the sender's NOC 0 port, the
  // last one arriving after 3 hops (1-1 -> 3-2).
  const NocParams& p = chip.model().noc;
  const uint64_t ser = p.headerCycles + (kTile + p.bytesPerCycle - 1) / p.bytesPerCycle;
  const uint64_t lastArrival = 3 * ser + p.baseLatency + 3 * p.hopCycles;
  CHECK(r.cycles == lastArrival);
}

TEST_CASE("streams: gather from three cores keeps the source order", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // D = 5-3 gathers from A = 1-1 (far), B = 4-3 (1 hop), C = 5-2 (1 hop), in that order.
  const StreamName d = sname(5, 3, 8);
  loadBlob(chip, 1, 1, {streamOf(1, 1, 24, {packerToRemote(2, kBuf0, 2, {d})})});
  loadBlob(chip, 4, 3, {streamOf(4, 3, 24, {packerToRemote(2, kBuf0, 2, {d})})});
  loadBlob(chip, 5, 2, {streamOf(5, 2, 24, {packerToRemote(2, kBuf0, 2, {d})})});
  loadBlob(chip, 5, 3,
           {streamOf(5, 3, 8, {remoteToKernel(6, kBuf1, 6, {sname(1, 1, 24), sname(4, 3, 24), sname(5, 2, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 2, {1, 2});
  prePush(chip, 4, 3, 16, kBuf0, 2, {3, 4});
  prePush(chip, 5, 2, 16, kBuf0, 2, {5, 6});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(chip.core({5, 3})->tilesReceived(0) == 6);
  for (uint32_t t = 0; t < 6; ++t) CHECK(isPattern(l1Slot(chip, 5, 3, kBuf1, t), 1 + t));
}

TEST_CASE("streams: multicast to four cores", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  const std::vector<StreamName> dests = {sname(2, 2, 8), sname(3, 2, 8), sname(4, 2, 8), sname(5, 2, 8)};
  loadBlob(chip, 1, 2, {streamOf(1, 2, 24, {packerToRemote(3, kBuf0, 3, dests)})});
  for (int x = 2; x <= 5; ++x) loadBlob(chip, x, 2, {streamOf(x, 2, 8, {remoteToKernel(3, kBuf1, 3, {sname(1, 2, 24)})})});
  prePush(chip, 1, 2, 16, kBuf0, 3, {40, 41, 42});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  for (int x = 2; x <= 5; ++x) {
    INFO("receiver " << x << "-2");
    CHECK(chip.core({x, 2})->tilesReceived(0) == 3);
    for (uint32_t t = 0; t < 3; ++t) CHECK(isPattern(l1Slot(chip, x, 2, kBuf1, t), 40 + t));
  }
  CHECK(r.streams.nocTiles == 12);  // 3 tiles x 4 destinations
  CHECK(chip.core({1, 2})->tilesAcked(16) == 3);
  // One injection per tile: the farthest receiver (4 hops) gets the last tile
  // after three serialisations.
  const NocParams& p = chip.model().noc;
  const uint64_t ser = p.headerCycles + (kTile + p.bytesPerCycle - 1) / p.bytesPerCycle;
  CHECK(r.cycles == 3 * ser + p.baseLatency + 4 * p.hopCycles);
}

TEST_CASE("streams: DRAM output writes entries and moves the write pointer", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // 4 slots of 2 tiles; rd 2, wr 3: one entry held, room for three.
  const Queue q{2, 0x8000, 4, 2};
  QueueHeader h;
  h.rdPtr = 2;
  h.wrPtr = 3;
  REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, h));
  loadBlob(chip, 2, 3,
           {streamOf(2, 3, 24, {packerToDram(4, kBuf0, 4, dramNocAddress(grayskull(), 2, 0x8000), 4, 2)})});
  prePush(chip, 2, 3, 16, kBuf0, 4, {10, 11, 12, 13});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  // Entry 0 at pointer 3 (slot 3), entry 1 at pointer 4 (slot 0).
  CHECK(isPattern(readDramTile(chip.dram(), q, 3, 0), 10));
  CHECK(isPattern(readDramTile(chip.dram(), q, 3, 1), 11));
  CHECK(isPattern(readDramTile(chip.dram(), q, 0, 0), 12));
  CHECK(isPattern(readDramTile(chip.dram(), q, 0, 1), 13));
  const QueueHeader after = readQueueHeader(chip.dram(), q.channel, q.address);
  CHECK(after.wrPtr == 5);
  CHECK(after.rdPtr == 2);
  CHECK(r.streams.dramWriteTiles == 4);
  CHECK(chip.core({2, 3})->tilesAcked(16) == 4);
}

TEST_CASE("streams: a full DRAM queue stops the writer with a report", "[simchip][streams][hang]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  QueueHeader h;
  h.rdPtr = 0;
  h.wrPtr = 1;  // 1 of 2 slots used
  REQUIRE(writeQueueHeader(chip.dram(), 4, 0x0, h));
  loadBlob(chip, 2, 3, {streamOf(2, 3, 24, {packerToDram(2, kBuf0, 2, dramNocAddress(grayskull(), 4, 0), 2, 1)})});
  prePush(chip, 2, 3, 16, kBuf0, 2, {1, 2});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Hang);
  CHECK(contains(r.message, "core '2-3' stream 24 phase 0"));
  CHECK(contains(r.message, "waits for DRAM space"));
  CHECK(contains(r.message, "is full (rd_ptr 0, wr_ptr 2, 2 slots)"));
  CHECK(readQueueHeader(chip.dram(), 4, 0).wrPtr == 2);
}

TEST_CASE("streams: an empty DRAM queue stops the reader with a report", "[simchip][streams][hang]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  QueueHeader h;  // rd 0, wr 0: empty
  REQUIRE(writeQueueHeader(chip.dram(), 1, 0x400, h));
  loadBlob(chip, 1, 1, {streamOf(1, 1, 8, {dramToKernel(1, kBuf0, 1, dramNocAddress(grayskull(), 1, 0x400), 2, 1)}, 2)});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Hang);
  CHECK(contains(r.message, "core '1-1' stream 8 phase 0 (phase_id 0, iteration 1 of 2, 0 of 1 tiles)"));
  CHECK(contains(r.message, "waits for DRAM data"));
  CHECK(contains(r.message, "channel 1 address 0x400"));
}

TEST_CASE("streams: a relay ring smaller than the phase wraps", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // A 1-1 (7 tiles) -> relay stream 40 on 2-1 (2-slot ring) -> B 3-1 (8 slots).
  loadBlob(chip, 1, 1, {streamOf(1, 1, 24, {packerToRemote(7, kBuf0, 8, {sname(2, 1, 40)})})});
  loadBlob(chip, 2, 1, {streamOf(2, 1, 40, {relay(7, kBuf2, 2, {sname(1, 1, 24)}, {sname(3, 1, 8)})})});
  loadBlob(chip, 3, 1, {streamOf(3, 1, 8, {remoteToKernel(7, kBuf1, 8, {sname(2, 1, 40)})})});
  prePush(chip, 1, 1, 16, kBuf0, 8, {20, 21, 22, 23, 24, 25, 26});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  for (uint32_t t = 0; t < 7; ++t) CHECK(isPattern(l1Slot(chip, 3, 1, kBuf1, t), 20 + t));
  // The relay's two slots last held tiles 5 (slot 1... ) and 6: tile k sits in slot k % 2.
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf2, 0), 26));
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf2, 1), 25));
  CHECK(r.streams.nocTiles == 14);
}

TEST_CASE("streams: credits stop a sender at a full receiver", "[simchip][streams][hang]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // Receiver ring of 2 slots and no kernel to pop it: only 2 of 6 tiles can move.
  loadBlob(chip, 1, 1, {streamOf(1, 1, 24, {packerToRemote(6, kBuf0, 6, {sname(2, 1, 8)})})});
  loadBlob(chip, 2, 1, {streamOf(2, 1, 8, {remoteToKernel(6, kBuf1, 2, {sname(1, 1, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 6, {1, 2, 3, 4, 5, 6});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Hang);
  CHECK(chip.core({2, 1})->tilesReceived(0) == 2);
  CHECK(chip.core({1, 1})->tilesAcked(16) == 2);
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf1, 0), 1));
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf1, 1), 2));
  CHECK(contains(r.message, "chip: hang at cycle"));
  CHECK(contains(r.message, "core '1-1' stream 24 phase 0 (phase_id 0, iteration 1 of 1, 2 of 6 tiles)"));
  CHECK(contains(r.message, "waits for credits from chip_0__y_1__x_2__stream_id_8: its buffer is full (2 of 2 tiles)"));
  CHECK(contains(r.message, "core '2-1' stream 8 phase 0"));
  CHECK(contains(r.message, "waits for the kernel to pop operand 0 (buffer full: received 2, acked 0, capacity 2)"));
  REQUIRE(r.waitingStreams.size() == 2);
}

TEST_CASE("streams: a missing receiver is reported as a hang", "[simchip][streams][hang]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  loadBlob(chip, 1, 1, {streamOf(1, 1, 24, {packerToRemote(2, kBuf0, 2, {sname(2, 1, 9)})})});
  loadBlob(chip, 2, 1, {streamOf(2, 1, 8, {remoteToKernel(2, kBuf1, 2, {sname(1, 1, 24)})})});  // 8, not 9
  prePush(chip, 1, 1, 16, kBuf0, 2, {1, 2});
  ChipRunOptions options;
  options.hangRounds = 4;
  ChipRunResult r = run(chip, options);
  REQUIRE(r.stop == ChipStop::Hang);
  CHECK(r.cycles < 16 * 256);  // detected within a few rounds, never spins
  CHECK(contains(r.message, "core '1-1' stream 24 phase 0 (phase_id 0, iteration 1 of 1, 0 of 2 tiles): waits for "
                            "receiver chip_0__y_1__x_2__stream_id_9: no such stream is configured"));
  CHECK(contains(r.message, "core '2-1' stream 8 phase 0 (phase_id 0, iteration 1 of 1, 0 of 2 tiles): waits for "
                            "data from chip_0__y_1__x_1__stream_id_24 (0 of 2 tiles received)"));
}

TEST_CASE("streams: multiple phases and num_iters_in_epoch", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // A's phases: 2 tiles to B, then 3 tiles to C; twice.
  loadBlob(chip, 1, 1,
           {streamOf(1, 1, 24,
                     {packerToRemote(2, kBuf0, 10, {sname(2, 1, 8)}), packerToRemote(3, kBuf0, 10, {sname(3, 1, 8)})},
                     2)});
  loadBlob(chip, 2, 1, {streamOf(2, 1, 8, {remoteToKernel(2, kBuf1, 4, {sname(1, 1, 24)})}, 2)});
  loadBlob(chip, 3, 1, {streamOf(3, 1, 8, {remoteToKernel(3, kBuf1, 6, {sname(1, 1, 24)})}, 2)});
  prePush(chip, 1, 1, 16, kBuf0, 10, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(chip.core({2, 1})->tilesReceived(0) == 4);
  CHECK(chip.core({3, 1})->tilesReceived(0) == 6);
  const uint32_t toB[] = {0, 1, 5, 6};
  const uint32_t toC[] = {2, 3, 4, 7, 8, 9};
  for (uint32_t i = 0; i < 4; ++i) CHECK(isPattern(l1Slot(chip, 2, 1, kBuf1, i), toB[i]));
  for (uint32_t i = 0; i < 6; ++i) CHECK(isPattern(l1Slot(chip, 3, 1, kBuf1, i), toC[i]));
  std::optional<StreamStatus> a = chip.streams().status(sname(1, 1, 24));
  REQUIRE(a);
  CHECK(a->done);
  CHECK(a->iteration == 2);
  CHECK(a->tilesOut == 10);
}

TEST_CASE("streams: faults name the core and stream", "[simchip][streams][fault]") {
  Chip chip(grayskull());
  SECTION("a buffer outside the data buffer area is an L1 overflow") {
    chip.beginEpoch();
    loadBlob(chip, 4, 4, {streamOf(4, 4, 8, {remoteToKernel(2, 0xFF000, 2, {sname(1, 1, 24)})})});
    ChipRunResult r = run(chip);
    REQUIRE(r.stop == ChipStop::Fault);
    CHECK(r.faultCategory == "l1-overflow");
    CHECK(r.faultCore == "4-4");
    CHECK(contains(r.message, "core '4-4': stream 8: phase 0 (phase_id 0): buffer [0xff000, 0x100040) is outside"));
  }
  SECTION("a DRAM address naming no channel") {
    chip.beginEpoch();
    loadBlob(chip, 4, 4, {streamOf(4, 4, 8, {dramToKernel(2, kBuf0, 2, 0x10100001000ull, 1, 2)})});
    ChipRunResult r = run(chip);
    REQUIRE(r.stop == ChipStop::Fault);
    CHECK(r.faultCategory == "dram-address");
    CHECK(contains(r.message, "core '4-4': stream 8"));
  }
  SECTION("a malformed blob") {
    chip.beginEpoch();
    loadBlob(chip, 4, 4, {streamOf(4, 4, 8, {remoteToKernel(2, kBuf0, 2, {sname(1, 1, 24)})})});
    chip.core({4, 4})->l1()[contract::kOverlayBlobBase + 8] ^= 0xFF;  // total bytes field
    chip.setCoreName({4, 4}, "op 'add0'");
    ChipRunResult r = run(chip);
    REQUIRE(r.stop == ChipStop::Fault);
    CHECK(r.faultCategory == "bad-blob");
    CHECK(r.faultCore == "op 'add0'");
    CHECK(contains(r.message, "core 'op 'add0''"));
  }
  SECTION("a blob loaded into the wrong core") {
    chip.beginEpoch();
    CoreBlob b;
    b.x = 5;
    b.y = 5;
    std::string error;
    REQUIRE(chip.loadBlobWords({4, 4}, blob::encodeCoreBlob(b), error));
    ChipRunResult r = run(chip);
    REQUIRE(r.stop == ChipStop::Fault);
    CHECK(contains(r.message, "is for core 5-5"));
  }
}

TEST_CASE("chip: a new epoch starts from fresh counters and no blob", "[simchip]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  loadBlob(chip, 1, 1, {streamOf(1, 1, 24, {packerToRemote(1, kBuf0, 2, {sname(2, 1, 8)})})});
  loadBlob(chip, 2, 1, {streamOf(2, 1, 8, {remoteToKernel(1, kBuf1, 2, {sname(1, 1, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 2, {5});
  REQUIRE(run(chip).stop == ChipStop::Done);
  CHECK(chip.core({2, 1})->tilesReceived(0) == 1);

  chip.beginEpoch();
  CHECK(chip.core({2, 1})->tilesReceived(0) == 0);
  CHECK(chip.core({1, 1})->tilesAcked(16) == 0);
  // A stale operand table entry is cleared by the firmware.
  contract::OperandEntry stale{};
  stale.capacityTiles = 9;
  chip.core({2, 1})->writeOperand(5, stale);
  // Same streams again, now 2 tiles into slots 0 and 1.
  loadBlob(chip, 1, 1, {streamOf(1, 1, 24, {packerToRemote(2, kBuf0, 2, {sname(2, 1, 8)})})});
  loadBlob(chip, 2, 1, {streamOf(2, 1, 8, {remoteToKernel(2, kBuf1, 2, {sname(1, 1, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 2, {6, 7});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(r.streams.nocTiles == 2);
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf1, 0), 6));
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf1, 1), 7));
  CHECK(chip.core({2, 1})->operand(5).capacityTiles == 0);
  CHECK(chip.core({2, 1})->operand(0).capacityTiles == 2);

  // An epoch with nothing loaded is done at once.
  chip.beginEpoch();
  ChipRunResult empty = run(chip);
  CHECK(empty.stop == ChipStop::Done);
  CHECK(empty.cores.empty());
}

TEST_CASE("streams: wormhole_b0 geometry (8x10 workers, DRAM subchannels)", "[simchip][streams]") {
  const SocDescriptor soc = loadBundledDescriptor("wormhole_b0_8x10");
  Chip chip(soc);
  CHECK(chip.core({0, 0}) == nullptr);  // not a worker
  const CoreCoord a = soc.workerCore(0, 0), b = soc.workerCore(9, 7);  // 10 rows x 8 columns
  CHECK(soc.workerRows == 10);
  CHECK(soc.workerCols == 8);
  REQUIRE(chip.core(a));
  REQUIRE(chip.core(b));
  CHECK(chip.core(a)->l1().size() == 1464 * 1024);
  chip.beginEpoch();
  // a reads one entry of 2 tiles from channel 5 (any of its subchannel cores
  // may be named) and sends it to b, which writes it to channel 0.
  const CoreCoord sub = soc.dramChannels.at(5).back();
  const uint64_t nocIn = (uint64_t((sub.y << 6) | sub.x) << 32) | 0x100;
  QueueHeader h;
  h.wrPtr = 1;
  REQUIRE(writeQueueHeader(chip.dram(), 5, 0x100, h));
  const Queue in{5, 0x100, 1, 2};
  writeDramTile(chip.dram(), in, 0, 0, 70);
  writeDramTile(chip.dram(), in, 0, 1, 71);
  StreamPhase read = phaseOf(2, kBuf0, 2);
  read.dramInput = true;
  read.remoteReceiver = true;
  read.dramBufNocAddr = nocIn;
  read.dramBufSizeQSlots = 1;
  read.dramBufSizeTiles = 2;
  read.dest = {sname(b.x, b.y, 40)};
  StreamPhase write = phaseOf(2, kBuf0, 2);
  write.remoteSource = true;
  write.dramOutput = true;
  write.src = {sname(a.x, a.y, 0)};
  write.dramBufNocAddr = dramNocAddress(soc, 0, 0x200);
  write.dramBufSizeQSlots = 2;
  write.dramBufSizeTiles = 2;
  loadBlob(chip, a.x, a.y, {streamOf(a.x, a.y, 0, {read})});
  loadBlob(chip, b.x, b.y, {streamOf(b.x, b.y, 40, {write})});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  const Queue out{0, 0x200, 2, 2};
  CHECK(isPattern(readDramTile(chip.dram(), out, 0, 0), 70));
  CHECK(isPattern(readDramTile(chip.dram(), out, 0, 1), 71));
  CHECK(readQueueHeader(chip.dram(), 0, 0x200).wrPtr == 1);
  CHECK(chip.model().dram.bytesPerCycle == 32);
}

namespace {

// The test hook: a decoded blob given to the stream engine directly (the
// binary blob does not carry the windowed-source fields yet).
void configureDirect(Chip& chip, int x, int y, std::vector<Stream> streams) {
  REQUIRE(chip.core({x, y}));
  CoreBlob b;
  b.x = static_cast<uint32_t>(x);
  b.y = static_cast<uint32_t>(y);
  b.streams = std::move(streams);
  StreamFault f;
  INFO(f.message);
  REQUIRE(chip.streams().configure(b, f));
}

StreamPhase window(StreamPhase p, uint32_t period, uint32_t offset, bool done) {
  p.srcPeriodTiles = period;
  p.srcTileOffset = offset;
  p.srcPeriodDone = done;
  return p;
}

}  // namespace

TEST_CASE("streams: windowed DRAM reads, repeated tiles, and pops once every reader has left a slot", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // 3 slots of 4 tiles, all written; two readers share the rd pointer.
  const Queue q{6, 0x3000, 3, 4};
  QueueHeader h;
  h.wrPtr = 3;
  REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, h));
  for (uint32_t slot = 0; slot < 3; ++slot)
    for (uint32_t t = 0; t < 4; ++t) writeDramTile(chip.dram(), q, slot, t, 10 * slot + t);
  const uint64_t noc = dramNocAddress(grayskull(), 6, q.address);
  auto reader = [&](uint32_t n, uint32_t offset, bool done) {
    StreamPhase p = window(dramToKernel(n, kBuf0, 8, noc, 3, 4), 4, offset, done);
    p.dramTotalReaders = 2;
    return p;
  };
  // A: the whole period in two phases, then the next slot; twice (slots 0 and 1).
  configureDirect(chip, 1, 1, {streamOf(1, 1, 8, {reader(2, 0, false), reader(2, 2, true)}, 2)});
  // B: tile 1 of slot 0 twice (a broadcast), then tile 3 of slot 0, then leaves it.
  configureDirect(chip, 2, 1, {streamOf(2, 1, 8, {reader(1, 1, false), reader(1, 1, false), reader(1, 3, true)})});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  const uint32_t a[] = {0, 1, 2, 3, 10, 11, 12, 13};
  for (uint32_t i = 0; i < 8; ++i) CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, i), a[i]));
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf0, 0), 1));
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf0, 1), 1));
  CHECK(isPattern(l1Slot(chip, 2, 1, kBuf0, 2), 3));
  CHECK(chip.core({1, 1})->tilesReceived(0) == 8);
  CHECK(chip.core({2, 1})->tilesReceived(0) == 3);
  // A left slots 0 and 1, B only slot 0: the rd pointer moves past slot 0 only.
  CHECK(readQueueHeader(chip.dram(), q.channel, q.address).rdPtr == 1);
  CHECK(r.cycles > 0);
}

TEST_CASE("streams: a ram is read in place and never popped", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  const Queue q{6, 0x3000, 2, 1};
  QueueHeader h;
  h.rdPtr = 1;  // a ram's pointers are addresses: slot 1
  REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, h));
  writeDramTile(chip.dram(), q, 1, 0, 99);
  StreamPhase p = window(dramToKernel(1, kBuf0, 3, dramNocAddress(grayskull(), 6, q.address), 2, 1), 1, 0, false);
  p.dramRam = true;
  configureDirect(chip, 1, 1, {streamOf(1, 1, 8, {p}, 3)});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  for (uint32_t i = 0; i < 3; ++i) CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, i), 99));
  CHECK(readQueueHeader(chip.dram(), q.channel, q.address).rdPtr == 1);
}

TEST_CASE("streams: a windowed packer source sends tiles of its period to several receivers, then releases it", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // A's period is 4 tiles: [0,2) to B, [0,2) again to C, [2,4) to B, release.
  configureDirect(chip, 1, 1,
                  {streamOf(1, 1, 24,
                            {window(packerToRemote(2, kBuf0, 4, {sname(2, 1, 8)}), 4, 0, false),
                             window(packerToRemote(2, kBuf0, 4, {sname(3, 1, 8)}), 4, 0, false),
                             window(packerToRemote(2, kBuf0, 4, {sname(2, 1, 8)}), 4, 2, true)})});
  configureDirect(chip, 2, 1,
                  {streamOf(2, 1, 8, {remoteToKernel(2, kBuf1, 4, {sname(1, 1, 24)}),
                                      remoteToKernel(2, kBuf1, 4, {sname(1, 1, 24)})})});
  configureDirect(chip, 3, 1, {streamOf(3, 1, 8, {remoteToKernel(2, kBuf1, 2, {sname(1, 1, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 4, {30, 31, 32, 33});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  for (uint32_t i = 0; i < 4; ++i) CHECK(isPattern(l1Slot(chip, 2, 1, kBuf1, i), 30 + i));
  CHECK(isPattern(l1Slot(chip, 3, 1, kBuf1, 0), 30));
  CHECK(isPattern(l1Slot(chip, 3, 1, kBuf1, 1), 31));
  CHECK(chip.core({1, 1})->tilesAcked(16) == 4);  // the period was released at once
  CHECK(r.streams.nocTiles == 6);
}

TEST_CASE("streams: a windowed source waits for the packer and says so", "[simchip][streams][hang]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  configureDirect(chip, 1, 1,
                  {streamOf(1, 1, 24, {window(packerToRemote(2, kBuf0, 4, {sname(2, 1, 8)}), 4, 2, true)})});
  configureDirect(chip, 2, 1, {streamOf(2, 1, 8, {remoteToKernel(2, kBuf1, 4, {sname(1, 1, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 4, {1, 2, 3});  // tile 3 of the period is missing
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Hang);
  CHECK(chip.core({2, 1})->tilesReceived(0) == 1);  // tile 2 went, tile 3 never came
  CHECK(contains(r.message, "core '1-1' stream 24 phase 0 (phase_id 0, iteration 1 of 1, 1 of 2 tiles): waits for "
                            "data: the packer to push operand 16 (tile 3 of a 4-tile period"));
  CHECK(chip.core({1, 1})->tilesAcked(16) == 0);
}

TEST_CASE("streams: a window outside its period is a configuration fault", "[simchip][streams][fault]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  REQUIRE(chip.core({1, 1}));
  CoreBlob b;
  b.x = 1;
  b.y = 1;
  b.streams = {streamOf(1, 1, 24, {window(packerToRemote(3, kBuf0, 4, {sname(2, 1, 8)}), 4, 2, true)})};
  StreamFault f;
  REQUIRE_FALSE(chip.streams().configure(b, f));
  CHECK(f.category == "bad-stream-config");
  CHECK(f.core == "1-1");
  CHECK(contains(f.message, "core '1-1': stream 24: phase 0 (phase_id 0): tiles [2, 5) are not inside a period of 4 tiles"));
}

namespace {

StreamPhase chunks(StreamPhase p, uint32_t period, std::vector<uint32_t> offsets, uint32_t tiles, bool done) {
  p = window(p, period, offsets.front(), done);
  p.srcChunkOffsets = std::move(offsets);
  p.srcChunkTiles = tiles;
  return p;
}

}  // namespace

TEST_CASE("streams: a chunk list reads its chunks of the DRAM slot in list order", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // 2 slots of 4 tiles, tile t of slot s holds pattern 10 s + t. Per slot
  // one phase of chunks [2, 4) and [0, 2): tiles 2, 3, 0, 1; iterated twice.
  // Loaded through the binary blob, so the encoded chunk list is what runs.
  const Queue q{6, 0x3000, 2, 4};
  QueueHeader h;
  h.wrPtr = 2;
  REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, h));
  for (uint32_t slot = 0; slot < 2; ++slot)
    for (uint32_t t = 0; t < 4; ++t) writeDramTile(chip.dram(), q, slot, t, 10 * slot + t);
  StreamPhase read = chunks(dramToKernel(4, kBuf0, 8, dramNocAddress(grayskull(), 6, q.address), 2, 4), 4, {2, 0}, 2, true);
  loadBlob(chip, 1, 1, {streamOf(1, 1, 8, {read}, 2)});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  const uint32_t want[] = {2, 3, 0, 1, 12, 13, 10, 11};
  for (uint32_t i = 0; i < 8; ++i) CHECK(isPattern(l1Slot(chip, 1, 1, kBuf0, i), want[i]));
  CHECK(readQueueHeader(chip.dram(), q.channel, q.address).rdPtr == 2);
}

TEST_CASE("streams: a packer's chunk list sends its period out of order", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // A's period of 4 tiles goes to B as tiles 3, 1 (one phase, chunks of 1),
  // then 0, 2 (the next phase, which ends the period).
  loadBlob(chip, 1, 1,
           {streamOf(1, 1, 24,
                     {chunks(packerToRemote(2, kBuf0, 4, {sname(2, 1, 8)}), 4, {3, 1}, 1, false),
                      chunks(packerToRemote(2, kBuf0, 4, {sname(2, 1, 8)}), 4, {0, 2}, 1, true)})});
  loadBlob(chip, 2, 1, {streamOf(2, 1, 8, {remoteToKernel(4, kBuf1, 4, {sname(1, 1, 24)})})});
  prePush(chip, 1, 1, 16, kBuf0, 4, {30, 31, 32, 33});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  const uint32_t want[] = {33, 31, 30, 32};
  for (uint32_t i = 0; i < 4; ++i) CHECK(isPattern(l1Slot(chip, 2, 1, kBuf1, i), want[i]));
  CHECK(chip.core({1, 1})->tilesAcked(16) == 4);
}

TEST_CASE("streams: a chunk outside its period is a configuration fault", "[simchip][streams][fault]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  REQUIRE(chip.core({1, 1}));
  CoreBlob b;
  b.x = 1;
  b.y = 1;
  b.streams = {streamOf(1, 1, 24, {chunks(packerToRemote(4, kBuf0, 4, {sname(2, 1, 8)}), 4, {0, 3}, 2, true)})};
  StreamFault f;
  REQUIRE_FALSE(chip.streams().configure(b, f));
  CHECK(f.category == "bad-stream-config");
  CHECK(contains(f.message, "core '1-1': stream 24: phase 0 (phase_id 0): chunk [3, 5) of src_chunk_offsets is not "
                            "inside a period of 4 tiles"));
  // A list that does not add up to num_msgs (only a model built by hand can
  // have one: the decoder rejects it) is refused, not divided by.
  b.streams = {streamOf(1, 1, 24, {chunks(packerToRemote(4, kBuf0, 4, {sname(2, 1, 8)}), 4, {0, 2}, 0, true)})};
  REQUIRE_FALSE(chip.streams().configure(b, f));
  CHECK(contains(f.message, "2 chunks of 0 tiles are not its num_msgs 4"));
}

TEST_CASE("streams: untilized msgs land at their rows of the tensor; the firmware sets the row stride", "[simchip][streams][untilize]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // Blocks of 2x1 tiles (64 rows of 64 bytes) of a 2x2-tile Float16_b
  // tensor (64 rows of 128 bytes), one slice: a slot of 4 msgs of 2048
  // bytes. The stream writes two blocks: block 0 at columns 0-31, block 1
  // at columns 32-63 (in bytes: 0-63 and 64-127 of each 128-byte row).
  constexpr uint32_t kMsg = 2048;
  const uint64_t addr = 0x8000;
  QueueHeader h;
  h.slots = 1;
  REQUIRE(writeQueueHeader(chip.dram(), 2, addr, h));
  StreamPhase p = phaseOf(4, kBuf0, 4, kMsg);
  p.sourceEndpoint = true;
  p.dramOutput = true;
  p.dramBufNocAddr = dramNocAddress(grayskull(), 2, addr);
  p.dramBufSizeQSlots = 1;
  p.dramBufSizeTiles = 4;
  p.untilizeRDim = 2;
  p.untilizeCDim = 1;
  p.untilizeFullRDim = 2;
  p.untilizeFullCDim = 2;
  p.untilizeZDim = 1;
  loadBlob(chip, 2, 3, {streamOf(2, 3, 24, {p})});
  // The packer's 4 msgs: 16-bit word w of msg m holds m * 1024 + w.
  TensixCore* core = chip.core(CoreCoord{2, 3});
  REQUIRE(core);
  for (uint32_t m = 0; m < 4; ++m)
    for (uint32_t w = 0; w < 1024; ++w) {
      const uint16_t v = static_cast<uint16_t>(m * 1024 + w);
      std::memcpy(core->l1().data() + kBuf0 + m * kMsg + 2 * w, &v, 2);
    }
  core->addTilesReceived(16, 4);
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  const contract::OperandEntry e = core->operand(16);
  CHECK((e.flags & contract::kOperandUntilized) != 0);
  CHECK(e.rowStrideBytes == 64);  // one tile column of 2-byte datums
  std::vector<uint8_t> slot(4 * kMsg);
  REQUIRE(chip.dram().read(2, addr + kQueueHeaderBytes, slot));
  size_t wrong = 0;
  for (uint32_t m = 0; m < 4; ++m)
    for (uint32_t w = 0; w < 1024; ++w) {
      const uint32_t block = m / 2, b = (m % 2) * kMsg + 2 * w;  // byte in the block
      const uint32_t at = (b / 64) * 128 + block * 64 + b % 64;   // row, then block column
      uint16_t v = 0;
      std::memcpy(&v, slot.data() + at, 2);
      wrong += v != m * 1024 + w;
    }
  CHECK(wrong == 0);
  CHECK(readQueueHeader(chip.dram(), 2, addr).wrPtr == 1);
}

TEST_CASE("streams: src_freed_tiles releases a packer's period early", "[simchip][streams]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // A period of 4 tiles in a ring of 2 (accepted: the stream releases
  // early): phase 0 writes tiles 0 and 1 and frees them (ACKED 2), which is
  // what would let a packer push tiles 2 and 3 for phase 1. No kernel runs
  // here, so the run then stops waiting for the packer; without the early
  // release ACKED would stay 0.
  const Queue q{2, 0x8000, 1, 4};
  REQUIRE(writeQueueHeader(chip.dram(), q.channel, q.address, QueueHeader{}));
  auto windowed = [&](uint32_t offset, uint32_t freed, bool done) {
    StreamPhase p = packerToDram(2, kBuf0, 2, dramNocAddress(grayskull(), 2, 0x8000), 1, 4);
    p.srcPeriodTiles = 4;
    p.srcTileOffset = offset;
    p.srcFreedTiles = freed;
    p.srcPeriodDone = done;
    return p;
  };
  loadBlob(chip, 2, 3, {streamOf(2, 3, 24, {windowed(0, 2, false), windowed(2, 4, true)})});
  prePush(chip, 2, 3, 16, kBuf0, 2, {20, 21});
  ChipRunResult r = run(chip);
  INFO(r.message);
  CHECK(r.stop == ChipStop::Hang);
  CHECK(chip.core({2, 3})->tilesAcked(16) == 2);
  CHECK(isPattern(readDramTile(chip.dram(), q, 0, 0), 20));
  CHECK(isPattern(readDramTile(chip.dram(), q, 0, 1), 21));
}
