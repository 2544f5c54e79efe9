// The simulated cluster (lib/sim/cluster.hpp): wormhole_b0 chips joined by
// ethernet links, hand-built blobs on workers and ethernet cores, tiles
// relayed from a packer on one chip to a core of another. Every moved tile is
// compared byte for byte; cycles are worked out by hand from the NOC and
// ethernet models; -j 1 and -j 2 must agree on every byte and cycle.
#include "simchip_helpers.hpp"

#include "sim/cluster.hpp"
#include "sim/cluster_transport.hpp"
#include "sim/epoch_runner.hpp"
#include "sim/noc.hpp"

#include <barrier>
#include <functional>
#include <memory>
#include <thread>

using namespace simchip;

namespace {

const SocDescriptor& wormhole() {
  static const SocDescriptor soc = loadBundledDescriptor("wormhole_b0_8x10");
  return soc;
}

// wormhole_b0 ethernet channels (the descriptor's `eth:` order).
constexpr CoreCoord kEth0{9, 0}, kEth1{1, 0}, kEth8{9, 6}, kEth9{1, 6};

StreamName cname(ChipId chip, CoreCoord c, uint32_t id) {
  return StreamName{chip, static_cast<uint32_t>(c.y), static_cast<uint32_t>(c.x), id};
}

// Chips 0..n-1 in a line, chip i's channel 8 (and 9) to chip i+1's channel 0 (and 1).
ClusterDescriptor line(uint32_t chips, bool twoLinks = false) {
  ClusterDescriptor d;
  d.name = "test-line";
  for (ChipId c = 0; c < chips; ++c) d.chips[c] = ChipLocation{int64_t(c), 0, 0, 0};
  for (ChipId c = 0; c + 1 < chips; ++c) {
    d.links.push_back(EthLink{EthEndpoint{c, 8}, EthEndpoint{c + 1, 0}, {}});
    if (twoLinks) d.links.push_back(EthLink{EthEndpoint{c, 9}, EthEndpoint{c + 1, 1}, {}});
  }
  d.mmio = {0};
  return d;
}

// The chip's id into the stream names, and the ethernet flags (blob layout
// 5) on every phase whose dest or src is on another chip.
void markChip(ChipId chip, std::vector<Stream>& streams) {
  for (Stream& s : streams) {
    s.name.chip = chip;
    for (size_t i = 0; i < s.phases.size(); ++i) {
      StreamPhase& p = s.phases[i];
      p.phaseId = i;
      for (const StreamName& d : p.dest) p.ethSender |= d.chip != chip;
      for (const StreamName& n : p.src) p.ethReceiver |= n.chip != chip;
    }
  }
}

void loadChipBlob(Chip& chip, CoreCoord at, std::vector<Stream> streams) {
  CoreBlob b;
  b.chip = chip.id();
  b.x = static_cast<uint32_t>(at.x);
  b.y = static_cast<uint32_t>(at.y);
  markChip(chip.id(), streams);
  b.streams = std::move(streams);
  INFO(blob::checkEncodable(b));
  REQUIRE(blob::checkEncodable(b).empty());
  std::string error;
  INFO(error);
  REQUIRE(chip.loadBlobWords(at, blob::encodeCoreBlob(b), error));
}

Stream streamAt(CoreCoord c, uint32_t id, std::vector<StreamPhase> phases) {
  Stream s;
  s.name = cname(0, c, id);
  s.phases = std::move(phases);
  return s;
}

void prePushOn(Chip& chip, CoreCoord at, uint32_t operand, uint32_t buf, uint32_t slots, std::vector<uint32_t> ids) {
  TensixCore* core = chip.core(at);
  REQUIRE(core);
  uint32_t k = core->tilesReceived(operand);
  for (uint32_t id : ids) {
    const std::vector<uint8_t> t = patternTile(id);
    std::memcpy(core->l1().data() + buf + (k % slots) * kTile, t.data(), t.size());
    ++k;
  }
  core->addTilesReceived(operand, static_cast<uint32_t>(ids.size()));
}

std::span<const uint8_t> slotOn(Chip& chip, CoreCoord at, uint32_t buf, uint32_t slot) {
  return std::span<const uint8_t>(chip.core(at)->l1().data() + buf + slot * kTile, kTile);
}

// Ethernet cores have 256 KiB of L1, rings from kEthDataBufferBase up;
// streams 9 (out over the link) and 10 (in) can use the link.
constexpr uint32_t kEthBuf = contract::kEthDataBufferBase;
constexpr uint32_t kOut = 9, kIn = 10;

// A chain from packer 1-1 on chip `from` over links to core 1-1 (stream 8)
// of chip `from + hops`: on every chip in between the tiles cross the chip
// from channel 0's core to channel 8's. `tiles` pattern tiles `firstId`...
// `relaySlots` is every relay ring's size; the last core's buffer holds
// `sinkSlots` tiles (its kernel never pops).
void buildChain(Cluster& cl, ChipId from, uint32_t hops, uint32_t tiles, uint32_t firstId, uint32_t relaySlots,
                uint32_t sinkSlots) {
  const CoreCoord w{1, 1};
  const ChipId to = from + hops;
  // The sending chip: packer -> relay on channel 8's core.
  loadChipBlob(cl.chip(from), w, {streamAt(w, 24, {packerToRemote(tiles, kBuf0, tiles, {cname(from, kEth8, kOut)})})});
  for (ChipId c = from; c <= to; ++c) {
    Chip& chip = cl.chip(c);
    if (c != from) {
      // Channel 0's core receives over the link from the previous chip's channel 8.
      const StreamName next = c == to ? cname(c, w, 8) : cname(c, kEth8, kOut);
      loadChipBlob(chip, kEth0, {streamAt(kEth0, kIn, {relay(tiles, kEthBuf, relaySlots, {cname(c - 1, kEth8, kOut)}, {next})})});
    }
    if (c != to) {
      const StreamName prev = c == from ? cname(c, w, 24) : cname(c, kEth0, kIn);
      loadChipBlob(chip, kEth8, {streamAt(kEth8, kOut, {relay(tiles, kEthBuf, relaySlots, {prev}, {cname(c + 1, kEth0, kIn)})})});
    }
  }
  loadChipBlob(cl.chip(to), w, {streamAt(w, 8, {remoteToKernel(tiles, kBuf1, sinkSlots, {cname(to, kEth0, kIn)})})});
  std::vector<uint32_t> ids;
  for (uint32_t t = 0; t < tiles; ++t) ids.push_back(firstId + t);
  prePushOn(cl.chip(from), w, 16, kBuf0, tiles, ids);
}

ClusterRunResult runCluster(Cluster& cl, unsigned jobs, uint32_t hangRounds = 16) {
  ClusterRunOptions o;
  o.jobs = jobs;
  o.defaults.hangRounds = hangRounds;
  ClusterRunResult r = cl.runEpoch(o);
  INFO(r.message);
  return r;
}

}  // namespace

