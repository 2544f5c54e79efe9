// net2pipe over several chips (docs/cluster.md "The data path"): relay
// chains on ethernet cores, the links they take (routes, round robin,
// ethernet_datacopy channels), temporal epochs spanning chips; and end to
// end, what a consumer receives through the relays is the golden operand.
// The expected chips, channels and NOC coordinates are worked out by hand
// from docs/cluster.md's default topologies and the wormhole_b0 SoC
// descriptor's `eth:` list (chan 0 = 9-0, 1 = 1-0, 6 = 6-0, 7 = 4-0,
// 8 = 9-6, 9 = 1-6, 14 = 6-6, 15 = 4-6; core_coordinates are [y, x]).
#include "pipe/net2pipe.hpp"

#include "delivery.hpp"

#include "device/soc_descriptor.hpp"
#include "formats/blocking.hpp"
#include "netlist/blocking.hpp"
#include "golden/tm.hpp"
#include "netlist/parser.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <tuple>
#include <memory>
#include <set>
#include <string>

using namespace tessera;
using namespace tessera::pipe;
using namespace tessera::pipe::testing;

namespace {

struct Compiled {
  netlist::Netlist nl;
  std::unique_ptr<SocDescriptor> device;
  ClusterDescriptor cluster;
  Compilation comp;
  DiagnosticEngine diags;
  bool ok = false;
};

// Parses (the netlists here are valid) and compiles for `chips` chips of
// the wormhole_b0 default cluster, or `cluster` when given.
std::unique_ptr<Compiled> compile(const std::string& text, uint32_t chips,
                                  std::optional<ClusterDescriptor> cluster = std::nullopt) {
  auto c = std::make_unique<Compiled>();
  SourceBuffer source("multichip.yaml", text);
  auto nl = netlist::parseNetlist(source, c->diags);
  INFO(text);
  REQUIRE(nl);
  c->nl = std::move(*nl);
  c->device = std::make_unique<SocDescriptor>(loadBundledDescriptor("wormhole_b0_8x10"));
  if (cluster) {
    c->cluster = *cluster;
  } else {
    std::string why;
    auto d = defaultCluster(Arch::WormholeB0, chips, why);
    REQUIRE(d);
    c->cluster = *d;
  }
  netlist::ValidationTarget target{Arch::WormholeB0, c->device.get(), &c->cluster};
  c->ok = compileNetlist(c->nl, target, c->diags, c->comp);
  return c;
}

void requireOk(const Compiled& c) {
  for (const Diagnostic& d : c.diags.diagnostics())
    if (d.severity == Severity::Error) FAIL(d.message << " [" << d.rule << "]");
  REQUIRE(c.ok);
}

const netlist::Op& opNamed(const Compiled& c, const std::string& name) {
  for (const auto& g : c.nl.graphs)
    for (const auto& o : g.ops)
      if (o.name == name) return o;
  FAIL("no op " << name);
  return c.nl.graphs.front().ops.front();
}

// Every unpacker of eltwise op `opName` input `input` receives the golden
// operand (the coded producer through the input's TMs), core by core.
// `codedAs`: the op whose coded tiles the producer carries (an
// ethernet_datacopy's are its input's).
void checkEltwiseInput(const Compiled& c, const PipegenYaml& y, const std::string& opName, size_t input,
                       const std::string& codedAs = "") {
  Delivery d(c.nl, c.comp.queueBuffers, y);
  const netlist::Op& op = opNamed(c, opName);
  const netlist::Operand& in = op.inputs.at(input);
  formats::Blocking pb;
  bool isQueue = false;
  for (const auto& q : c.nl.queues)
    if (q.name == in.name) {
      pb = netlist::blockingOf(q);
      isQueue = true;
    }
  if (!isQueue) pb = netlist::blockingOf(opNamed(c, in.name));
  formats::Tensor x = codedTensor(d.idOf(codedAs.empty() ? in.name : codedAs), pb);
  x = golden::applyTms(x, in.tms);
  const formats::Blocking ob = netlist::blockingOf(op);
  int64_t core = 0;
  for (const Buffer& b : y.buffers) {
    if (b.mdOpName != opName || b.bufferType != BufferType::Unpacker || b.id != input) continue;
    std::vector<float> want;
    for (const auto& tc : formats::coreTileOrder(ob, core / ob.gridC, core % ob.gridC))
      want.push_back(x.at(0, tc.t, tc.rt * 32 + 7, tc.ct * 32 + 21));
    INFO(b.comment);
    CHECK(d.received(b.uniqid) == want);
    ++core;
  }
  CHECK(core == ob.gridR * ob.gridC);
}

// The contract's shape of every pipe: all its buffers on one chip, except
// an ethernet pipe: one input and one output, both on ethernet cores, at
// the two ends of one link of the cluster.
void checkPipesPerChip(const Compiled& c, const PipegenYaml& y) {
  std::map<BufferId, const Buffer*> byId;
  for (const Buffer& b : y.buffers) byId[b.uniqid] = &b;
  auto owner = [&](BufferId e) {
    auto it = byId.upper_bound(e);
    REQUIRE(it != byId.begin());
    return std::prev(it)->second;
  };
  for (const Pipe& p : y.pipes) {
    std::set<uint32_t> chips;
    for (BufferId e : p.inputList) chips.insert(owner(e)->chipId);
    for (const auto& list : p.outputList)
      for (BufferId o : list) chips.insert(owner(o)->chipId);
    INFO(p.comment);
    if (chips.size() == 1) continue;
    REQUIRE(p.inputList.size() == 1);
    REQUIRE(p.outputList.size() == 1);
    REQUIRE(p.outputList.front().size() == 1);
    const Buffer& from = *owner(p.inputList.front());
    const Buffer& to = *owner(p.outputList.front().front());
    REQUIRE(from.ethernetChan);
    REQUIRE(to.ethernetChan);
    const auto peer = c.cluster.peer(EthEndpoint{from.chipId, *from.ethernetChan});
    REQUIRE(peer);
    CHECK(*peer == (EthEndpoint{to.chipId, *to.ethernetChan}));
  }
}

struct EthPipe {
  uint32_t fromChip, fromChan, toChip, toChan;
  friend bool operator==(const EthPipe&, const EthPipe&) = default;
};

std::vector<EthPipe> ethernetPipes(const PipegenYaml& y) {
  std::map<BufferId, const Buffer*> byId;
  for (const Buffer& b : y.buffers) byId[b.uniqid] = &b;
  auto owner = [&](BufferId e) { return std::prev(byId.upper_bound(e))->second; };
  std::vector<EthPipe> out;
  for (const Pipe& p : y.pipes) {
    const Buffer& from = *owner(p.inputList.front());
    const Buffer& to = *owner(p.outputList.front().front());
    if (from.chipId != to.chipId) out.push_back(EthPipe{from.chipId, *from.ethernetChan, to.chipId, *to.ethernetChan});
  }
  return out;
}

const std::string kDf = "in_df: [Float16_b], acc_df: Float16_b, out_df: Float16_b, intermed_df: Float16_b, math_fidelity: HiFi4";

std::string queue(const std::string& name, const std::string& input, const std::string& blocking, int chip, int cells = 1) {
  std::string dram;
  for (int k = 0; k < cells; ++k) dram += std::string(k ? ", " : "") + "[" + std::to_string(k % 6) + ", 0x3" + std::to_string(k) + "000000]";
  return "  " + name + ": {type: queue, input: " + input + ", entries: 2, " + blocking +
         ", df: Float16_b, target_device: " + std::to_string(chip) + ", loc: dram, dram: [" + dram + "]}\n";
}

std::string graph(const std::string& name, int chip, const std::string& ops) {
  return "  " + name + ":\n    target_device: " + std::to_string(chip) + "\n    input_count: 2\n" + ops;
}

std::string netlistText(const std::string& queues, const std::string& graphs, const std::vector<std::string>& executes) {
  std::string s = "devices:\n  arch: wormhole_b0\nqueues:\n" + queues + "graphs:\n" + graphs + "programs:\n  - run:\n";
  for (const auto& g : executes) s += "    - execute: {graph_name: " + g + "}\n";
  return s;
}

} // namespace

