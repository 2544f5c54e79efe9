// net2pipe's builder (lib/pipe/epoch_builder.hpp and its passes) on netlists written here:
// chunking of source buffers (scatter_gather_num_tiles = gcd of the runs),
// multicast grouping, buffer sizes, temporal epochs. Expected values are
// worked out by hand in the comments.
#include "pipe/net2pipe.hpp"

#include "device/soc_descriptor.hpp"
#include "netlist/parser.hpp"
#include "netlist/validator.hpp"
#include "pipe/epochs.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

using namespace tessera;
using namespace tessera::pipe;

namespace {

struct Built {
  netlist::Netlist nl;
  std::unique_ptr<SocDescriptor> device;
  Compilation comp;
  DiagnosticEngine diags;
  bool ok = false;
};

std::unique_ptr<Built> build(const std::string& text) {
  auto b = std::make_unique<Built>();
  SourceBuffer source("pipe_test.yaml", text);
  auto nl = netlist::parseNetlist(source, b->diags);
  INFO(text);
  REQUIRE(nl);
  b->nl = std::move(*nl);
  b->device = std::make_unique<SocDescriptor>(loadBundledDescriptor("grayskull_10x12"));
  netlist::ValidationTarget target{Arch::Grayskull, b->device.get()};
  netlist::validateNetlist(b->nl, target, b->diags);
  for (const Diagnostic& d : b->diags.diagnostics())
    if (d.severity == Severity::Error) FAIL(d.message << " [" << d.rule << "]");
  b->ok = compileNetlist(b->nl, target, b->diags, b->comp);
  return b;
}

const std::string kDf = "in_df: [Float16_b], acc_df: Float16_b, out_df: Float16_b, intermed_df: Float16_b, math_fidelity: HiFi4";

std::string queue(const std::string& name, const std::string& input, const std::string& blocking, int chan) {
  return "  " + name + ": {type: queue, input: " + input + ", entries: 2, " + blocking +
         ", df: Float16_b, target_device: 0, loc: dram, dram: [[" + std::to_string(chan) + ", 0x10000000]]}\n";
}

std::string netlistText(const std::string& queues, const std::string& ops, int inputCount = 1) {
  return "devices:\n  arch: grayskull\nqueues:\n" + queues + "graphs:\n  g:\n    target_device: 0\n    input_count: " +
         std::to_string(inputCount) + "\n" + ops + "programs:\n  - run:\n    - execute: {graph_name: g}\n";
}

const Buffer& bufferOf(const PipegenYaml& y, const std::string& comment) {
  for (const Buffer& b : y.buffers)
    if (b.comment == comment) return b;
  FAIL("no buffer '" << comment << "'");
  return y.buffers.front();
}

std::vector<const Pipe*> pipesOf(const PipegenYaml& y, const std::string& commentPrefix) {
  std::vector<const Pipe*> out;
  for (const Pipe& p : y.pipes)
    if (p.comment.rfind(commentPrefix, 0) == 0) out.push_back(&p);
  return out;
}

} // namespace

