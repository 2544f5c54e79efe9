// Sparse matmul (matmul with identity: true) on the simulated core against
// lib/golden: the kernel net2hlks generates, compiled by hlkc, run on core
// (0, 0) of the op with inputs from lib/host's sparse stimulus (sparse tiles
// with one 1 per row, or random values; random valid strip encodings whose
// exact 32-bit words are fed to the kernel and to the reference), random
// activations. The shared runner (simgolden.cpp) draws random floats for
// every input, which is no valid encoding, so this file feeds the core itself.
#include "simgolden.hpp"

#include "formats/formats.hpp"
#include "golden/ops.hpp"
#include "golden/special_ops.hpp"
#include "golden/tm.hpp"
#include "hlk/config.hpp"
#include "host/sparse_stimulus.hpp"
#include "netlist/parser.hpp"
#include "netlist/shape.hpp"
#include "netlist/target.hpp"
#include "netlist/validator.hpp"
#include "sim/coprocessor.hpp"
#include "sim/coprocessor_port_adapter.hpp"
#include "sim/one_core_harness.hpp"
#include "sim/tensix_core.hpp"
#include "support/diagnostics.hpp"
#include "support/file_io.hpp"
#include "support/source.hpp"

#include <catch2/catch.hpp>

#include <optional>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#ifndef TESSERA_SIMGOLDEN_CORPUS
#define TESSERA_SIMGOLDEN_CORPUS ""
#endif

using namespace simgolden;
using namespace tessera;
namespace fs = std::filesystem;
using netlist::DataFormat;

