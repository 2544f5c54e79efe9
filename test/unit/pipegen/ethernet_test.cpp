// pipegen over several chips (docs/pipegen.md, "Several chips"): relay
// chains on ethernet cores, worked by hand. wormhole_b0 8x10
// (lib/device/descriptors/wormhole_b0_8x10.yaml): worker [r, c] at NOC
// x = c + 1, y = r + 1 for r < 5; ethernet channel 0 is NOC 9-0, 1 is 1-0,
// 3 is 2-0, 8 is 9-6, 9 is 1-6; L1 1464 KiB (0x16e000), ethernet L1 256 KiB
// (0x40000), DRAM channel 1 at NOC 0-5.
#include "pipegen_test_util.hpp"

#include "blob/blob_binary.hpp"
#include "device/device_contract.h"

#include <algorithm>
#include <string>

using namespace tessera;
using namespace tessera::pipegen;
using blob::StreamName;
using blob::StreamPhase;

namespace {

const SocDescriptor& wormhole() {
  static const SocDescriptor soc = loadBundledDescriptor("wormhole_b0_8x10");
  return soc;
}

std::string doc(uint64_t id, const std::string& type, uint32_t operand, uint32_t chip, const std::string& rc,
                uint32_t tiles, uint32_t size, const std::string& more = "") {
  return "---\nbuffer_" + std::to_string(id) + ": {md_op_name: op, buffer_type: " + type +
         ", id: " + std::to_string(operand) + ", uniqid: " + std::to_string(id) + ", epoch_tiles: " +
         std::to_string(2 * tiles) + ", tiles_per_input: " + std::to_string(tiles) + ", chip_id: [" +
         std::to_string(chip) + "], core_coordinates: " + rc + ", size_tiles: " + std::to_string(size) +
         ", scatter_gather_num_tiles: " + std::to_string(tiles) + ", tile_size: 2080, data_format: Float16_b" + more +
         "}\n";
}
std::string packer(uint64_t id, uint32_t chip, int r, int c, uint32_t tiles = 4) {
  return doc(id, "packer", 16, chip, pgtest::core(r, c), tiles, tiles);
}
std::string unpacker(uint64_t id, uint32_t chip, int r, int c, uint32_t tiles = 4) {
  return doc(id, "unpacker", 0, chip, pgtest::core(r, c), tiles, tiles);
}
// A relay on ethernet channel `chan` (NOC [y, x]).
std::string relay(uint64_t id, uint32_t chip, uint32_t chan, int y, int x, uint32_t tiles = 4, uint32_t size = 2,
                  const std::string& more = "") {
  return doc(id, "relay", 0, chip, pgtest::core(y, x), tiles, size, ", ethernet_chan: " + std::to_string(chan) + more);
}
std::string pipeDoc(uint64_t id, const std::string& in, const std::string& out) {
  return "---\npipe_" + std::to_string(id) + ": {id: " + std::to_string(id) + ", input_list: " + in +
         ", output_list: " + out + "}\n";
}

pgtest::Run runWh(const std::string& body, GenerateOptions opts = {}) {
  pgtest::Run r;
  SourceBuffer src("test.yaml", "graph_name: g\n" + body);
  r.doc = readPipegenYaml(src, r.diags);
  if (r.doc) r.gen = generateBlob(*r.doc, wormhole(), r.diags, opts);
  return r;
}

StreamName sn(uint32_t chip, uint32_t y, uint32_t x, uint32_t id) { return {chip, y, x, id}; }

const blob::Stream* find(const pgtest::Run& r, StreamName n) {
  if (!r.gen) return nullptr;
  for (const auto& s : r.gen->blob.streams)
    if (s.name == n) return &s;
  return nullptr;
}

// Two chips joined by chip 0 channel `a` <-> chip 1 channel `b`.
ClusterDescriptor pair(uint32_t a, uint32_t b) {
  ClusterDescriptor c;
  c.name = "pair";
  c.chips[0] = {};
  c.chips[1] = {1, 0, 0, 0};
  c.links.push_back({{0, a}, {1, b}, {}});
  c.mmio = {0};
  return c;
}

// op0 (chip 0, worker [0, 0]) -> relay chip 0 channel 8 -> relay chip 1
// channel 0 -> op1 (chip 1, worker [0, 0]).
const std::string kChain = packer(100, 0, 0, 0) + relay(200, 0, 8, 6, 9) + relay(300, 1, 0, 0, 9) +
                           unpacker(400, 1, 0, 0) + pipeDoc(500, "[100]", "[200]") + pipeDoc(501, "[200]", "[300]") +
                           pipeDoc(502, "[300]", "[400]");

}  // namespace