TEST_CASE("ethernet: a tile's link time counts its packets' overhead", "[simchip][cluster]") {
  EthParams p;  // 100 bits/cycle, 1500-byte packets, 50 bytes of overhead each
  CHECK(ethSerializationCycles(p, 2080) == 175);  // 2 packets: (2080 + 100) * 8 / 100 = 174.4
  CHECK(ethSerializationCycles(p, 1500) == 124);  // 1 packet: 1550 * 8 / 100 = 124
  CHECK(ethSerializationCycles(p, 1501) == 129);  // 2 packets: 1601 * 8 / 100 = 128.08
  CHECK(ethSerializationCycles(p, 16) == 6);      // 66 * 8 / 100 = 5.28
}

TEST_CASE("ethernet: packets and handshakes survive their byte form", "[simchip][cluster]") {
  EthPacket p;
  p.kind = EthPacket::Kind::Tile;
  p.srcChip = 3;
  p.dstChip = 7;
  p.srcChan = 8;
  p.dstChan = 0;
  p.seq = 0x1122334455ull;
  p.sent = 5;
  p.arrival = uint64_t{1} << 40;
  p.from = StreamName{3, 6, 9, 4};
  p.to = StreamName{7, 0, 9, 5};
  p.bytes = patternTile(4, 100);
  EthPacket q;
  q.kind = EthPacket::Kind::Credit;
  q.count = 2;
  std::vector<uint8_t> bytes;
  appendPacket(bytes, p);
  appendPacket(bytes, q);
  EthReceiverInfo r{StreamName{1, 0, 9, 5}, StreamName{0, 6, 9, 4}, 2, kTile, 0};
  appendReceiverInfo(bytes, r);
  size_t at = 0;
  EthPacket p2, q2;
  EthReceiverInfo r2;
  REQUIRE(readPacket(bytes, at, p2));
  REQUIRE(readPacket(bytes, at, q2));
  REQUIRE(readReceiverInfo(bytes, at, r2));
  CHECK(at == bytes.size());
  CHECK(p2.kind == p.kind);
  CHECK(p2.srcChip == 3);
  CHECK(p2.dstChip == 7);
  CHECK(p2.srcChan == 8);
  CHECK(p2.seq == p.seq);
  CHECK(p2.arrival == p.arrival);
  CHECK(p2.from == p.from);
  CHECK(p2.to == p.to);
  CHECK(p2.bytes == p.bytes);
  CHECK(q2.kind == EthPacket::Kind::Credit);
  CHECK(q2.count == 2);
  CHECK(r2.receiver == r.receiver);
  CHECK(r2.sender == r.sender);
  CHECK(r2.slots == 2);
  // Truncated input is refused, never read past.
  for (size_t cut : {size_t{0}, size_t{10}, bytes.size() / 3}) {
    size_t a = 0;
    EthPacket x;
    CHECK_FALSE(readPacket(std::span<const uint8_t>(bytes.data(), cut), a, x));
  }
}

TEST_CASE("cluster: a relay over one link delivers tiles bit-exact, with hand-worked cycles", "[simchip][cluster]") {
  Cluster cl(wormhole(), line(2));
  CHECK(cl.chip(1).id() == 1);
  REQUIRE(cl.chip(0).core(kEth8));
  CHECK(cl.chip(0).core(kEth8)->l1().size() == 256 * 1024);  // eth_l1_size
  CHECK(cl.chip(0).core(kEth8)->name() == "eth8@9-6");
  CHECK(cl.chip(0).coprocessor(kEth8) == nullptr);
  cl.beginEpoch();
  buildChain(cl, 0, 1, 1, 40, 2, 4);
  ClusterRunResult r = runCluster(cl, 1);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(r.ok());
  CHECK(isPattern(slotOn(cl.chip(1), {1, 1}, kBuf1, 0), 40));
  CHECK(cl.chip(1).core({1, 1})->tilesReceived(0) == 1);
  // By hand (docs/device-model.md): 1-1 -> 9-6 on NOC 0 is 8 + 5 hops:
  // 67 cycles on the port (2 + 2080/32) + 16 + 2 * 13 = 109. The link: 175
  // cycles (2 packets) + 600 latency from 109: 884 at chip 1's 9-0. Then
  // 9-0 -> 1-1 is 2 + 1 hops: 884 + 67 + 22 = 973.
  CHECK(r.chips.at(0).cycles == 109 + 175);  // the relay's last byte left
  CHECK(r.chips.at(1).cycles == 973);
  CHECK(r.cycles == 973);
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].from == EthEndpoint{0, 8});
  CHECK(r.links[0].to == EthEndpoint{1, 0});
  CHECK(r.links[0].tiles == 1);
  CHECK(r.links[0].bytes == kTile);
  CHECK(r.links[0].busyCycles == 175);
  CHECK(r.chips.at(0).streams.ethTiles == 1);
  CHECK(r.chips.at(1).streams.ethTiles == 0);
}