namespace {

constexpr int64_t kTile = 32;

struct SparseCase {
  std::string label;
  std::string netlist;   // YAML
  std::string op;        // the sparse matmul
  Expect expect = Expect::Close;
  host::EncodingFrequencies freq{0.2, 0.3, 0.3, 4096};  // fewer zeros than the stimulus default: more products
  bool randomSparse = false;  // random values in the sparse tiles instead of one 1 per row
  int entries = 2;
  uint32_t seed = 1;
};

// A one-op netlist: queues sparse (input 0), act (input 1), enc (input 2).
struct Shape {
  std::string arch = "wormhole_b0";
  std::string sparseBlock, actBlock, encBlock;  // "t: 1, mblock: [..], ublock: [..]" of each queue (grid [1, 1])
  std::string actTms;                           // e.g. "[transpose]"
  std::string inDf0 = "Float16_b", inDf1 = "Float16_b", outDf = "Float16_b", accDf = "Float16_b";
  std::string fidelity = "HiFi4";
  std::string grid = "[1, 1]";
  std::string block;                            // the op's t, mblock, ublock
  std::string order = "r";
  std::string attrs;
};

std::string netlistOf(const Shape& s) {
  std::ostringstream y;
  y << "devices:\n  arch: " << s.arch << "\nqueues:\n"
    << "  sparse: {type: queue, input: HOST, entries: 2, grid_size: [1, 1], " << s.sparseBlock << ", df: " << s.inDf0
    << ", target_device: 0, loc: dram, dram: [[0, 0x10000000]]}\n"
    << "  act: {type: queue, input: HOST, entries: 2, grid_size: [1, 1], " << s.actBlock << ", df: " << s.inDf1
    << ", target_device: 0, loc: dram, dram: [[0, 0x11000000]]}\n"
    << "  enc: {type: queue, input: HOST, entries: 2, grid_size: [1, 1], " << s.encBlock
    << ", df: RawUInt32, target_device: 0, loc: dram, dram: [[0, 0x12000000]]}\n"
    << "  out: {type: queue, input: sp, entries: 2, grid_size: " << s.grid << ", " << s.block << ", df: " << s.outDf
    << ", target_device: 0, loc: dram, dram: [[0, 0x13000000]";
  // one DRAM buffer per core of the output grid
  int cores = 1;
  {
    int r = 1, c = 1;
    std::sscanf(s.grid.c_str(), "[%d, %d]", &r, &c);
    cores = r * c;
  }
  for (int i = 1; i < cores; ++i) y << ", [0, 0x" << std::hex << (0x13000000 + i * 0x00100000) << std::dec << "]";
  y << "]}\n";
  y << "graphs:\n  g:\n    target_device: 0\n    input_count: 2\n"
    << "    sp: {type: matmul, grid_loc: [0, 0], grid_size: " << s.grid << ", inputs: [sparse, act, enc], ";
  if (!s.actTms.empty()) y << "input_1_tms: " << s.actTms << ", ";
  y << "in_df: [" << s.inDf0 << ", " << s.inDf1 << ", RawUInt32], out_df: " << s.outDf << ", intermed_df: " << s.outDf
    << ", acc_df: " << s.accDf << ", math_fidelity: " << s.fidelity << ", " << s.block << ", ublock_order: " << s.order
    << ", attributes: {identity: true, " << s.attrs << "}}\n";
  y << "programs:\n  - run:\n    - execute: {graph_name: g}\n";
  return y.str();
}

using TileValues = std::array<float, formats::kTileValues>;

std::vector<std::pair<int64_t, int64_t>> streamOrder(const hlk::Layout& l) {
  std::vector<std::pair<int64_t, int64_t>> order(static_cast<size_t>(l.blockTiles()));
  for (int64_t r = 0; r < l.rowTiles(); ++r)
    for (int64_t c = 0; c < l.colTiles(); ++c) order[static_cast<size_t>(l.index(r, c))] = {r, c};
  return order;
}

// Stacks per-entry tensors [1][t][r][c] (and their raw words) into [w][t][r][c].
Tensor stack(const std::vector<Tensor>& parts) {
  Tensor out(static_cast<int64_t>(parts.size()), parts[0].z, parts[0].r, parts[0].c);
  const bool raw = !parts[0].rawBits.empty();
  if (raw) out.rawBits.assign(out.data.size(), 0);
  size_t at = 0;
  for (const Tensor& p : parts) {
    std::copy(p.data.begin(), p.data.end(), out.data.begin() + static_cast<std::ptrdiff_t>(at));
    if (raw) std::copy(p.rawBits.begin(), p.rawBits.end(), out.rawBits.begin() + static_cast<std::ptrdiff_t>(at));
    at += p.data.size();
  }
  return out;
}

struct Result {
  bool pass = false;
  std::string report;
  int64_t values = 0, bitDiffs = 0;
  uint64_t matmulTiles = 0, cycles = 0;
};

// Compiles (through simgolden's Session: hlkc and its cache) and runs one case.
Result runCase(const SparseCase& sc) {
  Result res;
  Session session;
  Request req;
  req.label = sc.label;
  req.netlistText = sc.netlist;
  req.sourceName = "sparse.yaml";
  req.op = sc.op;
  const size_t idx = session.add(req);
  session.compile();
  const std::string dir = session.kernelDir(idx);
  for (const char* elf : {"unpack.elf", "math.elf", "pack.elf"})
    if (dir.empty() || !fs::exists(fs::path(dir) / elf)) {
      res.report = "no kernel: " + session.run(idx).report; // the runner reports why
      return res;
    }

  // The netlist and the kernel's operand contract, as the session built them.
  SourceBuffer src("sparse.yaml", sc.netlist);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(src, diags);
  DeviceCache devices;
  std::optional<netlist::Arch> want;
  for (const auto& a : nl->devices.arch)
    if (a.value == netlist::Arch::WormholeB0) want = a.value;
  if (!want) want = nl->devices.arch.front().value;
  auto target = netlist::chooseTarget(*nl, want, devices, diags);
  REQUIRE(target);
  const netlist::Op* op = host::findOp(*nl, sc.op);
  REQUIRE(op != nullptr);
  DiagnosticEngine gen;
  auto k = hlk::configureOp(*nl, *op, *target, gen);
  REQUIRE(k);

  // Inputs: per entry, sparse tiles and encoding from the sparse stimulus.
  std::mt19937_64 g(sc.seed * 0x9E3779B97F4A7C15ull + std::hash<std::string>{}(sc.label));
  const host::SparseOpShape shape = host::sparseOpShape(*nl, *op);
  auto queueShapeOf = [&](size_t i) -> netlist::TensorShape {
    std::optional<netlist::TensorShape> s;
    for (const auto& q : nl->queues)
      if (q.name == op->inputs[i].name) s = netlist::queueShape(q);
    for (const auto& gr : nl->graphs)
      for (const auto& o : gr.ops)
        if (!s && o.name == op->inputs[i].name) s = netlist::opOutputShape(o);
    if (!s) FAIL("no shape for input " << i);
    return *s;
  };
  const auto s0 = queueShapeOf(0), s1 = queueShapeOf(1), s2 = queueShapeOf(2);
  std::vector<Tensor> sparseParts, actParts, encParts;
  const DataFormat df0 = op->inDf[0].value, df1 = op->inDf[1].value;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int e = 0; e < sc.entries; ++e) {
    Tensor sp = host::generateSparseTiles(shape, s0.t, s0.r * kTile, s0.c * kTile, g);
    if (sc.randomSparse)
      for (float& v : sp.data) v = dist(g);
    formats::quantize(df0, sp);
    sparseParts.push_back(std::move(sp));
    Tensor act(1, s1.t, s1.r * kTile, s1.c * kTile);
    for (float& v : act.data) v = dist(g);
    formats::quantize(df1, act);
    actParts.push_back(std::move(act));
    encParts.push_back(host::generateSparseEncoding(shape, sc.freq, true, s2.t, s2.r * kTile, s2.c * kTile, g));
  }
  // What the op sees (TMs applied: e.g. the corpus's c broadcasts of inputs
  // 0 and 2, which keep the encoding's raw words), and what the pipe
  // delivers (the kernel transposes each tile of input 1 itself).
  const Tensor sparse = golden::applyTms(stack(sparseParts), op->inputs[0].tms);
  const Tensor act = golden::applyTms(stack(actParts), op->inputs[1].tms);
  const Tensor enc = golden::applyTms(stack(encParts), op->inputs[2].tms);
  REQUIRE(enc.rawBits.size() == enc.data.size());
  int transposes = 0;
  for (const auto& tm : op->inputs[1].tms) transposes += tm.kind == netlist::TmKind::Transpose ? 1 : 0;