TEST_CASE("ethernet chain: a FIFO relay stream per ethernet core, eth flags where the link is crossed",
          "[pipegen][ethernet]") {
  pgtest::Run r = runWh(kChain);
  INFO(r.messages());
  REQUIRE(r.gen);
  CHECK(r.gen->blob.streams.size() == 4);
  const auto* p = find(r, sn(0, 1, 1, 24));
  const auto* a = find(r, sn(0, 6, 9, 9));
  const auto* b = find(r, sn(1, 0, 9, 9));
  const auto* u = find(r, sn(1, 1, 1, 8));
  REQUIRE(p);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(u);
  for (const auto* s : {p, a, b, u}) {
    REQUIRE(s->phases.size() == 1);
    CHECK(s->phases[0].numMsgs == 4);
    CHECK(s->phases[0].numItersInEpoch == 2);
  }
  const StreamPhase &pp = p->phases[0], &ap = a->phases[0], &bp = b->phases[0], &up = u->phases[0];
  CHECK(pp.sourceEndpoint);
  CHECK(pp.dest == std::vector{sn(0, 6, 9, 9)});
  CHECK_FALSE(pp.ethSender);
  CHECK(pp.pipeId == 500);
  // The sender relay: from the packer, over the link to chip 1.
  CHECK(ap.remoteSource);
  CHECK(ap.remoteReceiver);
  CHECK(ap.src == std::vector{sn(0, 1, 1, 24)});
  CHECK(ap.dest == std::vector{sn(1, 0, 9, 9)});
  CHECK(ap.ethSender);
  CHECK_FALSE(ap.ethReceiver);
  CHECK(ap.pipeId == 500);  // the pipe that writes it
  CHECK(ap.bufId == 200);
  CHECK(ap.srcPeriodTiles == 0);  // a FIFO
  // 2 tiles of 2080 bytes from the top of the ethernet core's 256 KiB.
  CHECK(ap.bufSize == 2 * 2080);
  CHECK(ap.bufAddr == 0x40000 - 2 * 2080);
  // The receiver relay: from chip 0, to the unpacker on its own chip.
  CHECK(bp.remoteSource);
  CHECK(bp.remoteReceiver);
  CHECK(bp.src == std::vector{sn(0, 6, 9, 9)});
  CHECK(bp.dest == std::vector{sn(1, 1, 1, 8)});
  CHECK(bp.ethReceiver);
  CHECK_FALSE(bp.ethSender);
  CHECK(bp.pipeId == 501);
  CHECK(up.localReceiver);
  CHECK(up.src == std::vector{sn(1, 0, 9, 9)});
  CHECK(up.pipeId == 502);
  CHECK(up.bufAddr == 0x16e000 - 4 * 2080);
  // Every phase passes the blob layout's several-chips rule.
  for (const auto& s : r.gen->blob.streams)
    for (const auto& ph : s.phases) CHECK(blob::checkEthernetPhase(ph, s.name).empty());
  // The L1 report names the relays' rings on their ethernet cores.
  bool found = false;
  for (const L1Block& l : r.gen->l1)
    if (l.stream == sn(1, 0, 9, 9)) {
      found = true;
      CHECK(l.addr == 0x40000 - 2 * 2080);
      CHECK(l.what == "stream 9 (relay buffer_300)");
    }
  CHECK(found);
}