TEST_CASE("an op reading an op on the next chip reads its relay chain", "[pipe][multichip]") {
  // a (chip 0, 1x2 cores, 2x2 tiles each) -> b (chip 1, 2x1 cores, reading
  // a transposed: every b core gathers from both a cores) -> out (chip 1).
  // Default 1x2 cluster: chip 0 channels 8, 9 linked to chip 1's 0, 1.
  // Each a packer gets one chain, links round robin: a core 0 over 8 -> 0,
  // a core 1 over 9 -> 1.
  auto c = compile(netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 4], ublock: [1, 1]", 0) +
                                   queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [4, 2], ublock: [1, 1]", 1),
                               graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 2], inputs: [in], " + kDf +
                                                  ", t: 1, mblock: [2, 2], ublock: [1, 1]}\n") +
                                   graph("g1", 1, "    b: {type: datacopy, grid_loc: [1, 1], grid_size: [2, 1], inputs: [a], " + kDf +
                                                      ", t: 1, mblock: [2, 2], ublock: [1, 1], input_0_tms: [transpose]}\n"),
                               {"g0", "g1"}),
                   2);
  requireOk(*c);
  // One temporal epoch (g1 reads g0's op) on both chips.
  REQUIRE(c->comp.epochs.size() == 1);
  const TemporalEpoch& e = c->comp.epochs[0].epoch;
  CHECK(e.graphs.size() == 2);
  CHECK(e.chips == std::set<uint32_t>{0, 1});
  CHECK(e.executions.size() == 2);
  const PipegenYaml& y = c->comp.epochs[0].yaml;
  checkPipesPerChip(*c, y);
  CHECK(ethernetPipes(y) == std::vector<EthPipe>{{0, 8, 1, 0}, {0, 9, 1, 1}});
  // The relays: chan 8 of chip 0 at 9-6 ([6, 9]), chan 0 of chip 1 at 9-0 ([0, 9]).
  int relays = 0;
  for (const Buffer& b : y.buffers) {
    if (b.bufferType != BufferType::Relay) continue;
    ++relays;
    REQUIRE(b.ethernetChan);
    CHECK(b.mdOpName == "a");
    CHECK(b.tilesPerInput == 4);
    CHECK(b.epochTiles == 8);
    if (*b.ethernetChan == 8) CHECK((b.chipId == 0 && b.core.r == 6 && b.core.c == 9));
    if (*b.ethernetChan == 0) CHECK((b.chipId == 1 && b.core.r == 0 && b.core.c == 9));
  }
  CHECK(relays == 4);
  for (const Buffer& b : y.buffers) {
    if (b.mdOpName == "a" && !b.ethernetChan) CHECK(b.chipId == 0);
    if (b.mdOpName == "b" || b.mdOpName == "out") CHECK(b.chipId == 1);
  }
  checkEltwiseInput(*c, y, "b", 0);
}