TEST_CASE("cluster: many tiles stream through small relay rings in order", "[simchip][cluster]") {
  Cluster cl(wormhole(), line(2));
  cl.beginEpoch();
  buildChain(cl, 0, 1, 12, 100, 2, 12);
  ClusterRunResult r = runCluster(cl, 2);
  REQUIRE(r.stop == ChipStop::Done);
  for (uint32_t t = 0; t < 12; ++t) CHECK(isPattern(slotOn(cl.chip(1), {1, 1}, kBuf1, t), 100 + t));
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].tiles == 12);
  // Two credits for 12 tiles: the sender waits a round trip (credit back
  // over the link) for most tiles, so the link is far from busy.
  CHECK(r.cycles > 5 * 2 * 600);
}

TEST_CASE("cluster: credits limit the sender; the deadlock report names streams on both chips", "[simchip][cluster][hang]") {
  Cluster cl(wormhole(), line(2));
  cl.beginEpoch();
  // 6 tiles; chip 1's relay ring holds 2 and the sink 2 (never popped): 4 cross the link.
  buildChain(cl, 0, 1, 6, 1, 2, 2);
  ClusterRunResult r = runCluster(cl, 2, 4);
  REQUIRE(r.stop == ChipStop::Hang);
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].tiles == 4);
  CHECK(isPattern(slotOn(cl.chip(1), {1, 1}, kBuf1, 0), 1));
  CHECK(isPattern(slotOn(cl.chip(1), {1, 1}, kBuf1, 1), 2));
  INFO(r.message);
  CHECK(contains(r.message, "cluster: hang at cycle"));
  CHECK(contains(r.message, "chip 0:"));
  CHECK(contains(r.message, "chip 1:"));
  CHECK(contains(r.message, "core 'eth8@9-6' stream 9 phase 0 (phase_id 0, iteration 1 of 1, 4 of 6 tiles): waits for "
                            "credits from chip_1__y_0__x_9__stream_id_10 on chip 1 over link chip 0 channel 8 - chip 1 "
                            "channel 0 (none left of its 2 slots: its buffer is full)"));
  CHECK(contains(r.message, "core 'eth0@9-0' stream 10 phase 0 (phase_id 0, iteration 1 of 1, 2 of 6 tiles): waits for "
                            "its buffer to drain (full: 2 tiles); credits from chip_1__y_1__x_1__stream_id_8: its buffer is full (2 of 2 "
                            "tiles)"));
  CHECK(contains(r.message, "core '1-1' stream 8 phase 0"));
  CHECK(contains(r.message, "the kernel to pop operand 0"));
  // One list, every chip's streams, each line naming its chip.
  bool chip0 = false, chip1 = false;
  for (const std::string& w : r.waitingStreams) {
    chip0 |= w.rfind("chip 0: ", 0) == 0;
    chip1 |= w.rfind("chip 1: ", 0) == 0;
  }
  CHECK(chip0);
  CHECK(chip1);
}

TEST_CASE("cluster: -j 1 and -j 2 give the same bytes and cycles (two hops, both directions, parallel links)",
          "[simchip][cluster]") {
  struct Outcome {
    std::vector<uint64_t> chipCycles;
    uint64_t cycles = 0;
    std::vector<std::vector<uint8_t>> sinks;
    std::vector<uint64_t> linkTiles, linkBusy;
  };
  auto runOnce = [](unsigned jobs) {
    Cluster cl(wormhole(), line(3, true));
    cl.beginEpoch();
    // Chip 0 -> chip 2 over two hops through chip 1 (channels 8 -> 0).
    buildChain(cl, 0, 2, 9, 10, 3, 9);
    // Chip 2 -> chip 1 the other way over the second link (chip 2 ch 1 -> chip 1 ch 9).
    const CoreCoord src{2, 2}, dst{3, 3};
    loadChipBlob(cl.chip(2), src, {streamAt(src, 24, {packerToRemote(7, kBuf0, 7, {cname(2, kEth1, 11)})})});
    loadChipBlob(cl.chip(2), kEth1, {streamAt(kEth1, 11, {relay(7, kEthBuf, 2, {cname(2, src, 24)}, {cname(1, kEth9, 0)})})});
    loadChipBlob(cl.chip(1), kEth9, {streamAt(kEth9, 0, {relay(7, kEthBuf, 3, {cname(2, kEth1, 11)}, {cname(1, dst, 8)})})});
    loadChipBlob(cl.chip(1), dst, {streamAt(dst, 8, {remoteToKernel(7, kBuf1, 7, {cname(1, kEth9, 0)})})});
    prePushOn(cl.chip(2), src, 16, kBuf0, 7, {200, 201, 202, 203, 204, 205, 206});
    ClusterRunResult r = runCluster(cl, jobs);
    REQUIRE(r.stop == ChipStop::Done);
    Outcome o;
    o.cycles = r.cycles;
    for (const ChipRunResult& c : r.chips) o.chipCycles.push_back(c.cycles);
    for (const EthLinkReport& l : r.links) {
      o.linkTiles.push_back(l.tiles);
      o.linkBusy.push_back(l.busyCycles);
    }
    const auto l1a = cl.chip(2).core({1, 1})->l1();
    o.sinks.emplace_back(l1a.begin() + kBuf1, l1a.begin() + kBuf1 + 9 * kTile);
    const auto l1b = cl.chip(1).core(dst)->l1();
    o.sinks.emplace_back(l1b.begin() + kBuf1, l1b.begin() + kBuf1 + 7 * kTile);
    for (uint32_t t = 0; t < 9; ++t) CHECK(isPattern(slotOn(cl.chip(2), {1, 1}, kBuf1, t), 10 + t));
    for (uint32_t t = 0; t < 7; ++t) CHECK(isPattern(slotOn(cl.chip(1), dst, kBuf1, t), 200 + t));
    return o;
  };
  const Outcome one = runOnce(1), two = runOnce(2), again = runOnce(2);
  CHECK(one.cycles == two.cycles);
  CHECK(one.chipCycles == two.chipCycles);
  CHECK(one.sinks == two.sinks);
  CHECK(one.linkTiles == two.linkTiles);
  CHECK(one.linkBusy == two.linkBusy);
  CHECK(two.cycles == again.cycles);
  CHECK(two.chipCycles == again.chipCycles);
  // Three link directions carried tiles: 0->1 (ch 8), 1->2 (ch 8), 2->1 (ch 1).
  CHECK(one.linkTiles == std::vector<uint64_t>{9, 9, 7});
}