  // Operand bytes in the kernel's tile orders: core (0, 0) gets the first
  // rows of inputs 0 and 2 and the first columns of input 1.
  std::map<int, std::vector<uint8_t>> fed;
  for (const auto& oi : k->operands) {
    if (oi.role != hlk::OperandRole::Input) continue;
    const Tensor& src = oi.index == 0 ? sparse : oi.index == 1 ? act : enc;
    const hlk::Layout& l = *oi.layout;
    REQUIRE(l.t == src.z);
    const auto order = streamOrder(l);
    const size_t tileBytes = netlist::tileSizeBytes(oi.df);
    std::vector<uint8_t>& bytes = fed[oi.operand];
    for (int64_t w = 0; w < sc.entries; ++w)
      for (int64_t z = 0; z < l.t; ++z)
        for (const auto& [rt, ct] : order) {
          TileValues v{};
          for (int64_t r = 0; r < kTile; ++r)
            for (int64_t c = 0; c < kTile; ++c) {
              const float x = src.at(w, z, rt * kTile + r, ct * kTile + c);
              const bool tr = oi.index == 1 && transposes % 2 == 1;
              v[static_cast<size_t>(tr ? c * kTile + r : r * kTile + c)] = x;
            }
          const size_t at = bytes.size();
          bytes.resize(at + tileBytes);
          formats::packTile(oi.df, v, std::span<uint8_t>(bytes.data() + at, tileBytes));
          if (oi.index == 2) // the exact words, row-major after the 16-byte header
            for (int64_t r = 0; r < kTile; ++r)
              for (int64_t c = 0; c < kTile; ++c) {
                const uint32_t word = src.rawBits[src.index(w, z, rt * kTile + r, ct * kTile + c)];
                std::memcpy(bytes.data() + at + formats::kTileHeaderBytes + static_cast<size_t>(r * kTile + c) * 4, &word, 4);
              }
        }
  }