TEST_CASE("grayskull: an op reading an op of another chip reads a chain through PCIe", "[pipe][multichip]") {
  // The first case on two grayskull chips (no ethernet, no links: through
  // the host, docs/net2pipe.md "Through PCIe"). Every b core reads both a
  // packers; with no links to spread replicas over, each b core's list is
  // gathered into one chain: two chains of two PCIe relays each, on the idle
  // cores from the grid's last one backwards (a holds [0, 0] and [0, 1] of
  // chip 0, b [1, 1] and [2, 1] of chip 1): [9, 11], then [9, 10].
  std::string text =
      netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 4], ublock: [1, 1]", 0) +
                      queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [4, 2], ublock: [1, 1]", 1),
                  graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 2], inputs: [in], " + kDf +
                                     ", t: 1, mblock: [2, 2], ublock: [1, 1]}\n") +
                      graph("g1", 1, "    b: {type: datacopy, grid_loc: [1, 1], grid_size: [2, 1], inputs: [a], " + kDf +
                                         ", t: 1, mblock: [2, 2], ublock: [1, 1], input_0_tms: [transpose]}\n"),
                  {"g0", "g1"});
  text.replace(text.find("wormhole_b0"), 11, "grayskull");
  auto c = std::make_unique<Compiled>();
  SourceBuffer source("multichip.yaml", text);
  auto nl = netlist::parseNetlist(source, c->diags);
  REQUIRE(nl);
  c->nl = std::move(*nl);
  c->device = std::make_unique<SocDescriptor>(loadBundledDescriptor("grayskull_10x12"));
  std::string why;
  auto d = defaultCluster(Arch::Grayskull, 2, why);
  REQUIRE(d);
  c->cluster = *d;
  netlist::ValidationTarget target{Arch::Grayskull, c->device.get(), &c->cluster};
  c->ok = compileNetlist(c->nl, target, c->diags, c->comp);
  requireOk(*c);
  REQUIRE(c->comp.epochs.size() == 1);
  const PipegenYaml& y = c->comp.epochs[0].yaml;
  std::map<BufferId, const Buffer*> byId;
  for (const Buffer& b : y.buffers) byId[b.uniqid] = &b;
  auto owner = [&](BufferId e) { return std::prev(byId.upper_bound(e))->second; };
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> relays;  // chip, r, c
  for (const Buffer& b : y.buffers) {
    CHECK_FALSE(b.ethernetChan);
    if (b.bufferType != BufferType::Relay) continue;
    CHECK(b.pcieRelay);
    CHECK(b.mdOpName == "a");
    CHECK(b.tilesPerInput == 4);  // a gathered list: half of each packer's 4 tiles
    relays.emplace_back(b.chipId, b.core.r, b.core.c);
  }
  std::sort(relays.begin(), relays.end());
  CHECK(relays == std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>{{0, 9, 10}, {0, 9, 11}, {1, 9, 10}, {1, 9, 11}});
  int hops = 0;
  for (const Pipe& p : y.pipes) {
    const Buffer& from = *owner(p.inputList.front());
    const Buffer& to = *owner(p.outputList.front().front());
    INFO(p.comment);
    if (from.chipId == to.chipId) {
      CHECK_FALSE(p.mmioPipe);
      continue;
    }
    ++hops;
    CHECK(p.mmioPipe);
    CHECK(from.pcieRelay);
    CHECK(to.pcieRelay);
    CHECK((from.chipId == 0 && to.chipId == 1 && from.core.r == to.core.r && from.core.c == to.core.c));
  }
  CHECK(hops == 2);
  checkEltwiseInput(*c, y, "b", 0);
}