TEST_CASE("scatter chunks are the gcd of the runs every pipe reads", "[pipe][chunks]") {
  // Queue [1, 2x6] (row-major tiles r*6+c) read by d0 with hslice 3 (t 3 of
  // 2x2): slice s reads columns 2s..2s+1 of both rows: tiles 0 1 6 7, 2 3 8 9,
  // 4 5 10 11: runs of 2 at 0 6 2 8 4 10: sg 2, 6 chunks.
  auto b = build(netlistText(queue("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 6], ublock: [1, 1]", 0) +
                                 queue("out0", "d0", "grid_size: [1, 1], t: 3, mblock: [2, 2], ublock: [1, 1]", 1),
                             "    d0: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], " + kDf +
                                 ", t: 3, mblock: [2, 2], ublock: [1, 1], input_0_tms: [hslice: 3]}\n"));
  REQUIRE(b->ok);
  const PipegenYaml& y = b->comp.epochs.at(0).yaml;
  const Buffer& q = bufferOf(y, "Queue in0: r = 0, c = 0");
  CHECK(q.uniqid == 101000000000ull);
  CHECK(q.scatterGatherNumTiles == 2);
  CHECK(q.isScatter);
  CHECK(q.replicate == 6);
  auto pipes = pipesOf(y, "Op: d0, input 0");
  REQUIRE(pipes.size() == 1);
  CHECK(pipes[0]->inputList ==
        std::vector<BufferId>{101000000000ull, 101000000006ull, 101000000002ull, 101000000008ull, 101000000004ull, 101000000010ull});
  // The unpacker receives 2-tile chunks.
  CHECK(bufferOf(y, "Op d0: [r=0, c=0], kernel input buf 0, from in0").scatterGatherNumTiles == 2);

  // A second reader with different runs lowers the gcd for every reader:
  // d1 reads the queue transposed (1-tile runs), so d0's list is in 1-tile
  // chunks too.
  auto b2 = build(netlistText(queue("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 6], ublock: [1, 1]", 0) +
                                  queue("out0", "d0", "grid_size: [1, 1], t: 3, mblock: [2, 2], ublock: [1, 1]", 1) +
                                  queue("out1", "d1", "grid_size: [1, 1], t: 1, mblock: [6, 2], ublock: [1, 1]", 2),
                              "    d0: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], " + kDf +
                                  ", t: 3, mblock: [2, 2], ublock: [1, 1], input_0_tms: [hslice: 3]}\n"
                                  "    d1: {type: datacopy, grid_loc: [0, 1], grid_size: [1, 1], inputs: [in0], " + kDf +
                                  ", t: 1, mblock: [6, 2], ublock: [1, 1], input_0_tms: [transpose]}\n"));
  REQUIRE(b2->ok);
  const PipegenYaml& y2 = b2->comp.epochs.at(0).yaml;
  CHECK(bufferOf(y2, "Queue in0: r = 0, c = 0").scatterGatherNumTiles == 1);
  CHECK(bufferOf(y2, "Queue in0: r = 0, c = 0").replicate == 12);
  auto p0 = pipesOf(y2, "Op: d0, input 0");
  REQUIRE(p0.size() == 1);
  CHECK(p0[0]->inputList.size() == 12);
  CHECK(p0[0]->inputList[2] == 101000000006ull);
  // Both pipes read the one DRAM buffer: 2 readers, indices 0 and 1.
  CHECK(p0[0]->dramPipeTotalReaders == std::vector<uint32_t>(12, 2));
  CHECK(p0[0]->dramPipeReaderIndex == std::vector<uint32_t>(12, 0));
  auto p1 = pipesOf(y2, "Op: d1, input 0");
  REQUIRE(p1.size() == 1);
  CHECK(p1[0]->dramPipeReaderIndex == std::vector<uint32_t>(12, 1));
  // Transposed 6x2 read row-major: (r, c) is queue (c, r), tile c*6 + r.
  CHECK(p1[0]->inputList[0] == 101000000000ull);
  CHECK(p1[0]->inputList[1] == 101000000006ull);
  CHECK(p1[0]->inputList[2] == 101000000001ull);
}