  std::vector<sim::HarnessOperand> operands;
  const hlk::OperandInfo* outInfo = nullptr;
  for (const auto& oi : k->operands) {
    sim::HarnessOperand h;
    h.id = static_cast<uint32_t>(oi.operand);
    h.format = static_cast<contract::DataFormatCode>(oi.df);
    h.capacityTiles = static_cast<uint32_t>(std::max<int64_t>(oi.minTiles, 1));
    if (oi.role == hlk::OperandRole::Input) h.inputTiles = std::move(fed[oi.operand]);
    if (oi.role == hlk::OperandRole::Output) {
      outInfo = &oi;
      h.expectTiles = static_cast<uint32_t>(sc.entries * oi.layout->t * oi.layout->blockTiles());
    }
    operands.push_back(std::move(h));
  }
  REQUIRE(outInfo);
  sim::CoreConfig cc;
  cc.arch = target->arch;
  cc.name = sc.label;
  sim::TensixCore core(cc);
  sim::Coprocessor cop(core.l1());
  sim::CoprocessorPortAdapter port(cop);
  core.setCoprocessor(&port);
  static const char* const kElf[] = {"unpack.elf", "math.elf", "pack.elf"};
  for (uint32_t t = 0; t < contract::kThreadCount; ++t) {
    std::string why;
    REQUIRE(core.loadElfFile(static_cast<contract::Thread>(t), (fs::path(dir) / kElf[t]).string(), why));
  }
  sim::OneCoreHarness harness(core);
  contract::EpochInfo epoch{};
  epoch.inputCount = static_cast<uint32_t>(sc.entries);
  std::string why;
  if (!harness.setup(operands, epoch, why)) {
    res.report = "operand setup: " + why;
    return res;
  }
  sim::CoreRunResult run = harness.run(sim::RunOptions{});
  res.cycles = run.cycles;
  res.matmulTiles = cop.counters().matmulTiles;
  if (!run.ok() || !harness.errors().empty()) {
    res.report = "the run failed: " + run.message;
    for (const auto& e : harness.errors()) res.report += "\n" + e;
    return res;
  }

  // The output of core (0, 0), in the op's layout.
  const hlk::Layout& ol = *outInfo->layout;
  const std::vector<uint8_t>& raw = harness.output(16);
  const auto order = streamOrder(ol);
  const size_t tileBytes = netlist::tileSizeBytes(outInfo->df);
  Tensor actual(sc.entries, ol.t, ol.rowTiles() * kTile, ol.colTiles() * kTile);
  REQUIRE(raw.size() == static_cast<size_t>(sc.entries * ol.t) * order.size() * tileBytes);
  for (size_t n = 0; n < raw.size() / tileBytes; ++n) {
    const int64_t w = static_cast<int64_t>(n / (order.size() * static_cast<size_t>(ol.t)));
    const int64_t z = static_cast<int64_t>((n / order.size()) % static_cast<size_t>(ol.t));
    const auto [rt, ct] = order[n % order.size()];
    TileValues v;
    formats::unpackTile(outInfo->df, std::span<const uint8_t>(raw.data() + n * tileBytes, tileBytes), v);
    for (int64_t r = 0; r < kTile; ++r)
      for (int64_t c = 0; c < kTile; ++c) actual.at(w, z, rt * kTile + r, ct * kTile + c) = v[static_cast<size_t>(r * kTile + c)];
  }