TEST_CASE("a route of two hops relays through the chip between", "[pipe][multichip]") {
  // 2x2 default cluster: chips 0 1 / 2 3. Route 0 -> 3: 0 -> 1 -> 3 (the
  // lower id of the two ways). Hop 0 -> 1 over 0.8 -> 1.0 (the pair's first
  // link); on chip 1, channel 0's relay feeds channel 14's (an on-chip
  // pipe); hop 1 -> 3 over 1.14 -> 3.6.
  auto c = compile(netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 2, mblock: [1, 2], ublock: [2, 1]", 0) +
                                   queue("out", "b", "grid_size: [1, 1], t: 2, mblock: [1, 2], ublock: [2, 1]", 3),
                               graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in], " + kDf +
                                                  ", t: 2, mblock: [1, 2], ublock: [2, 1]}\n") +
                                   graph("g3", 3, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a], " + kDf +
                                                      ", t: 2, mblock: [1, 2], ublock: [2, 1]}\n"),
                               {"g0", "g3"}),
                   4);
  requireOk(*c);
  REQUIRE(c->comp.epochs.size() == 1);
  const PipegenYaml& y = c->comp.epochs[0].yaml;
  checkPipesPerChip(*c, y);
  CHECK(ethernetPipes(y) == std::vector<EthPipe>{{0, 8, 1, 0}, {1, 14, 3, 6}});
  std::set<std::pair<uint32_t, uint32_t>> relays;
  for (const Buffer& b : y.buffers)
    if (b.bufferType == BufferType::Relay) relays.insert({b.chipId, *b.ethernetChan});
  CHECK(relays == std::set<std::pair<uint32_t, uint32_t>>{{0, 8}, {1, 0}, {1, 14}, {3, 6}});
  checkEltwiseInput(*c, y, "b", 0);
}

TEST_CASE("no route between two chips is a located error", "[pipe][multichip]") {
  ClusterDescriptor two;
  two.name = "unlinked";
  two.chips[0] = ChipLocation{};
  two.chips[1] = ChipLocation{1, 0, 0, 0};
  two.mmio = {0, 1};
  auto c = compile(netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 0) +
                                   queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 1),
                               graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in], " + kDf +
                                                  ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n") +
                                   graph("g1", 1, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a], " + kDf +
                                                      ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n"),
                               {"g0", "g1"}),
                   2, two);
  CHECK_FALSE(c->ok);
  std::string all;
  for (const Diagnostic& d : c->diags.diagnostics()) all += d.message + " [" + d.rule + "]\n";
  INFO(all);
  REQUIRE(c->diags.errorCount() == 1);
  const Diagnostic& d = c->diags.diagnostics().front();
  CHECK(d.rule == "pipe-no-route");
  CHECK(d.loc.valid());
  CHECK(d.message == "op 'b' input 0 on chip 1 reads 'a' on chip 0, but no ethernet route leads from chip 0 to chip 1");
}