TEST_CASE("cluster: faults name the chip and the core", "[simchip][cluster][fault]") {
  SECTION("a stream on an unlinked ethernet channel") {
    Cluster cl(wormhole(), line(2));
    cl.beginEpoch();
    const CoreCoord eth3{2, 0};  // channel 3: no link in this cluster
    loadChipBlob(cl.chip(1), eth3, {streamAt(eth3, kOut, {relay(1, kEthBuf, 2, {cname(1, {1, 1}, 24)}, {cname(0, kEth0, kIn)})})});
    ClusterRunResult r = runCluster(cl, 2);
    REQUIRE(r.stop == ChipStop::Fault);
    REQUIRE(r.faultChip);
    CHECK(*r.faultChip == 1);
    CHECK(r.faultCore == "eth3@2-0");
    CHECK(r.faultCategory == "bad-stream-config");
    CHECK(contains(r.message, "chip 1: core 'eth3@2-0': stream 9: phase 0 (phase_id 0): names "
                              "chip_0__y_0__x_9__stream_id_10 on chip 0, but ethernet channel 3 of chip 1 has no link"));
    CHECK(r.chips.at(0).stop == ChipStop::Fault);
    CHECK(contains(r.chips.at(0).message, "chip 1 faulted"));
  }
  SECTION("a worker naming a stream on another chip") {
    Cluster cl(wormhole(), line(2));
    cl.beginEpoch();
    // Stream 9 may use a link, but not on a worker.
    loadChipBlob(cl.chip(0), {1, 1}, {streamAt({1, 1}, kOut, {relay(1, kBuf0, 1, {cname(0, {2, 1}, 24)}, {cname(1, {1, 1}, 8)})})});
    ClusterRunResult r = runCluster(cl, 1);
    REQUIRE(r.stop == ChipStop::Fault);
    CHECK(*r.faultChip == 0);
    CHECK(r.faultCore == "1-1");
    CHECK(contains(r.message, "only an ethernet core reaches another chip and this is not one"));
  }
  SECTION("a sender whose receiver no blob configures") {
    Cluster cl(wormhole(), line(2));
    cl.beginEpoch();
    buildChain(cl, 0, 1, 2, 1, 2, 2);
    // Chip 1's relay is replaced by an empty blob on its core.
    cl.chip(1).beginEpoch();
    loadChipBlob(cl.chip(1), {1, 1}, {streamAt({1, 1}, 8, {remoteToKernel(2, kBuf1, 2, {cname(1, kEth0, kIn)})})});
    ClusterRunResult r = runCluster(cl, 1);
    REQUIRE(r.stop == ChipStop::Fault);
    CHECK(*r.faultChip == 0);
    CHECK(r.faultCore == "eth8@9-6");
    CHECK(contains(r.message, "chip 0: core 'eth8@9-6': stream chip_0__y_6__x_9__stream_id_9 sends to "
                              "chip_1__y_0__x_9__stream_id_10 over link chip 0 channel 8 - chip 1 channel 0, but chip 1 "
                              "has no such stream fed over ethernet"));
  }
  SECTION("a blob for another chip") {
    Cluster cl(wormhole(), line(2));
    cl.beginEpoch();
    CoreBlob b;
    b.chip = 0;  // loaded on chip 1
    b.x = 1;
    b.y = 1;
    b.streams = {streamAt({1, 1}, 8, {remoteToKernel(1, kBuf1, 1, {cname(0, {2, 1}, 24)})})};
    std::string error;
    REQUIRE(cl.chip(1).loadBlobWords({1, 1}, blob::encodeCoreBlob(b), error));
    ClusterRunResult r = runCluster(cl, 1);
    REQUIRE(r.stop == ChipStop::Fault);
    CHECK(*r.faultChip == 1);
    CHECK(r.faultCategory == "bad-blob");
    CHECK(contains(r.message, "is for chip 0, not chip 1"));
  }
}

TEST_CASE("cluster: chips without PCIe reach host memory through their MMIO chip", "[simchip][cluster]") {
  const ClusterDescriptor d = line(3);
  CHECK(hopsToHost(d, 0) == 0u);
  CHECK(hopsToHost(d, 1) == 1u);
  CHECK(hopsToHost(d, 2) == 2u);
  ClusterDescriptor island = d;
  island.chips[7] = ChipLocation{};
  CHECK_FALSE(hopsToHost(island, 7));
  const DataMovementModel base = DataMovementModel::forArch(Arch::WormholeB0);
  EthParams eth;
  const DataMovementModel far = hostPathModel(base, eth, 2);
  CHECK(far.pcie.latency == 1000 + 2 * 2 * 600);  // two links each way
  CHECK(far.pcie.bytesPerCycle == 12);             // 100 Gb/s links below the 16 B/cycle of PCIe
  CHECK(hostPathModel(base, eth, 0).pcie.latency == 1000);
  Cluster cl(wormhole(), d);
  CHECK(cl.chip(2).model().pcie.latency == 3400);
  CHECK(cl.chip(0).model().pcie.latency == 1000);
}