TEST_CASE("cores reading the same tiles share one multicast pipe", "[pipe][mcast]") {
  // src [1, 1x2] on one core; bc [2, 2] grid reads it broadcast r 2: core
  // (r, c) reads tile (0, c) of src: two column groups of 2 cores, each a
  // column multicast (NOC 1) from src's packer. Worker grid: bc at [1, 3].
  auto b = build(netlistText(queue("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1]", 0) +
                                 queue("out0", "bc", "grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 1]", 1),
                             "    src: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], " + kDf +
                                 ", t: 1, mblock: [1, 2], ublock: [1, 1]}\n"
                                 "    bc: {type: datacopy, grid_loc: [1, 3], grid_size: [2, 2], inputs: [src], " + kDf +
                                 ", t: 1, mblock: [1, 1], ublock: [1, 1], input_0_tms: [broadcast: {r: 2}]}\n"));
  REQUIRE(b->ok);
  const PipegenYaml& y = b->comp.epochs.at(0).yaml;
  auto pipes = pipesOf(y, "Op: bc, input 0");
  REQUIRE(pipes.size() == 2);
  const Buffer& packer = bufferOf(y, "Op src: [r=0, c=0], kernel output buf");
  // Each column reads one tile: 1-tile scatter chunks of src.
  CHECK(packer.isScatter);
  CHECK(packer.scatterGatherNumTiles == 1);
  CHECK(pipes[0]->inputList == std::vector<BufferId>{packer.uniqid});
  CHECK(pipes[1]->inputList == std::vector<BufferId>{packer.uniqid + 1});
  const BufferId c0r0 = bufferOf(y, "Op bc: [r=1, c=3], kernel input buf 0, from src").uniqid;
  const BufferId c0r1 = bufferOf(y, "Op bc: [r=2, c=3], kernel input buf 0, from src").uniqid;
  REQUIRE(pipes[0]->outputList.size() == 1);
  CHECK(pipes[0]->outputList[0] == std::vector<BufferId>{c0r0, c0r1});
  CHECK(pipes[0]->outgoingNocId == 1);
  CHECK(pipes[0]->mcastCoreRc == std::vector<std::vector<uint32_t>>{{0, 1, 3}});
  CHECK(pipes[1]->mcastCoreRc == std::vector<std::vector<uint32_t>>{{0, 1, 4}});

  // Under grid_transpose the same logical columns lie along worker rows.
  auto t = build(netlistText(queue("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1]", 0) +
                                 queue("out0", "bc", "grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 1]", 1),
                             "    src: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], " + kDf +
                                 ", t: 1, mblock: [1, 2], ublock: [1, 1]}\n"
                                 "    bc: {type: datacopy, grid_loc: [1, 3], grid_size: [2, 2], grid_transpose: true, inputs: [src], " +
                                 kDf + ", t: 1, mblock: [1, 1], ublock: [1, 1], input_0_tms: [broadcast: {r: 2}]}\n"));
  REQUIRE(t->ok);
  const PipegenYaml& ty = t->comp.epochs.at(0).yaml;
  auto tp = pipesOf(ty, "Op: bc, input 0");
  REQUIRE(tp.size() == 2);
  // Logical core (1, 0) sits at worker (1 + 0, 3 + 1).
  CHECK(tp[0]->outputList[0] == std::vector<BufferId>{bufferOf(ty, "Op bc: [r=1, c=3], kernel input buf 0, from src").uniqid,
                                                      bufferOf(ty, "Op bc: [r=1, c=4], kernel input buf 0, from src").uniqid});
  CHECK(tp[0]->outgoingNocId == 0);
}

TEST_CASE("a multicast group that is not a rectangle splits into row segments", "[pipe][mcast]") {
  // A 1x2 queue broadcast r 2 and c 2 is [1, 2x4]; on a [2, 4] grid core
  // (r, c) reads queue tile (0, c % 2): columns 0 and 2 read tile 0,
  // columns 1 and 3 tile 1. Group {0, 2} x {0, 1} is not a rectangle: it
  // splits into rows, and in a row columns 0 and 2 are not adjacent: one
  // pipe per core, 8 in all.
  auto b = build(netlistText(queue("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1]", 0) +
                                 queue("out0", "bc", "grid_size: [1, 1], t: 1, mblock: [2, 4], ublock: [1, 1]", 1),
                             "    bc: {type: datacopy, grid_loc: [0, 0], grid_size: [2, 4], inputs: [in0], " + kDf +
                                 ", t: 1, mblock: [1, 1], ublock: [1, 1], input_0_tms: [broadcast: {r: 2}, broadcast: {c: 2}]}\n"));
  REQUIRE(b->ok);
  auto pipes = pipesOf(b->comp.epochs.at(0).yaml, "Op: bc, input 0");
  CHECK(pipes.size() == 8);
  for (const Pipe* p : pipes) CHECK(p->outputList.at(0).size() == 1);
}