TEST_CASE("ethernet_datacopy relays each core over its ingress and egress channels", "[pipe][multichip]") {
  // eth: 1x2 cores, core 0 over chip 0 chan 9 -> chip 1 chan 1, core 1 over
  // 8 -> 0 (channels given, crossed on purpose). It copies a (1x2 cores of
  // 2x1 tiles, reblocked: eth's cores hold 1x2 tiles... of the same 2x2
  // tensor, so each eth core gathers from both a cores). b on chip 1
  // reads eth whole.
  auto c = compile(netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 1]", 0) +
                                   queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 1]", 1),
                               graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 2], inputs: [in], " + kDf +
                                                  ", t: 1, mblock: [2, 1], ublock: [1, 1]}\n"
                                                  "    eth: {type: ethernet_datacopy, grid_size: [2, 1], inputs: [a], " + kDf +
                                                  ", t: 1, mblock: [1, 2], ublock: [1, 1], attributes: {dest_device: 1, ingress_channels: [9, 8], egress_channels: [1, 0]}}\n") +
                                   graph("g1", 1, "    b: {type: datacopy, grid_loc: [3, 3], grid_size: [1, 1], inputs: [eth], " + kDf +
                                                      ", t: 1, mblock: [2, 2], ublock: [1, 1]}\n"),
                               {"g0", "g1"}),
                   2);
  requireOk(*c);
  REQUIRE(c->comp.epochs.size() == 1);
  const PipegenYaml& y = c->comp.epochs[0].yaml;
  checkPipesPerChip(*c, y);
  CHECK(ethernetPipes(y) == std::vector<EthPipe>{{0, 9, 1, 1}, {0, 8, 1, 0}});
  std::vector<std::tuple<BufferType, uint32_t, uint32_t, uint32_t, uint32_t>> eth; // type, chip, chan, y, x
  for (const Buffer& b : y.buffers)
    if (b.mdOpName == "eth") eth.emplace_back(b.bufferType, b.chipId, *b.ethernetChan, b.core.r, b.core.c);
  // chan 9 = 1-6, chan 1 = 1-0, chan 8 = 9-6, chan 0 = 9-0.
  CHECK(eth == decltype(eth){{BufferType::Relay, 0, 9, 6, 1},
                             {BufferType::Ethernet, 1, 1, 0, 1},
                             {BufferType::Relay, 0, 8, 6, 9},
                             {BufferType::Ethernet, 1, 0, 0, 9}});
  checkEltwiseInput(*c, y, "b", 0, "a");
}

TEST_CASE("ethernet_datacopy without channels takes the links in turn", "[pipe][multichip]") {
  // Two cores, no channels: core 0 over the pair's first link (8 -> 0),
  // core 1 over the second (9 -> 1).
  auto c = compile(netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1]", 0) +
                                   queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1]", 1),
                               graph("g0", 0, "    eth: {type: ethernet_datacopy, grid_size: [1, 2], inputs: [in], " + kDf +
                                                  ", t: 1, mblock: [1, 1], ublock: [1, 1], attributes: {dest_device: 1}}\n") +
                                   graph("g1", 1, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [eth], " + kDf +
                                                      ", t: 1, mblock: [1, 2], ublock: [1, 1]}\n"),
                               {"g0", "g1"}),
                   2);
  requireOk(*c);
  const PipegenYaml& y = c->comp.epochs.at(0).yaml;
  checkPipesPerChip(*c, y);
  CHECK(ethernetPipes(y) == std::vector<EthPipe>{{0, 8, 1, 0}, {0, 9, 1, 1}});
  checkEltwiseInput(*c, y, "b", 0, "in");
}