// Grayskull chips have no ethernet: relays on worker cores send to each
// other through the PCIe cores (docs/device-model.md "Cluster").
TEST_CASE("cluster: grayskull relays on worker cores cross chips through PCIe, with hand-worked cycles",
          "[simchip][cluster]") {
  static const SocDescriptor gs = loadBundledDescriptor("grayskull_10x12");
  ClusterDescriptor d;
  d.name = "test-gs";
  d.chips[0] = ChipLocation{0, 0, 0, 0};
  d.chips[1] = ChipLocation{1, 0, 0, 0};
  d.mmio = {0, 1};
  const EthPorts ports = ethPortsOf(d, 0, gs);
  CHECK(ports.pcie);
  CHECK(ports.pcieChan() == 0);  // no ethernet cores: the PCIe channel is the only one
  CHECK(ports.channelCount() == 1);
  ClusterDescriptor single = d;
  single.chips.erase(1);
  CHECK_FALSE(ethPortsOf(single, 0, gs).pcie);  // one chip: nothing to reach
  CHECK_FALSE(ethPortsOf(line(2), 0, wormhole()).pcie);

  Cluster cl(gs, d);
  cl.beginEpoch();
  // Chip 0: packer 1-1 -> relay 2-1 (stream 9) -> chip 1 relay 1-1
  // (stream 9) -> kernel operand at 2-1 (stream 8).
  const CoreCoord a{1, 1}, b{2, 1};
  loadChipBlob(cl.chip(0), a, {streamAt(a, 24, {packerToRemote(1, kBuf0, 1, {cname(0, b, kOut)})})});
  loadChipBlob(cl.chip(0), b, {streamAt(b, kOut, {relay(1, kBuf1, 2, {cname(0, a, 24)}, {cname(1, a, kOut)})})});
  loadChipBlob(cl.chip(1), a, {streamAt(a, kOut, {relay(1, kBuf1, 2, {cname(0, b, kOut)}, {cname(1, b, 8)})})});
  loadChipBlob(cl.chip(1), b, {streamAt(b, 8, {remoteToKernel(1, kBuf0, 4, {cname(1, a, kOut)})})});
  prePushOn(cl.chip(0), a, 16, kBuf0, 1, {77});
  ClusterRunResult r = runCluster(cl, 2);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(r.ok());
  CHECK(isPattern(slotOn(cl.chip(1), b, kBuf0, 0), 77));
  CHECK(cl.chip(1).core(b)->tilesReceived(0) == 1);
  // By hand: 1-1 -> 2-1 on NOC 0 is 1 hop: 67 cycles on the port
  // (2 + 2080/32) + 16 + 2 = 85. PCIe: 2080 / 16 = 130 cycles on chip 0's
  // PCIe link, + 1000 latency from 85: 1215 at chip 1's 1-1. Then 1 hop to
  // 2-1: 1215 + 67 + 18 = 1300.
  CHECK(r.chips.at(0).cycles == 85 + 130);
  CHECK(r.chips.at(1).cycles == 1300);
  CHECK(r.links.empty());  // no ethernet link carried it
  CHECK(r.chips.at(0).streams.ethTiles == 1);
}

TEST_CASE("cluster: a hang through PCIe names the PCIe hop", "[simchip][cluster][hang]") {
  static const SocDescriptor gs = loadBundledDescriptor("grayskull_10x12");
  ClusterDescriptor d;
  d.name = "test-gs";
  d.chips[0] = ChipLocation{0, 0, 0, 0};
  d.chips[1] = ChipLocation{1, 0, 0, 0};
  d.mmio = {0, 1};
  Cluster cl(gs, d);
  cl.beginEpoch();
  // 6 tiles; chip 1's relay ring holds 2 and the sink 2 (never popped).
  const CoreCoord a{1, 1}, b{2, 1};
  loadChipBlob(cl.chip(0), a, {streamAt(a, 24, {packerToRemote(6, kBuf0, 6, {cname(0, b, kOut)})})});
  loadChipBlob(cl.chip(0), b, {streamAt(b, kOut, {relay(6, kBuf1, 2, {cname(0, a, 24)}, {cname(1, a, kOut)})})});
  loadChipBlob(cl.chip(1), a, {streamAt(a, kOut, {relay(6, kBuf1, 2, {cname(0, b, kOut)}, {cname(1, b, 8)})})});
  loadChipBlob(cl.chip(1), b, {streamAt(b, 8, {remoteToKernel(6, kBuf0, 2, {cname(1, a, kOut)})})});
  prePushOn(cl.chip(0), a, 16, kBuf0, 6, {1, 2, 3, 4, 5, 6});
  ClusterRunResult r = runCluster(cl, 2, 4);
  REQUIRE(r.stop == ChipStop::Hang);
  INFO(r.message);
  CHECK(contains(r.message, "core '2-1' stream 9 phase 0 (phase_id 0, iteration 1 of 1, 4 of 6 tiles): waits for "
                            "credits from chip_1__y_1__x_1__stream_id_9 on chip 1 over PCIe between chip 0 and chip 1 "
                            "(none left of its 2 slots: its buffer is full)"));
  CHECK(contains(r.message, "core '2-1' stream 8 phase 0"));
}