  // The reference on the whole op, windowed to core (0, 0).
  golden::OpSpec spec;
  spec.name = op->name;
  spec.type = op->type.value;
  spec.attrs = &op->attributes;
  spec.t = op->t.value;
  spec.grid = op->gridSize.value;
  spec.mblock = op->mblock.value;
  spec.ublock = op->ublock.value;
  spec.ublockOrder = op->order();
  for (const auto& df : op->inDf) spec.inDf.push_back(df.value);
  spec.outDf = op->outDf.value;
  spec.accDf = op->accDf.value;
  spec.intermedDf = op->intermedDf.value;
  spec.fidelity = op->mathFidelity.value;
  spec.arch = target->arch;
  const std::vector<Tensor> inputs{sparse, act, enc};
  Tensor expected = golden::evalSparseMatmulCodes(spec, inputs, enc.rawBits);
  Tensor window(actual.w, actual.z, actual.r, actual.c);
  for (int64_t w = 0; w < actual.w; ++w)
    for (int64_t z = 0; z < actual.z; ++z)
      for (int64_t r = 0; r < actual.r; ++r)
        for (int64_t c = 0; c < actual.c; ++c) window.at(w, z, r, c) = expected.at(w, z, r, c);

  std::ostringstream diffs;
  for (size_t n = 0; n < window.data.size(); ++n) {
    const float e = window.data[n], a = actual.data[n];
    const bool same = (std::isnan(e) && std::isnan(a)) || std::bit_cast<uint32_t>(e) == std::bit_cast<uint32_t>(a);
    if (!same && ++res.bitDiffs <= 6) diffs << "  value " << n << ": expected " << e << " got " << a << "\n";
  }
  res.values = static_cast<int64_t>(window.data.size());
  compare::Config cfg = corpusTolerance();
  if (sc.expect == Expect::Exact) cfg.method = compare::Method::Exact;
  const compare::Result cmp = compare::compareTensors(window, actual, cfg);
  res.pass = sc.expect == Expect::Exact ? res.bitDiffs == 0 : cmp.pass;
  std::ostringstream rep;
  rep << sc.label << ": " << (res.pass ? "PASS" : "FAIL") << ", " << (res.values - res.bitDiffs) << " of " << res.values
      << " values bit-identical, pcc " << cmp.pcc << ", " << res.matmulTiles << " MATMULs, " << res.cycles
      << " cycles\n"
      << diffs.str() << "kernel: " << dir << "\n";
  res.report = rep.str();
  return res;
}

void check(const SparseCase& c) {
  const Result r = runCase(c);
  if (verbose()) std::cout << r.report;
  INFO(r.report);
  CHECK(r.pass);
  // Not vacuous: the encodings drawn name tiles, so the kernel multiplied.
  if (r.pass) CHECK(r.matmulTiles > 0);
}

// An op with output t `t`, mblock [m, n] x ublock [ur, uc], u_kt, strips of
// activations per t `strips` (m_k), sparse tiles, encoding tiles.
Shape shapeOf(int t, int m, int n, int ur, int uc, int uKt, int strips, int sparseTiles, int indexTiles, int ptrBits,
              int ublockBits, bool actPerT) {
  Shape s;
  char buf[512];
  std::snprintf(buf, sizeof buf, "t: 1, mblock: [1, %d], ublock: [1, 1]", sparseTiles);
  s.sparseBlock = buf;
  const int actT = actPerT ? t : 1;
  std::snprintf(buf, sizeof buf, "t: %d, mblock: [%d, %d], ublock: [%d, %d]", actT, strips, n, uKt, uc);
  s.actBlock = buf;
  std::snprintf(buf, sizeof buf, "t: 1, mblock: [1, %d], ublock: [1, 1]", indexTiles);
  s.encBlock = buf;
  std::snprintf(buf, sizeof buf, "t: %d, mblock: [%d, %d], ublock: [%d, %d]", t, m, n, ur, uc);
  s.block = buf;
  std::snprintf(buf, sizeof buf,
                "m_k: %d, u_kt: %d, num_sparse_tiles: %d, num_index_tiles: %d, sparse_tile_ptr_bits: %d, "
                "sparse_ublock_idx_bits: %d, act_t: %d",
                strips, uKt, sparseTiles, indexTiles, ptrBits, ublockBits, actT);
  s.attrs = buf;
  return s;
}