TEST_CASE("queues on another chip: read and written over relays", "[pipe][multichip]") {
  // b on chip 1 reads queue q on chip 0 (its DRAM cell relayed over 8 -> 0)
  // and writes queue out on chip 0 (its packer relayed back over the pair's
  // next link, 1.1 -> 0.9).
  auto c = compile(netlistText(queue("q", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 1]", 0) +
                                   queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 1]", 0),
                               graph("g1", 1, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q], " + kDf +
                                                  ", t: 1, mblock: [2, 2], ublock: [1, 1], input_0_tms: [transpose]}\n"),
                               {"g1"}),
                   2);
  requireOk(*c);
  REQUIRE(c->comp.epochs.size() == 1);
  CHECK(c->comp.epochs[0].epoch.chips == std::set<uint32_t>{1});
  const PipegenYaml& y = c->comp.epochs[0].yaml;
  checkPipesPerChip(*c, y);
  CHECK(ethernetPipes(y) == std::vector<EthPipe>{{0, 8, 1, 0}, {1, 1, 0, 9}});
  for (const Buffer& b : y.buffers)
    if ((b.mdOpName == "q" || b.mdOpName == "out") && !b.ethernetChan) CHECK(b.chipId == 0);
  checkEltwiseInput(*c, y, "b", 0);
  // The index: q is read and out written over ethernet (cores: the relays'
  // ethernet cores on chip 0, [y, x]: chan 8 = [6, 9], chan 9 = [6, 1]).
  for (const QueueBufferInfo& info : c->comp.queueBuffers) {
    CHECK(info.chip == 0);
    const auto& list = info.queue == "q" ? info.readers : info.writers;
    REQUIRE(list.size() == 1);
    CHECK(list[0].relay);
    REQUIRE(list[0].cores.size() == 1);
    CHECK(list[0].cores[0].r == 6);
    CHECK(list[0].cores[0].c == (info.queue == "q" ? 9u : 1u));
  }
}

TEST_CASE("a relay read out of order stays a FIFO: the chain's origin keeps the window", "[pipe][multichip]") {
  // a: one core of 8x8 Float16_b tiles; b on chip 1 reads it transposed
  // (column-major: 0, 8, .., 56, 1, 9, ..). pipegen has a's stream send the
  // tiles in b's order through the chain, so the relays stay at their
  // preferred two tiles (a ublock of 1 tile, twice) and a's packer keeps
  // the window: by position 7 (tile 56) only tile 0 is done, so 56 tiles
  // from tile 1 must be held. Before, the relay on chip 1 held that window
  // (56 x 2080 bytes, more than the 98304 free on an ethernet core).
  auto c = compile(netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [8, 8], ublock: [1, 1]", 0) +
                                   queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [8, 8], ublock: [1, 1]", 1),
                               graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in], " + kDf +
                                                  ", t: 1, mblock: [8, 8], ublock: [1, 1], buf_size_mb: 1}\n") +
                                   graph("g1", 1, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a], " + kDf +
                                                      ", t: 1, mblock: [8, 8], ublock: [1, 1], input_0_tms: [transpose]}\n"),
                               {"g0", "g1"}),
                   2);
  requireOk(*c);
  const PipegenYaml& y = c->comp.epochs.at(0).yaml;
  checkPipesPerChip(*c, y);
  int relays = 0;
  for (const Buffer& b : y.buffers) {
    if (b.bufferType == BufferType::Relay) {
      ++relays;
      CHECK(b.sizeTiles == 2);
    }
    if (b.bufferType == BufferType::Packer && b.mdOpName == "a") CHECK(b.sizeTiles >= 56);
  }
  CHECK(relays == 2);
  checkEltwiseInput(*c, y, "b", 0);
}

