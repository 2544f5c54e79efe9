// Host speed of the simulated cluster against one chip doing the same work
// (hidden tag [.bench]; scripts/bench-cluster.sh runs it, docs/performance.md
// records it). The work: CLUSTER_BENCH_CORES wormhole_b0 cores (default 64)
// each read CLUSTER_BENCH_TILES tiles (default 256) from a DRAM ram of 16
// tiles (read round and round, so host memory stays small and the time is the
// simulator's, not page faults'), send them to a neighbour's stream, which
// writes them into another 16-tile ram.
// One chip runs all of it; two chips run half each, and one pair of cores per
// chip sends its tiles to the other chip over an ethernet link instead (so the
// chips are coupled every round). Printed: simulated cycles per host second
// of each, and the ratio. Every tile is checked to have been written.
#include "simchip_helpers.hpp"

#include "sim/cluster.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace simchip;

namespace {

uint32_t envOr(const char* name, uint32_t fallback) {
  const char* v = std::getenv(name);
  return v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : fallback;
}

StreamName at(ChipId chip, CoreCoord c, uint32_t id) {
  return StreamName{chip, static_cast<uint32_t>(c.y), static_cast<uint32_t>(c.x), id};
}

constexpr uint32_t kRamTiles = 16;

struct Work {
  uint32_t cores = 0, tiles = 0;
  uint64_t region = 0;
};

// `cores` copies on `chip` (cores from logical index `first`); when `eth`
// the last copy's tiles go to chip `peer` over channel 8 (from chip 0) or 0.
void setUp(Chip& chip, const SocDescriptor& soc, const Work& w, uint32_t first, bool eth, ChipId peer) {
  std::vector<CoreCoord> cores;
  for (uint32_t i = 0; i < w.cores; ++i) cores.push_back(soc.workers.at(first + i));
  std::vector<uint8_t> tile(kTile);
  const uint32_t channels = chip.dram().channelCount();
  for (size_t i = 0; i < cores.size(); ++i) {
    const uint32_t ch = static_cast<uint32_t>(i % channels);
    const uint64_t in = w.region * (2 * (i / channels)), out = w.region * (2 * (i / channels) + 1);
    QueueHeader h;
    h.wrPtr = 1;
    h.slots = 1;
    REQUIRE(writeQueueHeader(chip.dram(), ch, in, h));
    REQUIRE(writeQueueHeader(chip.dram(), ch, out, h));
    for (uint32_t t = 0; t < kRamTiles; ++t) {
      std::memset(tile.data(), static_cast<int>((i * 7 + t) & 0xFF), tile.size());
      REQUIRE(chip.dram().write(ch, in + 32 + uint64_t{t} * kTile, tile));
    }
    const CoreCoord me = cores[i], next = cores[(i + 1) % cores.size()];
    const bool cross = eth && i + 1 == cores.size();
    const CoreCoord myEth = chip.id() == 0 ? CoreCoord{9, 6} : CoreCoord{9, 0};
    const CoreCoord peerEth = chip.id() == 0 ? CoreCoord{9, 0} : CoreCoord{9, 6};
    StreamPhase read = phaseOf(w.tiles, kBuf0, 4);
    read.dramInput = true;
    read.remoteReceiver = true;
    read.dest = {cross ? at(chip.id(), myEth, 9) : at(chip.id(), next, 40)};
    read.dramBufNocAddr = dramNocAddress(soc, ch, in);
    read.dramRam = true;
    read.dramBufSizeQSlots = 1;
    read.dramBufSizeTiles = kRamTiles;
    StreamPhase write = phaseOf(w.tiles, kBuf1, 4);
    write.remoteSource = true;
    write.dramOutput = true;
    const CoreCoord prev = cores[(i + cores.size() - 1) % cores.size()];
    const bool fromEth = eth && i == 0;
    write.src = {fromEth ? at(chip.id(), myEth, 10) : at(chip.id(), prev, 41)};
    write.dramBufNocAddr = dramNocAddress(soc, ch, out);
    write.dramRam = true;
    write.dramBufSizeQSlots = 1;
    write.dramBufSizeTiles = kRamTiles;
    CoreBlob b;
    b.chip = chip.id();
    b.x = static_cast<uint32_t>(me.x);
    b.y = static_cast<uint32_t>(me.y);
    Stream rs, ws;
    rs.name = at(chip.id(), me, 41);
    rs.phases = {read};
    ws.name = at(chip.id(), me, 40);
    ws.phases = {write};
    b.streams = {rs, ws};
    std::string error;
    REQUIRE(chip.loadBlobWords(me, blob::encodeCoreBlob(b), error));
    if (cross) {  // this chip's relay out, and its relay in feeding core 0
      CoreBlob e;
      e.chip = chip.id();
      e.x = static_cast<uint32_t>(myEth.x);
      e.y = static_cast<uint32_t>(myEth.y);
      Stream out, in;
      out.name = at(chip.id(), myEth, 9);
      out.phases = {relay(w.tiles, contract::kEthDataBufferBase, 8, {at(chip.id(), me, 41)}, {at(peer, peerEth, 10)})};
      in.name = at(chip.id(), myEth, 10);
      in.phases = {relay(w.tiles, contract::kEthDataBufferBase + 8 * kTile, 8, {at(peer, peerEth, 9)}, {at(chip.id(), cores[0], 40)})};
      out.phases[0].ethSender = true;
      in.phases[0].ethReceiver = true;
      e.streams = {out, in};
      REQUIRE(chip.loadBlobWords(myEth, blob::encodeCoreBlob(e), error));
    }
  }
}

// Every core wrote all its tiles.
void checkFull(const ChipRunResult& r, const Work& w) { CHECK(r.streams.dramWriteTiles == uint64_t{w.cores} * w.tiles); }

}  // namespace