TEST_CASE("buffer sizes and tile sizes", "[pipe][sizes]") {
  // datacopy [1, 2x4] ublock [1, 2], buf_size_mb 2, input_buf_min_size_tiles
  // [10]: input max(2 x 2, 10) = 10; output 2 x 8 = 16; Bfp8_b tiles 1120 bytes.
  auto b = build(netlistText(
      "  in0: {type: queue, input: HOST, entries: 2, grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 2], df: Bfp8_b, target_device: 0, loc: dram, dram: [[0, 0x10000000]]}\n"
      "  out0: {type: queue, input: d0, entries: 2, grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 2], df: Bfp8_b, target_device: 0, loc: dram, dram: [[1, 0x10000000]]}\n",
      "    d0: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], in_df: [Bfp8_b], acc_df: Float16_b, out_df: Bfp8_b, "
      "intermed_df: Bfp8_b, math_fidelity: HiFi4, buf_size_mb: 2, input_buf_min_size_tiles: [10], t: 1, mblock: [2, 2], ublock: [1, 2]}\n",
      3));
  REQUIRE(b->ok);
  const PipegenYaml& y = b->comp.epochs.at(0).yaml;
  const Buffer& in = bufferOf(y, "Op d0: [r=0, c=0], kernel input buf 0, from in0");
  CHECK(in.sizeTiles == 10);
  CHECK(in.tileSize == 1120);
  CHECK(in.tilesPerInput == 8);
  CHECK(in.epochTiles == 24);
  CHECK(in.tileClearGranularity == 2);
  const Buffer& out = bufferOf(y, "Op d0: [r=0, c=0], kernel output buf");
  CHECK(out.sizeTiles == 16);
  CHECK(out.scatterGatherNumTiles == 8); // gcd(8 tiles per input, 16)
  CHECK_FALSE(out.isScatter);
  CHECK(out.dataFormat == std::optional<std::string>("Bfp8_b"));
  // L1 limit of grayskull: 1 MiB - 0x20000.
  CHECK(b->comp.limits.l1DataBytes == 1024 * 1024 - 0x20000);
  CHECK(b->comp.limits.mcastStreamsPerCore == 4); // BUDA counts 4 on every arch
}

TEST_CASE("temporal epochs follow the first execution of each graph", "[pipe][epochs]") {
  SourceBuffer source("epochs.yaml",
                      "devices:\n  arch: grayskull\nqueues:\n" +
                          queue("a", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 0) +
                          queue("b", "x", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 1) +
                          queue("c", "y", "grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1]", 2) +
                          "graphs:\n"
                          "  gx:\n    target_device: 0\n    input_count: 1\n"
                          "    x: {type: exp, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a], " + kDf +
                          ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n"
                          "  gy:\n    target_device: 0\n    input_count: 1\n"
                          "    y: {type: exp, grid_loc: [0, 0], grid_size: [1, 1], inputs: [b], " + kDf +
                          ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n"
                          "  gz:\n    target_device: 0\n    input_count: 1\n"
                          "    z: {type: exp, grid_loc: [0, 0], grid_size: [1, 1], inputs: [c], " + kDf +
                          ", t: 1, mblock: [1, 1], ublock: [1, 1]}\n"
                          "programs:\n"
                          "  - p0:\n    - execute: {graph_name: gy}\n    - execute: {graph_name: gx}\n"
                          "    - execute: {graph_name: gy, queue_settings: {b: {prologue: true, epilogue: false, zero: false, rd_ptr_global: 0}}}\n"
                          "  - p1:\n    - execute: {graph_name: gx}\n    - execute: {graph_name: gy, queue_settings: {b: {prologue: false}, a: {prologue: true}}}\n");
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  REQUIRE(nl);
  const auto epochs = deriveEpochs(*nl, Arch::Grayskull);
  // gy (no settings), gx, gy (b prologue), then gz never executed. The last
  // gy has prologue false for b and a setting for a, which gy does not
  // touch: the same as the first.
  REQUIRE(epochs.size() == 4);
  CHECK(epochs[0].firstGraph().name == "gy");
  CHECK(epochs[0].executions.size() == 2);
  CHECK(epochs[0].executions[1].program == "p1");
  CHECK(epochs[1].firstGraph().name == "gx");
  CHECK(epochs[1].executions.size() == 2);
  CHECK(epochs[2].firstGraph().name == "gy");
  CHECK(epochs[2].settingsOf("b").prologue);
  CHECK_FALSE(epochs[0].settingsOf("b").prologue);
  CHECK(epochs[3].firstGraph().name == "gz");
  CHECK(epochs[3].executions.empty());
  for (uint32_t i = 0; i < epochs.size(); ++i) CHECK(epochs[i].id == i);
}