TEST_CASE("ethernet pipes must join the two ends of a link of the cluster", "[pipegen][ethernet]") {
  const ClusterDescriptor good = pair(8, 0), other = pair(9, 1);
  GenerateOptions opts;
  opts.cluster = &good;
  pgtest::Run ok = runWh(kChain, opts);
  INFO(ok.messages());
  CHECK(ok.gen);
  opts.cluster = &other;
  pgtest::Run bad = runWh(kChain, opts);
  REQUIRE_FALSE(bad.gen);
  CHECK(bad.has("ethernet-link"));
  CHECK_THAT(bad.messages(), Catch::Contains("pipe 501: joins chip 0 channel 8 and chip 1 channel 0, which are not the "
                                             "two ends of an ethernet link of cluster 'pair'"));
  // A chip the cluster lacks.
  ClusterDescriptor one = singleChipCluster();
  opts.cluster = &one;
  pgtest::Run lone = runWh(kChain, opts);
  REQUIRE_FALSE(lone.gen);
  CHECK_THAT(lone.messages(), Catch::Contains("chip_id 1 is not a chip of cluster"));
  // A direct pipe between chips.
  pgtest::Run direct = runWh(packer(100, 0, 0, 0) + unpacker(400, 1, 0, 0) + pipeDoc(500, "[100]", "[400]"));
  REQUIRE_FALSE(direct.gen);
  CHECK(direct.has("ethernet-pipe"));
}

TEST_CASE("a consumer's order is read at the source; the relays forward it", "[pipegen][ethernet]") {
  // op0's 4 tiles as two 2-tile chunks (a scatter packer); the relays copy
  // its shape; op1 reads the last relay's chunks in reverse: folded back, a
  // windowed read of op0's period at [2, 0] (one phase with a chunk list),
  // and every relay forwards 4 tiles as they come.
  const std::string scatter = ", is_scatter: 1, replicate: 2";
  auto scat = [&](std::string d) { return d.replace(d.find("scatter_gather_num_tiles: 4"), 27, "scatter_gather_num_tiles: 2") ; };
  std::string body = scat(doc(100, "packer", 16, 0, "[0, 0]", 4, 4, scatter)) +
                     scat(relay(200, 0, 8, 6, 9, 4, 2, scatter)) + scat(relay(300, 1, 0, 0, 9, 4, 2, scatter)) +
                     unpacker(400, 1, 0, 0) + pipeDoc(500, "[100, 102]", "[200]") + pipeDoc(501, "[200, 202]", "[300]") +
                     pipeDoc(502, "[302, 300]", "[400]");
  pgtest::Run r = runWh(body);
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* p = find(r, sn(0, 1, 1, 24));
  REQUIRE(p);
  REQUIRE(p->phases.size() == 1);
  CHECK(p->phases[0].srcPeriodTiles == 4);
  CHECK(p->phases[0].srcChunkOffsets == std::vector<uint32_t>{2, 0});
  CHECK(p->phases[0].srcChunkTiles == 2);
  CHECK(p->phases[0].dest == std::vector{sn(0, 6, 9, 9)});
  for (StreamName n : {sn(0, 6, 9, 9), sn(1, 0, 9, 9)}) {
    const auto* s = find(r, n);
    REQUIRE(s);
    REQUIRE(s->phases.size() == 1);
    CHECK(s->phases[0].numMsgs == 4);
    CHECK(s->phases[0].srcPeriodTiles == 0);
    CHECK(s->phases[0].srcChunkOffsets.empty());
  }
}