TEST_CASE("relays that do not fit the ethernet core's L1 even at one tile", "[pipe][multichip]") {
  // a: 48 cores (6x8) of one Float32 tile each, each read by its own core
  // of b on chip 1: 48 chains (one per buffer: no list gathers several),
  // over the pair's two links, 24 each. A relay shrinks to one tile (4128
  // bytes): 24 x 4128 = 99072 bytes on each of the four ethernet cores,
  // more than the 98304 free for data.
  const std::string f32 = "in_df: [Float32], acc_df: Float32, out_df: Float32, intermed_df: Float32, math_fidelity: HiFi4";
  auto q = [](const std::string& name, const std::string& input, int chip) {
    return "  " + name + ": {type: queue, input: " + input +
           ", entries: 2, grid_size: [1, 1], t: 1, mblock: [6, 8], ublock: [1, 1], df: Float32, target_device: " +
           std::to_string(chip) + ", loc: dram, dram: [[0, 0x30000000]]}\n";
  };
  auto c = compile(netlistText(q("in", "HOST", 0) + q("out", "b", 1),
                               graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [6, 8], inputs: [in], " + f32 +
                                                  ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n") +
                                   graph("g1", 1, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [6, 8], inputs: [a], " + f32 +
                                                      ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n"),
                               {"g0", "g1"}),
                   2);
  CHECK_FALSE(c->ok);
  std::string all;
  for (const Diagnostic& d : c->diags.diagnostics()) all += d.message + " [" + d.rule + "]\n";
  INFO(all);
  REQUIRE(c->diags.errorCount() >= 1);
  const Diagnostic& d = c->diags.diagnostics().front();
  CHECK(d.rule == "pipe-l1-overflow");
  CHECK(d.message.rfind("chip 0 ethernet chan 9 [y=6, x=1] (relays for op 'b'): buffers need 99072 bytes", 0) == 0);
  CHECK(d.message.find("but 98304 bytes are free for data (L1 from 0x28000 to its end, eth_l1_size 262144)") !=
        std::string::npos);
}

TEST_CASE("epochs: graphs of one temporal graph share an epoch, launches by consecutive executes", "[pipe][multichip][epochs]") {
  // g0 (chip 0) and g1 (chip 1) are joined by an op edge; g2 (chip 0)
  // stands alone. Program: g0, g1 (one launch), g2, then g1 alone with a
  // prologue setting for q (another launch of the same temporal graph:
  // another epoch), g2, then g0 and g1 again (the first epoch again).
  // (g1 then g0 with nothing between would be one launch.)
  const std::string text =
      netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 0) +
                      queue("q", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 1) +
                      queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 1) +
                      queue("out2", "z", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 0),
                  graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in], " + kDf +
                                     ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n") +
                      graph("g1", 1, "    b: {type: add, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, q], in_df: [Float16_b, Float16_b], acc_df: Float16_b, out_df: Float16_b, intermed_df: Float16_b, math_fidelity: HiFi4"
                                     ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n") +
                      graph("g2", 0, "    z: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in], " + kDf +
                                     ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n"),
                  {"g0", "g1", "g2"}) +
      "    - execute: {graph_name: g1, queue_settings: {q: {prologue: true, epilogue: false, zero: false, rd_ptr_global: 0}}}\n"
      "    - execute: {graph_name: g2}\n    - execute: {graph_name: g0}\n    - execute: {graph_name: g1}\n";
  SourceBuffer source("epochs.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  REQUIRE(nl);
  const auto epochs = deriveEpochs(*nl, Arch::WormholeB0);
  REQUIRE(epochs.size() == 3);
  CHECK(epochs[0].graphs.size() == 2);
  CHECK(epochs[0].chips == std::set<uint32_t>{0, 1});
  CHECK(epochs[0].executions.size() == 4);
  CHECK(epochs[1].firstGraph().name == "g2");
  CHECK(epochs[1].chips == std::set<uint32_t>{0});
  CHECK(epochs[1].executions.size() == 2);
  CHECK(epochs[2].graphs.size() == 2);
  CHECK(epochs[2].temporalGraph == epochs[0].temporalGraph);
  CHECK(epochs[2].settingsOf("q").prologue);
  CHECK(epochs[2].executions.size() == 1);
}

TEST_CASE("a gather over a route of four hops: one gathered chain", "[pipe][multichip]") {
  // 2x4 default cluster (chips 0-3 / 4-7): chip 7 is 4 hops from chip 0.
  // b on chip 0 reads a's 8 cores (chip 7) transposed: its one list
  // gathers all 8 buffers, so they are gathered on chip 7 in b's order into
  // one chain of 4 hops (8 relays, 4 ethernet pipes) rather than 8 chains.
  auto c = compile(netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 4], ublock: [1, 1]", 7) +
                                   queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [4, 2], ublock: [1, 1]", 0),
                               graph("g7", 7, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [2, 4], inputs: [in], " + kDf +
                                                  ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n") +
                                   graph("g0", 0, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a], " + kDf +
                                                      ", t: 1, mblock: [4, 2], ublock: [1, 1], input_0_tms: [transpose]}\n"),
                               {"g7", "g0"}),
                   8);
  requireOk(*c);
  const PipegenYaml& y = c->comp.epochs.at(0).yaml;
  checkPipesPerChip(*c, y);
  CHECK(ethernetPipes(y).size() == 4);
  int relays = 0;
  for (const Buffer& b : y.buffers) relays += b.bufferType == BufferType::Relay;
  CHECK(relays == 4 * 2);
  checkEltwiseInput(*c, y, "b", 0);
}