TEST_CASE("cluster: runClusterEpoch loads every chip's cores, then runs them together", "[simchip][cluster]") {
  auto blobOf = [](ChipId chip, CoreCoord at, std::vector<Stream> streams) {
    CoreBlob b;
    b.chip = chip;
    b.x = static_cast<uint32_t>(at.x);
    b.y = static_cast<uint32_t>(at.y);
    markChip(chip, streams);
    b.streams = std::move(streams);
    return blob::encodeCoreBlob(b);
  };
  Cluster cl(wormhole(), line(2));
  std::map<ChipId, EpochRun> runs;
  const CoreCoord w{1, 1};
  EpochCore src, out, in, dst;
  src.noc = w;
  src.name = "producer[0,0]";
  src.blobWords = blobOf(0, w, {streamAt(w, 24, {packerToRemote(3, kBuf0, 3, {cname(0, kEth8, kOut)})})});
  out.noc = kEth8;
  out.blobWords = blobOf(0, kEth8, {streamAt(kEth8, kOut, {relay(3, kEthBuf, 2, {cname(0, w, 24)}, {cname(1, kEth0, kIn)})})});
  in.noc = kEth0;
  in.blobWords = blobOf(1, kEth0, {streamAt(kEth0, kIn, {relay(3, kEthBuf, 2, {cname(0, kEth8, kOut)}, {cname(1, w, 8)})})});
  dst.noc = w;
  dst.name = "consumer[0,0]";
  dst.blobWords = blobOf(1, w, {streamAt(w, 8, {remoteToKernel(3, kBuf1, 3, {cname(1, kEth0, kIn)})})});
  runs[0].cores = {src, out};
  runs[1].cores = {in, dst};
  runs[0].options.afterFirmware = [&](CoreCoord at, TensixCore& core) {
    // The packer's part, done by the test once the firmware has set the chip up.
    if (at != w) return;
    for (uint32_t k = 0; k < 3; ++k) {
      const std::vector<uint8_t> t = patternTile(60 + k);
      std::memcpy(core.l1().data() + kBuf0 + k * kTile, t.data(), t.size());
    }
    core.addTilesReceived(16, 3);
  };
  ClusterRunResult r = runClusterEpoch(cl, runs, 2);
  INFO(r.message);
  REQUIRE(r.stop == ChipStop::Done);
  for (uint32_t t = 0; t < 3; ++t) CHECK(isPattern(slotOn(cl.chip(1), w, kBuf1, t), 60 + t));
  REQUIRE(r.chips.size() == 2);
  CHECK(r.chips[1].cores.size() == 2);
  CHECK(r.chips[1].cores[0].name == "eth0@9-0");  // NOC order: y, then x
  CHECK(r.chips[1].cores[1].name == "consumer[0,0]");

  // An ethernet core runs no kernel: the load fails naming chip and core.
  runs[1].cores[0].kernelDir = "/nonexistent";
  r = runClusterEpoch(cl, runs, 1);
  REQUIRE(r.stop == ChipStop::Fault);
  CHECK(*r.faultChip == 1);
  CHECK(r.faultCategory == "load");
  CHECK(contains(r.message, "chip 1: core 'eth0@9-0' is an ethernet core: it runs no kernel"));
}