TEST_CASE("time-multiplexed multicasts: only independent consumers, only as many as needed", "[pipe][mcast]") {
  // src [1, 1x2] on one core; n ops on [1, 2] grids at rows 1..n read it
  // broadcast c 2 ([1, 1x4]): core c reads columns 2c, 2c + 1 = src tiles
  // 0, 1 on both cores: n multicasts of the same list from src's core
  // (limit 4).
  auto text = [](int n, bool chain) {
    std::string queues = queue("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1]", 0);
    std::string ops = "    src: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], " + kDf +
                      ", t: 1, mblock: [1, 2], ublock: [1, 1]}\n";
    for (int k = 0; k < n; ++k) {
      const std::string name = "b" + std::to_string(k);
      // chain: b_k (k > 0) adds b_{k-1}'s output, so b_k waits for b_{k-1}.
      const bool reads = chain && k > 0;
      if (!chain || k == n - 1) // in a chain only the last op writes a queue
        queues += queue("o" + std::to_string(k), name, "grid_size: [1, 1], t: 1, mblock: [1, 4], ublock: [1, 1]", 1 + k % 7);
      ops += "    " + name + ": {type: " + (reads ? "add" : "datacopy") + ", grid_loc: [" + std::to_string(1 + k) +
             ", 0], grid_size: [1, 2], inputs: [src" + (reads ? ", b" + std::to_string(k - 1) : "") + "], " +
             (reads ? "in_df: [Float16_b, Float16_b], acc_df: Float16_b, out_df: Float16_b, intermed_df: Float16_b, math_fidelity: HiFi4"
                    : kDf) +
             ", t: 1, mblock: [1, 2], ublock: [1, 1], input_0_tms: [broadcast: {c: 2}]}\n";
    }
    return netlistText(queues, ops);
  };
  // 7 independent multicasts: 3 too many, so one pipe of 4 slots (b0..b3)
  // and 3 plain multicasts (b4..b6): 4 multicast streams.
  auto b = build(text(7, false));
  REQUIRE(b->ok);
  const PipegenYaml& y = b->comp.epochs.at(0).yaml;
  auto nested = pipesOf(y, "Op: b0, input 0");
  REQUIRE(nested.size() == 1);
  REQUIRE(nested[0]->outputList.size() == 4);
  CHECK(nested[0]->pipePeriodicRepeat == 4);
  for (int k = 0; k < 4; ++k)
    CHECK(nested[0]->outputList[k] ==
          std::vector<BufferId>{
              bufferOf(y, "Op b" + std::to_string(k) + ": [r=" + std::to_string(1 + k) + ", c=0], kernel input buf 0, from src").uniqid,
              bufferOf(y, "Op b" + std::to_string(k) + ": [r=" + std::to_string(1 + k) + ", c=1], kernel input buf 0, from src").uniqid});
  CHECK(nested[0]->mcastCoreRc == std::vector<std::vector<uint32_t>>{{0, 1, 0}, {0, 2, 0}, {0, 3, 0}, {0, 4, 0}});
  CHECK(pipesOf(y, "Op: b1, input 0").empty());
  for (int k = 4; k < 7; ++k) {
    auto plain = pipesOf(y, "Op: b" + std::to_string(k) + ", input 0");
    REQUIRE(plain.size() == 1);
    CHECK(plain[0]->outputList.size() == 1);
    CHECK(plain[0]->pipePeriodicRepeat == 0);
  }
  // 5 multicasts to a chain b0 -> b1 -> ... -> b4: every pair depends, none
  // may share a stream; the first (b0's, all have 2 destinations) is sent
  // as two unicasts instead (mcast_split.cpp): 4 multicasts, no slots.
  auto c = build(text(5, true));
  REQUIRE(c->ok);
  const PipegenYaml& cy = c->comp.epochs.at(0).yaml;
  auto uni = pipesOf(cy, "Op: b0, input 0");
  REQUIRE(uni.size() == 2);
  for (int k = 0; k < 2; ++k) {
    REQUIRE(uni[k]->outputList.size() == 1);
    CHECK(uni[k]->outputList[0] ==
          std::vector<BufferId>{bufferOf(cy, "Op b0: [r=1, c=" + std::to_string(k) + "], kernel input buf 0, from src").uniqid});
  }
  for (int k = 1; k < 5; ++k) {
    auto plain = pipesOf(cy, "Op: b" + std::to_string(k) + ", input 0");
    REQUIRE(plain.size() == 1);
    REQUIRE(plain[0]->outputList.size() == 1);
    CHECK(plain[0]->outputList[0].size() == 2);
  }
}