TEST_CASE("many chains over a route of four hops", "[pipe][multichip]") {
  // As above, but b's 8 cores each read one core of a: one chain per
  // buffer of a (8 x 4 hops: 64 relays, 32 ethernet pipes), a gather
  // would make as many.
  auto c = compile(netlistText(queue("in", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 4], ublock: [1, 1]", 7) +
                                   queue("out", "b", "grid_size: [1, 1], t: 1, mblock: [2, 4], ublock: [1, 1]", 0),
                               graph("g7", 7, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [2, 4], inputs: [in], " + kDf +
                                                  ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n") +
                                   graph("g0", 0, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [2, 4], inputs: [a], " + kDf +
                                                      ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n"),
                               {"g7", "g0"}),
                   8);
  requireOk(*c);
  const PipegenYaml& y = c->comp.epochs.at(0).yaml;
  checkPipesPerChip(*c, y);
  CHECK(ethernetPipes(y).size() == 8 * 4);
  int relays = 0;
  for (const Buffer& b : y.buffers) relays += b.bufferType == BufferType::Relay;
  CHECK(relays == 8 * 4 * 2);
  checkEltwiseInput(*c, y, "b", 0);
}

TEST_CASE("chains go around a link whose ethernet cores are full", "[pipe][multichip]") {
  // A square of four chips, one link per side: 0.8 - 1.0, 2.8 - 3.0,
  // 0.14 - 2.6, 1.14 - 3.6. a (chip 0, 5x6 cores of one Float32 tile) is
  // read core by core by b on chip 1: 30 chains. The 0 - 1 link's cores
  // take 23 relays of 4128 bytes (23 x 4128 = 94944 of 98304; a 24th would
  // need 99072), so chains 24 to 30 take the fewest-hop route over links
  // with room: 0 -> 2 -> 3 -> 1 (three ethernet pipes each).
  ClusterDescriptor square;
  square.name = "square";
  square.chips[0] = ChipLocation{};
  square.chips[1] = ChipLocation{1, 0, 0, 0};
  square.chips[2] = ChipLocation{0, 1, 0, 0};
  square.chips[3] = ChipLocation{1, 1, 0, 0};
  square.links = {EthLink{{0, 8}, {1, 0}, {}}, EthLink{{0, 14}, {2, 6}, {}}, EthLink{{1, 14}, {3, 6}, {}},
                  EthLink{{2, 8}, {3, 0}, {}}};
  square.mmio = {0};
  const std::string f32 = "in_df: [Float32], acc_df: Float32, out_df: Float32, intermed_df: Float32, math_fidelity: HiFi4";
  auto q = [](const std::string& name, const std::string& input, int chip) {
    return "  " + name + ": {type: queue, input: " + input +
           ", entries: 2, grid_size: [1, 1], t: 1, mblock: [5, 6], ublock: [1, 1], df: Float32, target_device: " +
           std::to_string(chip) + ", loc: dram, dram: [[0, 0x30000000]]}\n";
  };
  auto c = compile(netlistText(q("in", "HOST", 0) + q("out", "b", 1),
                               graph("g0", 0, "    a: {type: datacopy, grid_loc: [0, 0], grid_size: [5, 6], inputs: [in], " + f32 +
                                                  ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n") +
                                   graph("g1", 1, "    b: {type: datacopy, grid_loc: [0, 0], grid_size: [5, 6], inputs: [a], " + f32 +
                                                      ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n"),
                               {"g0", "g1"}),
                   4, square);
  requireOk(*c);
  const PipegenYaml& y = c->comp.epochs.at(0).yaml;
  checkPipesPerChip(*c, y);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, int> perLink;
  for (const EthPipe& p : ethernetPipes(y)) ++perLink[{p.fromChip, p.fromChan, p.toChip, p.toChan}];
  CHECK(perLink == std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, int>{
                       {{0, 8, 1, 0}, 23}, {{0, 14, 2, 6}, 7}, {{2, 8, 3, 0}, 7}, {{3, 6, 1, 14}, 7}});
  checkEltwiseInput(*c, y, "b", 0);
}