// --- Chips spread over processes (cluster_transport.hpp). The ranks here are
// threads of this test joined by an in-memory transport with MPI's collective
// semantics: each holds its own Cluster and runs only its own chips.
namespace {

class Hub {
public:
  explicit Hub(int ranks) : ranks_(ranks), slots_(static_cast<size_t>(ranks) * ranks), sync_(ranks) {}
  // out[r] to rank r; returns what every rank sent `rank`.
  std::vector<std::vector<uint8_t>> swap(int rank, const std::vector<std::vector<uint8_t>>& out) {
    for (int r = 0; r < ranks_; ++r) slots_[at(rank, r)] = r == rank || size_t(r) >= out.size() ? std::vector<uint8_t>{} : out[size_t(r)];
    sync_.arrive_and_wait();
    std::vector<std::vector<uint8_t>> in(static_cast<size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) in[size_t(r)] = slots_[at(r, rank)];
    sync_.arrive_and_wait();  // nobody writes the next round's slots before all have read
    return in;
  }
  int ranks() const { return ranks_; }

private:
  size_t at(int from, int to) const { return static_cast<size_t>(from) * ranks_ + to; }
  int ranks_;
  std::vector<std::vector<uint8_t>> slots_;
  std::barrier<> sync_;
};

class HubTransport final : public ClusterTransport {
public:
  HubTransport(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int ranks() const override { return hub_.ranks(); }
  std::vector<std::vector<uint8_t>> allGather(std::span<const uint8_t> mine) override {
    std::vector<std::vector<uint8_t>> out(static_cast<size_t>(ranks()), std::vector<uint8_t>(mine.begin(), mine.end()));
    std::vector<std::vector<uint8_t>> in = hub_.swap(rank_, out);
    in[size_t(rank_)].assign(mine.begin(), mine.end());
    return in;
  }
  std::vector<std::vector<uint8_t>> exchange(const std::vector<std::vector<uint8_t>>& out) override {
    return hub_.swap(rank_, out);
  }

private:
  Hub& hub_;
  int rank_;
};

// The -j scenario (three chips in a line, two hops one way and one hop back
// over the parallel link) in one cluster.
void buildBothWays(Cluster& cl) {
  cl.beginEpoch();
  buildChain(cl, 0, 2, 9, 10, 3, 9);
  const CoreCoord src{2, 2}, dst{3, 3};
  loadChipBlob(cl.chip(2), src, {streamAt(src, 24, {packerToRemote(7, kBuf0, 7, {cname(2, kEth1, 11)})})});
  loadChipBlob(cl.chip(2), kEth1, {streamAt(kEth1, 11, {relay(7, kEthBuf, 2, {cname(2, src, 24)}, {cname(1, kEth9, 0)})})});
  loadChipBlob(cl.chip(1), kEth9, {streamAt(kEth9, 0, {relay(7, kEthBuf, 3, {cname(2, kEth1, 11)}, {cname(1, dst, 8)})})});
  loadChipBlob(cl.chip(1), dst, {streamAt(dst, 8, {remoteToKernel(7, kBuf1, 7, {cname(1, kEth9, 0)})})});
  prePushOn(cl.chip(2), src, 16, kBuf0, 7, {200, 201, 202, 203, 204, 205, 206});
}

// Everything a report says, as bytes (the transport's own byte form).
std::vector<uint8_t> reportBytes(const ClusterRunResult& r) {
  WireWriter w;
  w.u8(static_cast<uint8_t>(r.stop));
  w.u64(r.cycles);
  w.str(r.message);
  w.str(r.faultCategory + "/" + r.faultCore);
  for (const ChipRunResult& c : r.chips) writeChipResult(w, c);
  for (const EthLinkReport& l : r.links) {
    w.u32(l.from.chip), w.u32(l.from.chan), w.u32(l.to.chip), w.u32(l.to.chan);
    w.u64(l.tiles), w.u64(l.bytes), w.u64(l.busyCycles);
  }
  for (const std::string& s : r.waitingStreams) w.str(s);
  return w.bytes;
}

// `build` on one cluster per rank, then every rank's runEpoch on its own thread.
std::vector<ClusterRunResult> runSpread(int ranks, const std::function<void(Cluster&)>& build,
                                        std::vector<std::unique_ptr<Cluster>>& clusters, uint32_t hangRounds = 16,
                                        const ClusterDescriptor& desc = line(3, true)) {
  Hub hub(ranks);
  std::vector<std::unique_ptr<HubTransport>> nets;
  for (int r = 0; r < ranks; ++r) {
    clusters.push_back(std::make_unique<Cluster>(wormhole(), desc));
    nets.push_back(std::make_unique<HubTransport>(hub, r));
    clusters.back()->setTransport(nets.back().get());
    build(*clusters.back());
  }
  std::vector<ClusterRunResult> results(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ClusterRunOptions o;
      o.jobs = 1;
      o.defaults.hangRounds = hangRounds;
      results[size_t(r)] = clusters[size_t(r)]->runEpoch(o);
    });
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace

TEST_CASE("cluster transport: chip reports and handshakes survive their byte form", "[simchip][cluster]") {
  ChipRunResult r;
  r.chip = 5;
  r.stop = ChipStop::Hang;
  r.cycles = 123456789012ull;
  r.prologueCycles = 7;
  r.binariesCycles = 8;
  r.binariesReadBytes = 9;
  r.faultCategory = "bad-stream-config";
  r.faultCore = "eth8@9-6";
  CoreEpochReport c;
  c.noc = CoreCoord{3, 4};
  c.name = "mm[0,1]";
  c.kernel = true;
  c.streams = 6;
  c.cycles = 99;
  c.harts.stop = CoreStop::Fault;
  c.harts.fault = CoreFault{contract::kMathThread, "misaligned-load", Fault{FaultKind::None, 0x4010, 0x20a103, 0x20002, 0}};
  c.harts.harts[1].pc = 0x1234;
  c.harts.harts[1].waitsFor = "semaphore 1 (PackMath) = 0";
  c.harts.harts[2].exitCode = 3;
  c.harts.message = "math faulted";
  c.cop.tilesPacked = 17;
  r.cores = {c, CoreEpochReport{}};
  r.waitingStreams = {"core 'x' stream 9", "core 'y' stream 10"};
  r.streams.ethTiles = 32;
  r.message = "chip 5: hang\n  exit codes";
  r.ethLinks = {EthLinkCounters{1, 2, 3}, EthLinkCounters{}};
  WireWriter w;
  writeChipResult(w, r);
  WireReader in(w.bytes);
  const ChipRunResult back = readChipResult(in);
  CHECK(in.done());
  WireWriter again;
  writeChipResult(again, back);
  CHECK(again.bytes == w.bytes);
  CHECK(back.chip == 5);
  CHECK(back.cycles == 123456789012ull);
  CHECK(back.faultCore == "eth8@9-6");
  REQUIRE(back.cores.size() == 2);
  CHECK(back.cores[0].name == "mm[0,1]");
  CHECK(back.cores[0].noc == CoreCoord{3, 4});
  REQUIRE(back.cores[0].harts.fault);
  CHECK(back.cores[0].harts.fault->category == "misaligned-load");
  CHECK(back.cores[0].harts.fault->detail.pc == 0x4010);
  CHECK(back.cores[0].harts.harts[1].waitsFor == "semaphore 1 (PackMath) = 0");
  CHECK(back.cores[0].harts.harts[2].exitCode == 3);
  CHECK(back.cores[0].cop.tilesPacked == 17);
  CHECK(back.waitingStreams == r.waitingStreams);
  CHECK(back.streams.ethTiles == 32);
  CHECK(back.message == r.message);
  REQUIRE(back.ethLinks.size() == 2);
  CHECK(back.ethLinks[0].busyCycles == 3);
  // Cut short: an error, never a read past the end.
  WireReader cut(std::span<const uint8_t>(w.bytes.data(), w.bytes.size() / 2));
  CHECK_THROWS_AS(readChipResult(cut), std::runtime_error);

  EthSetup s;
  s.receivers.push_back(EthReceiverInfo{StreamName{1, 0, 9, 10}, StreamName{0, 6, 9, 9}, 2, kTile, 0});
  s.senders.push_back(EthSenderInfo{StreamName{0, 6, 9, 9}, StreamName{1, 0, 9, 10}, 8, EthEndpoint{1, 0}, kTile});
  WireWriter ws;
  writeEthSetup(ws, s);
  WireReader rs(ws.bytes);
  const EthSetup s2 = readEthSetup(rs);
  CHECK(rs.done());
  REQUIRE(s2.receivers.size() == 1);
  REQUIRE(s2.senders.size() == 1);
  CHECK(s2.receivers[0].sender == s.receivers[0].sender);
  CHECK(s2.receivers[0].slots == 2);
  CHECK(s2.senders[0].peer == EthEndpoint{1, 0});
  CHECK(s2.senders[0].chan == 8);
}

TEST_CASE("cluster transport: chips spread over 2 and 3 ranks give the bytes and cycles of one process",
          "[simchip][cluster]") {
  Cluster one(wormhole(), line(3, true));
  buildBothWays(one);
  const ClusterRunResult alone = runCluster(one, 1);
  REQUIRE(alone.stop == ChipStop::Done);
  CHECK(alone.links.size() == 3);
  for (int ranks : {2, 3}) {
    INFO(ranks << " ranks");
    std::vector<std::unique_ptr<Cluster>> clusters;
    const std::vector<ClusterRunResult> results = runSpread(ranks, buildBothWays, clusters);
    for (const ClusterRunResult& r : results) {
      CHECK(r.stop == ChipStop::Done);
      CHECK(r.cycles == alone.cycles);
      CHECK(r.message == alone.message);
      CHECK(reportBytes(r) == reportBytes(alone));
    }
    // The sinks hold the tiles on the rank that ran their chip (chip c on rank c mod K).
    Cluster& chip2 = *clusters[size_t(2 % ranks)];
    Cluster& chip1 = *clusters[size_t(1 % ranks)];
    for (uint32_t t = 0; t < 9; ++t) CHECK(isPattern(slotOn(chip2.chip(2), {1, 1}, kBuf1, t), 10 + t));
    for (uint32_t t = 0; t < 7; ++t) CHECK(isPattern(slotOn(chip1.chip(1), {3, 3}, kBuf1, t), 200 + t));
    // Rank 0 holds chip 1 (loaded by the test on every rank) but never ran it: its sink there is empty.
    CHECK_FALSE(isPattern(slotOn(clusters[0]->chip(1), {3, 3}, kBuf1, 0), 200));
  }
}

TEST_CASE("cluster transport: a hang over ranks is the same report on every rank", "[simchip][cluster][hang]") {
  auto build = [](Cluster& cl) {
    cl.beginEpoch();
    buildChain(cl, 0, 1, 6, 1, 2, 2);  // 6 tiles into 2 + 2 slots: 4 cross, then nothing moves
  };
  Cluster one(wormhole(), line(3, true));
  build(one);
  const ClusterRunResult alone = runCluster(one, 1, 4);
  REQUIRE(alone.stop == ChipStop::Hang);
  std::vector<std::unique_ptr<Cluster>> clusters;
  for (const ClusterRunResult& r : runSpread(2, build, clusters, 4)) {
    CHECK(r.stop == ChipStop::Hang);
    CHECK(r.message == alone.message);
    CHECK(r.waitingStreams == alone.waitingStreams);
    CHECK(reportBytes(r) == reportBytes(alone));
  }
}

TEST_CASE("cluster transport: shareMemory copies a chip's DRAM from its rank to the others", "[simchip][cluster]") {
  Hub hub(2);
  std::vector<std::unique_ptr<Cluster>> clusters;
  std::vector<std::unique_ptr<HubTransport>> nets;
  for (int r = 0; r < 2; ++r) {
    clusters.push_back(std::make_unique<Cluster>(wormhole(), line(2)));
    nets.push_back(std::make_unique<HubTransport>(hub, r));
    clusters.back()->setTransport(nets.back().get());
  }
  // Each rank writes its own chip (chip r on rank r); the other copies stay zero.
  const std::vector<uint8_t> a = patternTile(1, 100), b = patternTile(2, 64);
  REQUIRE(clusters[0]->chip(0).dram().write(3, 0x1000, a));
  REQUIRE(clusters[1]->chip(1).hostMemory().write(0, 0x2000, b));
  const std::vector<Cluster::MemoryRegion> regions{{0, false, 3, 0x1000, a.size()}, {1, true, 0, 0x2000, b.size()}};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) threads.emplace_back([&, r] { clusters[size_t(r)]->shareMemory(regions); });
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    std::vector<uint8_t> x(a.size()), y(b.size());
    REQUIRE(clusters[size_t(r)]->chip(0).dram().read(3, 0x1000, x));
    REQUIRE(clusters[size_t(r)]->chip(1).hostMemory().read(0, 0x2000, y));
    CHECK(x == a);
    CHECK(y == b);
  }
}