TEST_CASE("a relay reading DRAM for two consumers pops the slot once a round", "[pipegen][ethernet]") {
  // Queue on chip 1 channel 1 -> relay chip 1 channel 0 -> relay chip 0
  // channel 8 -> op1 and op2 on chip 0.
  const std::string q =
      "---\nbuffer_100: {md_op_name: q0, buffer_type: dram_io, id: 0, uniqid: 100, epoch_tiles: 8, tiles_per_input: 4, "
      "chip_id: [1], core_coordinates: [255, 255], size_tiles: 4, scatter_gather_num_tiles: 4, tile_size: 2080, "
      "dram_chan: 1, dram_addr: 4096, q_slots: 2, dram_io_flag: 1, data_format: Float16_b}\n";
  std::string body = q + relay(200, 1, 0, 0, 9) + relay(300, 0, 8, 6, 9) + unpacker(400, 0, 0, 0) +
                     unpacker(410, 0, 0, 1) + pipeDoc(500, "[100]", "[200]") + pipeDoc(501, "[200]", "[300]") +
                     pipeDoc(502, "[300]", "[400]") + pipeDoc(503, "[300]", "[410]");
  pgtest::Run r = runWh(body);
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* reader = find(r, sn(1, 0, 9, 9));
  REQUIRE(reader);
  REQUIRE(reader->phases.size() == 2);
  for (const StreamPhase& ph : reader->phases) {
    CHECK(ph.dramInput);
    CHECK(ph.remoteReceiver);
    CHECK(ph.ethSender);
    CHECK(ph.dest == std::vector{sn(0, 6, 9, 9)});
    CHECK(ph.dramBufNocAddr == ((uint64_t{5 << 6 | 0} << 32) | 4096));
    CHECK(ph.dramTotalReaders == 1);
  }
  CHECK_FALSE(reader->phases[0].srcPeriodDone);
  CHECK(reader->phases[1].srcPeriodDone);
  const auto* fwd = find(r, sn(0, 6, 9, 9));
  REQUIRE(fwd);
  REQUIRE(fwd->phases.size() == 2);
  CHECK(fwd->phases[0].dest == std::vector{sn(0, 1, 1, 8)});
  CHECK(fwd->phases[1].dest == std::vector{sn(0, 1, 2, 8)});
}

TEST_CASE("relay stream ids: 9, 10, 11, 0 for the link; 12 for a relay that stays on its chip",
          "[pipegen][ethernet]") {
  // Four chains from op0 over chip 0 channel 8, and one relay on chip 0
  // channel 3 (NOC 2-0) that only carries a queue of chip 0 to op9 on chip 0.
  std::string body = packer(100, 0, 0, 0);
  for (uint32_t k = 0; k < 4; ++k) {
    const uint64_t a = 200 + 10 * k, b = 300 + 10 * k, u = 400 + 10 * k;
    body += relay(a, 0, 8, 6, 9) + relay(b, 1, 0, 0, 9) + unpacker(u, 1, 0, static_cast<int>(k)) +
            pipeDoc(500 + 3 * k, "[100]", "[" + std::to_string(a) + "]") +
            pipeDoc(501 + 3 * k, "[" + std::to_string(a) + "]", "[" + std::to_string(b) + "]") +
            pipeDoc(502 + 3 * k, "[" + std::to_string(b) + "]", "[" + std::to_string(u) + "]");
  }
  body += "---\nbuffer_600: {md_op_name: q0, buffer_type: dram_io, id: 0, uniqid: 600, epoch_tiles: 8, "
          "tiles_per_input: 4, chip_id: [0], core_coordinates: [255, 255], size_tiles: 4, "
          "scatter_gather_num_tiles: 4, tile_size: 2080, dram_chan: 1, dram_addr: 4096, q_slots: 2, dram_io_flag: 1, "
          "data_format: Float16_b}\n" +
          relay(610, 0, 3, 0, 2) + unpacker(620, 0, 1, 0) + pipeDoc(630, "[600]", "[610]") + pipeDoc(631, "[610]", "[620]");
  pgtest::Run r = runWh(body);
  INFO(r.messages());
  REQUIRE(r.gen);
  for (uint32_t id : {9u, 10u, 11u, 0u}) {
    CHECK(find(r, sn(0, 6, 9, id)));
    CHECK(find(r, sn(1, 0, 9, id)));
  }
  const auto* local = find(r, sn(0, 0, 2, 12));
  REQUIRE(local);
  REQUIRE(local->phases.size() == 1);
  CHECK(local->phases[0].dramInput);
  CHECK(local->phases[0].dest == std::vector{sn(0, 2, 1, 8)});
  CHECK_FALSE(local->phases[0].ethSender);
  // Four 2-tile rings on one ethernet core, stacked from the top.
  std::vector<uint32_t> addrs;
  for (const L1Block& l : r.gen->l1)
    if (l.stream.chip == 0 && l.stream.y == 6 && l.stream.x == 9) addrs.push_back(l.addr);
  std::sort(addrs.begin(), addrs.end());
  CHECK(addrs == std::vector<uint32_t>{0x40000 - 4 * 4160, 0x40000 - 3 * 4160, 0x40000 - 2 * 4160, 0x40000 - 4160});
}
