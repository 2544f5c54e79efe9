// Host speed of the stream engine (hidden tag [.bench]; scripts/bench-sim-streams.sh
// runs it, docs/performance.md records it): 64 grayskull cores, each reading
// SIMCHIP_BENCH_TILES tiles (default 512) from its DRAM queue buffer
// (channels round-robin), sending them to its neighbour's relay stream over
// NOC 0, which writes them to another DRAM queue buffer. No kernels. The
// time is Chip::runEpoch alone; every output tile is checked afterwards.
#include "simchip_helpers.hpp"

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>

using namespace simchip;

TEST_CASE("streams benchmark: 64-core DRAM -> core -> DRAM copy", "[.bench]") {
  const char* env = std::getenv("SIMCHIP_BENCH_TILES");
  const uint32_t tiles = env ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : 512;
  const SocDescriptor& soc = grayskull();
  Chip chip(soc);
  chip.beginEpoch();
  std::vector<CoreCoord> cores;
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) cores.push_back(soc.workerCore(r, c));
  const uint64_t region = (uint64_t{tiles} * kTile + 0x10000) & ~uint64_t{0xFFFF};
  std::vector<uint8_t> tile(kTile);
  for (size_t i = 0; i < cores.size(); ++i) {
    const uint32_t ch = static_cast<uint32_t>(i % 8);
    const uint64_t in = region * (2 * (i / 8)), out = region * (2 * (i / 8) + 1);
    QueueHeader h;
    h.wrPtr = tiles;  // full: `tiles` entries of one tile
    REQUIRE(writeQueueHeader(chip.dram(), ch, in, h));
    REQUIRE(writeQueueHeader(chip.dram(), ch, out, QueueHeader{}));
    for (uint32_t t = 0; t < tiles; ++t) {
      std::memset(tile.data(), static_cast<int>((i * 7 + t) & 0xFF), tile.size());
      REQUIRE(chip.dram().write(ch, in + 32 + uint64_t{t} * kTile, tile));
    }
    const CoreCoord me = cores[i], next = cores[(i + 1) % cores.size()];
    StreamPhase read = phaseOf(tiles, kBuf0, 4);
    read.dramInput = true;
    read.remoteReceiver = true;
    read.dramBufNocAddr = dramNocAddress(soc, ch, in);
    read.dramBufSizeQSlots = tiles;
    read.dramBufSizeTiles = 1;
    read.dest = {sname(next.x, next.y, 1)};
    const CoreCoord prev = cores[(i + cores.size() - 1) % cores.size()];
    const uint32_t prevCh = static_cast<uint32_t>(((i + cores.size() - 1) % cores.size()) % 8);
    const uint64_t prevOut = region * (2 * (((i + cores.size() - 1) % cores.size()) / 8) + 1);
    StreamPhase write = phaseOf(tiles, kBuf1, 4);
    write.remoteSource = true;
    write.dramOutput = true;
    write.src = {sname(prev.x, prev.y, 0)};
    write.dramBufNocAddr = dramNocAddress(soc, prevCh, prevOut);
    write.dramBufSizeQSlots = tiles;
    write.dramBufSizeTiles = 1;
    loadBlob(chip, me.x, me.y, {streamOf(me.x, me.y, 0, {read}), streamOf(me.x, me.y, 1, {write})});
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  ChipRunResult r = chip.runEpoch();
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.message);
  REQUIRE(r.stop == ChipStop::Done);
  // Core i's tiles land in the output buffer core i+1 writes: same channel and region as core i's input.
  for (size_t i = 0; i < cores.size(); ++i) {
    const uint32_t ch = static_cast<uint32_t>(i % 8);
    const uint64_t out = region * (2 * (i / 8) + 1);
    for (uint32_t t = 0; t < tiles; t += 97) {
      REQUIRE(chip.dram().read(ch, out + 32 + uint64_t{t} * kTile, tile));
      REQUIRE(tile == std::vector<uint8_t>(kTile, static_cast<uint8_t>((i * 7 + t) & 0xFF)));
    }
    CHECK(readQueueHeader(chip.dram(), ch, out).wrPtr == wrapPointer(tiles, tiles));
  }
  const uint64_t moved = r.streams.tilesMoved();
  CHECK(moved == 3 * uint64_t{tiles} * cores.size());
  std::printf("sim streams: 64 cores x %u tiles, %llu tile transfers (DRAM read, NOC, DRAM write) in %.3f s wall, "
              "%.3f s CPU: %.0f tiles/s per CPU second (%.0f per wall second), %.1f MB/s; simulated %llu cycles\n",
              tiles, static_cast<unsigned long long>(moved), secs, cpu, moved / cpu, moved / secs,
              moved * double{kTile} / cpu / 1e6, static_cast<unsigned long long>(r.cycles));
}