SparseCase caseOf(const std::string& label, const Shape& s, Expect e, uint32_t seed = 1) {
  SparseCase c;
  c.label = label;
  c.netlist = netlistOf(s);
  c.op = "sp";
  c.expect = e;
  c.seed = seed;
  return c;
}

std::string corpusFile(const std::string& rel) {
  const fs::path p = fs::path(TESSERA_SIMGOLDEN_CORPUS) / "netlists" / rel;
  auto text = readFile(p.string());
  return text ? *text : std::string();
}

} // namespace

// u_kt 1 with one 1 per sparse-tile row: every output tile is at most one
// product per t... not quite: several strips may add to it. One strip per
// t (m_k 1) makes each output tile a single MATMUL into a zeroed dest, which
// the device model calls bit-exact (Float16_b data, any fidelity).
TEST_CASE("sim vs golden: sparse matmul, one strip per t (bit-exact)", "[simgolden][sparse]") {
  for (const char* fid : {"HiFi4", "LoFi"}) {
    Shape s = shapeOf(2, 2, 2, 2, 1, 1, 1, 4, 1, 5, 3, true);
    s.fidelity = fid;
    check(caseOf(std::string("sparse m_k 1 u_kt 1 ") + fid, s, Expect::Exact));
  }
  // Random sparse values (not 0/1): still one product per output tile, its
  // dot products no longer exact in float32; the reference sums them in the
  // device's order (gemmTilesRounded): bit-exact too.
  Shape s = shapeOf(1, 3, 1, 1, 2, 1, 1, 6, 1, 4, 4, true);
  SparseCase c = caseOf("sparse random values m_k 1", s, Expect::Exact);
  c.randomSparse = true;
  check(c);
}

TEST_CASE("sim vs golden: sparse matmul shapes, bits, m_k and u_kt", "[simgolden][sparse]") {
  // Several strips per t (partial sums spilled in the dest format), u_kt > 1
  // (several products per output tile): dest rounds after each, and the
  // reference does too since 2026-11-28: bit-exact with a 16-bit dest. A
  // Float32 dest is summed in Eigen's order: within the corpus tolerance.
  check(caseOf("sparse t 2 m_k 3 u_kt 2 ublock [2,2] order c",
               [] {
                 Shape s = shapeOf(2, 2, 1, 2, 2, 2, 3, 5, 2, 5, 3, true);
                 s.order = "c";
                 return s;
               }(),
               Expect::Exact));
  check(caseOf("sparse act_t 1 t 3 m_k 4 u_kt 3 mblock [3,2]", shapeOf(3, 3, 2, 1, 1, 3, 4, 7, 2, 6, 2, false),
               Expect::Exact, 2));
  check(caseOf("sparse ptr bits 8 u_kt 4 ublock [4,1]", shapeOf(1, 2, 1, 4, 1, 4, 2, 9, 1, 8, 8, true), Expect::Exact, 3));
  {
    Shape s = shapeOf(2, 4, 1, 1, 2, 2, 3, 5, 2, 3, 3, true);
    s.inDf0 = "Bfp8_b";
    s.inDf1 = "Bfp8_b";
    s.outDf = "Bfp8_b";
    s.fidelity = "HiFi2";
    check(caseOf("sparse Bfp8_b HiFi2", s, Expect::Exact, 4));
  }
  {
    Shape s = shapeOf(1, 2, 2, 2, 1, 2, 2, 4, 1, 4, 4, true);
    s.inDf1 = "Float32";
    s.outDf = "Float32";
    s.accDf = "Float32";
    check(caseOf("sparse Float32 dest", s, Expect::Close, 5));
  }
  {
    // Transposed activations (the unpacker transposes each tile).
    Shape s = shapeOf(1, 2, 1, 1, 1, 2, 2, 3, 1, 4, 4, true);
    s.actBlock = "t: 1, mblock: [1, 2], ublock: [1, 2]";  // 1x4 tiles, 4x1 after the transpose
    s.actTms = "[transpose]";
    check(caseOf("sparse transposed activations", s, Expect::Exact, 6));
  }
  {
    // Two cores: core (0, 0) reads its own share of inputs 0 and 2.
    Shape s = shapeOf(1, 2, 1, 1, 1, 1, 3, 4, 1, 4, 4, true);
    s.grid = "[2, 1]";
    s.sparseBlock = "t: 1, mblock: [2, 4], ublock: [1, 1]";
    s.encBlock = "t: 1, mblock: [2, 1], ublock: [1, 1]";
    check(caseOf("sparse 2x1 grid, core (0, 0)", s, Expect::Exact, 7));
  }
}