TEST_CASE("cluster benchmark: two chips against one doing the same copies", "[.bench]") {
  const SocDescriptor soc = loadBundledDescriptor("wormhole_b0_8x10");
  Work w;
  w.cores = envOr("CLUSTER_BENCH_CORES", 64);
  w.tiles = envOr("CLUSTER_BENCH_TILES", 256);
  const unsigned jobs = envOr("CLUSTER_BENCH_JOBS", 2);
  w.region = (uint64_t{kRamTiles} * kTile + 0x10000) & ~uint64_t{0xFFFF};
  using Clock = std::chrono::steady_clock;

  Chip one(soc);
  one.beginEpoch();
  setUp(one, soc, w, 0, false, 0);
  auto t0 = Clock::now();
  const ChipRunResult r1 = one.runEpoch();
  const double s1 = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(r1.message);
  REQUIRE(r1.stop == ChipStop::Done);
  checkFull(r1, w);

  // One chip with one chip's share (the per-chip load of the pair below).
  Work half = w;
  half.cores = w.cores / 2;
  Chip share(soc);
  share.beginEpoch();
  setUp(share, soc, half, 0, false, 0);
  t0 = Clock::now();
  const ChipRunResult rh = share.runEpoch();
  const double sh = std::chrono::duration<double>(Clock::now() - t0).count();
  REQUIRE(rh.stop == ChipStop::Done);
  checkFull(rh, half);

  ClusterDescriptor d;
  d.name = "bench-pair";
  d.chips[0] = ChipLocation{};
  d.chips[1] = ChipLocation{1, 0, 0, 0};
  d.links.push_back(EthLink{EthEndpoint{0, 8}, EthEndpoint{1, 0}, {}});
  d.mmio = {0};
  Cluster cl(soc, d);
  cl.beginEpoch();
  setUp(cl.chip(0), soc, half, 0, true, 1);
  setUp(cl.chip(1), soc, half, 0, true, 0);
  ClusterRunOptions o;
  o.jobs = jobs;
  t0 = Clock::now();
  const ClusterRunResult r2 = cl.runEpoch(o);
  const double s2 = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(r2.message);
  REQUIRE(r2.stop == ChipStop::Done);
  REQUIRE(r2.links.size() == 2);
  CHECK(r2.links[0].tiles == w.tiles);
  checkFull(r2.chips.at(0), half);
  checkFull(r2.chips.at(1), half);

  const double rate1 = static_cast<double>(r1.cycles) / s1, rate2 = static_cast<double>(r2.cycles) / s2;
  const double rateh = static_cast<double>(rh.cycles) / sh;
  std::printf("cluster-bench: one chip  %u cores x %u tiles: %llu cycles in %.3f s = %.3g cycles/s\n", w.cores,
              w.tiles, static_cast<unsigned long long>(r1.cycles), s1, rate1);
  std::printf("cluster-bench: one chip  %u cores x %u tiles: %llu cycles in %.3f s = %.3g cycles/s\n", half.cores,
              w.tiles, static_cast<unsigned long long>(rh.cycles), sh, rateh);
  std::printf("cluster-bench: two chips %u cores x %u tiles each, -j %u: %llu cycles in %.3f s = %.3g cycles/s\n",
              half.cores, w.tiles, jobs, static_cast<unsigned long long>(r2.cycles), s2, rate2);
  std::printf("cluster-bench: same work (%u cores): two chips took %.0f%% of one chip's host time; cycles/s %.1f%% of "
              "one chip's\n", w.cores, 100.0 * s2 / s1, 100.0 * rate2 / rate1);
  std::printf("cluster-bench: same load per chip (%u cores each): two chips' cycles/s %.1f%% of one chip's\n", half.cores,
              100.0 * rate2 / rateh);
}