TEST_CASE("cluster transport: a handshake fault names the core as its chip's rank knows it", "[simchip][cluster][fault]") {
  // Chip 0's relay sends to a stream chip 1 never configures. Each rank loads
  // only its own chips, as the loader does: rank 1 has no core on chip 0.
  auto build = [](Cluster& cl) {
    cl.beginEpoch();
    const CoreCoord w{1, 1};
    if (cl.isLocal(0)) {
      loadChipBlob(cl.chip(0), w, {streamAt(w, 24, {packerToRemote(2, kBuf0, 2, {cname(0, kEth8, kOut)})})});
      loadChipBlob(cl.chip(0), kEth8, {streamAt(kEth8, kOut, {relay(2, kEthBuf, 2, {cname(0, w, 24)}, {cname(1, kEth0, kIn)})})});
      prePushOn(cl.chip(0), w, 16, kBuf0, 2, {1, 2});
    }
    if (cl.isLocal(1)) loadChipBlob(cl.chip(1), w, {streamAt(w, 8, {remoteToKernel(2, kBuf1, 2, {cname(1, kEth0, kIn)})})});
  };
  Cluster one(wormhole(), line(2));
  build(one);
  const ClusterRunResult alone = runCluster(one, 1);
  REQUIRE(alone.stop == ChipStop::Fault);
  CHECK(alone.faultCore == "eth8@9-6");
  std::vector<std::unique_ptr<Cluster>> clusters;
  const std::vector<ClusterRunResult> results = runSpread(2, build, clusters, 16, line(2));
  REQUIRE(clusters[1]->chip(0).findCore(kEth8) == nullptr);
  for (const ClusterRunResult& r : results) {
    CHECK(r.stop == ChipStop::Fault);
    CHECK(r.faultCore == "eth8@9-6");
    CHECK(r.message == alone.message);
    CHECK(reportBytes(r) == reportBytes(alone));
  }
}