// The first identity matmul of a corpus netlist as a one-entry case the
// simulator must match within tolerance; nullopt (with a warning) when the
// corpus is not beside the checkout.
std::optional<SparseCase> corpusSparseCase(const std::string& file) {
  const std::string text = corpusFile(file);
  if (text.empty()) {
    WARN("corpus netlist " << file << " not found: skipped");
    return std::nullopt;
  }
  SourceBuffer src(file, text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(src, diags);
  REQUIRE(nl);
  SparseCase c;
  for (const auto& g : nl->graphs)
    for (const auto& o : g.ops)
      if (c.op.empty() && o.type.value == "matmul" && o.attributes.identity.value) c.op = o.name;
  REQUIRE(!c.op.empty());
  c.netlist = text;
  c.entries = 1;
  c.expect = Expect::Close;
  return c;
}

// The sparse ops of corpus models, core (0, 0) of the first such op.
TEST_CASE("sim vs golden: sparse matmul of corpus models", "[simgolden][sparse][corpus]") {
  struct Model {
    const char* file;
    const char* label;
  };
  for (const Model m : {Model{"perf_lib/graph_tests/grayskull/inference/resnet50_lofi_bfp8b_may18.yaml", "resnet50"},
                        Model{"perf_lib/graph_tests/blackhole/yolo_v5_hifi3_fp16b.yaml", "yolo_v5"}}) {
    std::optional<SparseCase> found = corpusSparseCase(m.file);
    if (!found) continue;
    SparseCase& c = *found;
    c.label = std::string(m.label) + " " + c.op;
    // Their ublocks hold up to ublock rows x u_kt (resnet50: 784) tiles in
    // one 4 KiB encoding tile: mostly zero ublocks and tiles, as in a
    // convolution, else the adaptive stimulus ends with empty strips.
    c.freq = {0.0, 0.8, 0.98, 4096};
    check(c);
  }
}

// The sparse matmul op tests of the corpus (verif/op_tests), core (0, 0),
// with their own zero frequencies. They broadcast inputs 0 and 2 over the
// grid columns, use 8 tile pointer bits (so most encoding words are above
// 2^24: the raw words must reach the core exactly) and several strips per t.
TEST_CASE("sim vs golden: sparse matmul op tests of the corpus", "[simgolden][sparse][corpus]") {
  for (const char* file : {"verif/op_tests/netlists/netlist_matmul_ident_op.yaml",
                           "verif/op_tests/netlists/netlist_matmul_ident_op_1564.yaml",
                           "verif/op_tests/netlists/netlist_matmul_ident_op_max_tiles_in_ublock.yaml",
                           "verif/op_tests/netlists/netlist_matmul_ident_kernel_broadcast.yaml"}) {
    std::optional<SparseCase> found = corpusSparseCase(file);
    if (!found) continue;
    SparseCase& c = *found;
    c.label = file;
    c.freq = {0.5, 0.5, 0.5, 4096};
    check(c);
  }
}