TEST_CASE("BUDA's pipegen2 conventions: intermediates, blocking per core, prolog cores", "[pipe][buda]") {
  // matmul [1, 2] at grid_loc [2, 3], ublock [2, 2], mblock [1, 1], m_k 2:
  // partial sums (operand 24) of one mblock = 4 tiles carry epoch_tiles 4
  // and m_k 2 like the packer. w (a ram read as a prologue, grid [1, 2])
  // cell c is read by core column c alone: its prolog buffer names core
  // [2, 3 + c]. a (streamed, only read) has no blocking; out (written by
  // mm) has mm's ublock/mblock and m_k.
  const std::string text =
      "devices:\n  arch: grayskull\nqueues:\n"
      "  a:   {type: queue, input: HOST, entries: 2, grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [2, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[0, 0x10000000]]}\n"
      "  w:   {type: ram, input: HOST, entries: 1, grid_size: [1, 2], t: 1, mblock: [2, 1], ublock: [2, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[1, 0x10000000], [2, 0x10000000]]}\n"
      "  out: {type: queue, input: mm, entries: 2, grid_size: [1, 2], t: 1, mblock: [1, 1], ublock: [2, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[3, 0x10000000], [4, 0x10000000]]}\n"
      "graphs:\n  g:\n    target_device: 0\n    input_count: 1\n"
      "    mm: {type: matmul, grid_loc: [2, 3], grid_size: [1, 2], inputs: [a, w], in_df: [Float16_b, Float16_b], acc_df: Float16_b, "
      "out_df: Float16_b, intermed_df: Float16_b, ublock_order: r, buf_size_mb: 2, math_fidelity: HiFi4, t: 1, mblock: [1, 1], "
      "ublock: [2, 2], attributes: {m_k: 2, u_kt: 2}}\n"
      "programs:\n  - run:\n    - var: {$p: 0}\n"
      "    - execute: {graph_name: g, queue_settings: {a: {prologue: false, epilogue: false, zero: false, rd_ptr_local: $p, "
      "rd_ptr_global: $p}, w: {prologue: true, epilogue: false, zero: false, rd_ptr_global: $p, wr_ptr_global: $p}}}\n"
      "    - endprogram\n";
  auto b = build(text);
  REQUIRE(b->ok);
  const PipegenYaml& y = b->comp.epochs.at(0).yaml;
  const Buffer& sums = bufferOf(y, "Op mm: [r=2, c=4], kernel intermediate buf 0 (partial sums)");
  CHECK(sums.epochTiles == 4);
  CHECK(sums.scatterGatherNumTiles == 4);
  CHECK(sums.mblockK == 2);
  CHECK(bufferOf(y, "Op mm: [r=2, c=4], kernel output buf").mblockK == 2);
  for (int c = 0; c < 2; ++c) {
    const Buffer& w = bufferOf(y, "Queue w: r = 0, c = " + std::to_string(c) + ", prolog for op: mm");
    CHECK(w.bufferType == BufferType::DramProlog);
    CHECK(w.core.r == 2);
    CHECK(w.core.c == static_cast<uint32_t>(3 + c));
    CHECK(w.ublockRt == 0);
    CHECK(w.mblockK == 0);
    const Buffer& o = bufferOf(y, "Queue out: r = 0, c = " + std::to_string(c));
    CHECK(o.core.r == 255); // streamed queue buffers stay off the grid
    CHECK(o.ublockRt == 2);
    CHECK(o.ublockCt == 2);
    CHECK(o.mblockM == 1);
    CHECK(o.mblockN == 1);
    CHECK(o.mblockK == 2);
  }
  const Buffer& a = bufferOf(y, "Queue a: r = 0, c = 0");
  CHECK(a.core.r == 255);
  CHECK(a.ublockRt == 0);
  CHECK(a.mblockN == 0);
}
