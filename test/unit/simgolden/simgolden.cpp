// The sim-vs-golden runner: see simgolden.hpp.
#include "simgolden.hpp"

#include "device/soc_descriptor.hpp"
#include "formats/formats.hpp"
#include "golden/fused.hpp"
#include "golden/ops.hpp"
#include "golden/tm.hpp"
#include "hlk/config.hpp"
#include "hlk/driver.hpp"
#include "hlkc/hlkc.hpp"
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

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>

#ifndef TESSERA_SIMGOLDEN_WORK
#define TESSERA_SIMGOLDEN_WORK "simgolden-work"
#endif

namespace simgolden {

using namespace tessera;
namespace fs = std::filesystem;
using netlist::DataFormat;

namespace {

constexpr int64_t kTile = 32;

std::string workRoot() {
  if (const char* env = std::getenv("SIMGOLDEN_WORK"); env && *env) return env;
  return TESSERA_SIMGOLDEN_WORK;
}

uint32_t fnv32(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 16777619u;
  }
  return h;
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

// Bytes of one value of an untilized row (non-Bfp formats).
uint32_t elementBytes(DataFormat df) {
  switch (df) {
  case DataFormat::Float32: case DataFormat::Int32: case DataFormat::RawUInt32: return 4;
  case DataFormat::Float16: case DataFormat::Float16_b: case DataFormat::UInt16: case DataFormat::RawUInt16: return 2;
  default: return 1;
  }
}

float decodeUntilized(DataFormat df, const uint8_t* p) {
  switch (df) {
  case DataFormat::Float32: { float f; std::memcpy(&f, p, 4); return f; }
  case DataFormat::Float16: { uint16_t h; std::memcpy(&h, p, 2); return formats::float16ToFloat32(h); }
  case DataFormat::Float16_b: { uint16_t h; std::memcpy(&h, p, 2); return formats::float16bToFloat32(h); }
  default: return std::nanf("");  // not used by the matrix
  }
}

// (row, col) of every stream position of one t of a layout.
std::vector<std::pair<int64_t, int64_t>> streamOrder(const hlk::Layout& l) {
  std::vector<std::pair<int64_t, int64_t>> order(static_cast<size_t>(l.blockTiles()));
  for (int64_t r = 0; r < l.rowTiles(); ++r)
    for (int64_t c = 0; c < l.colTiles(); ++c) order[static_cast<size_t>(l.index(r, c))] = {r, c};
  return order;
}

using TileValues = std::array<float, formats::kTileValues>;

TileValues tileOf(const Tensor& t, int64_t w, int64_t z, int64_t rt, int64_t ct, bool transpose) {
  TileValues v;
  for (int64_t r = 0; r < kTile; ++r)
    for (int64_t c = 0; c < kTile; ++c) {
      float x = t.at(w, z, rt * kTile + r, ct * kTile + c);
      if (transpose) v[static_cast<size_t>(c * kTile + r)] = x;
      else v[static_cast<size_t>(r * kTile + c)] = x;
    }
  return v;
}

Tensor window(const Tensor& in, int64_t rows, int64_t cols) {
  Tensor out(in.w, in.z, rows, cols);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t r = 0; r < rows; ++r)
        std::copy_n(&in.data[in.index(w, z, r, 0)], cols, &out.data[out.index(w, z, r, 0)]);
  return out;
}

bool sameBits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

} // namespace

compare::Config corpusTolerance() {
  compare::Config c;
  c.method = compare::Method::AllCloseHw;
  c.atol = 0.01;
  c.rtol = 0.15;
  c.checkPct = 0.9;
  c.checkPcc = 0.99;
  return c;
}

int verbose() {
  const char* v = std::getenv("SIMGOLDEN_VERBOSE");
  if (!v || !*v || std::string(v) == "0") return 0;
  return std::string(v) == "2" ? 2 : 1;
}

// ---------------------------------------------------------------------------
struct Session::Impl {
  struct Prepared {
    Request req;
    std::string error;  // why it cannot run (netlist, kernel, compile)
    std::unique_ptr<SourceBuffer> source;
    std::optional<netlist::Netlist> nl;
    std::unique_ptr<DeviceCache> devices;
    std::optional<netlist::ValidationTarget> target;
    const netlist::Op* op = nullptr;
    const netlist::Graph* graph = nullptr;
    std::optional<hlk::KernelConfig> config;
    hlk::KernelText text;
    std::string kernelDir;
    std::string hlkcArch;
  };
  std::vector<Prepared> items;
  bool compiled = false;

  void prepare(Prepared& p);
  Outcome run(Prepared& p);
};

Session::Session() : impl_(std::make_unique<Impl>()) {}
Session::~Session() = default;

size_t Session::add(Request request) {
  Impl::Prepared p;
  p.req = std::move(request);
  impl_->items.push_back(std::move(p));
  impl_->compiled = false;
  return impl_->items.size() - 1;
}

const Request& Session::request(size_t i) const { return impl_->items.at(i).req; }
size_t Session::size() const { return impl_->items.size(); }
std::string Session::kernelDir(size_t i) const { return impl_->items.at(i).kernelDir; }

void Session::Impl::prepare(Prepared& p) {
  p.source = std::make_unique<SourceBuffer>(p.req.sourceName, p.req.netlistText);
  DiagnosticEngine diags;
  p.nl = netlist::parseNetlist(*p.source, diags);
  if (p.nl) {
    // wormhole_b0 when listed (32-bit dest, integer formats), else the first arch.
    std::optional<Arch> want;
    if (!p.req.arch.empty()) want = parseArch(p.req.arch);
    else
      for (const auto& a : p.nl->devices.arch)
        if (a.value == Arch::WormholeB0) want = Arch::WormholeB0;
    if (!want && !p.nl->devices.arch.empty() && p.nl->devices.arch.front().value == Arch::Grayskull)
      want = Arch::Grayskull;
    p.devices = std::make_unique<DeviceCache>();
    p.target = netlist::chooseTarget(*p.nl, want, *p.devices, diags);
    if (p.target) netlist::validateNetlist(*p.nl, *p.target, diags);
  }
  std::ostringstream err;
  PrintOptions print;
  print.hideWarnings = true;
  if (printDiagnostics(err, *p.source, diags, print) > 0 || !p.nl || !p.target) {
    p.error = "the netlist is invalid:\n" + err.str();
    return;
  }
  if (p.target->arch != Arch::Grayskull && p.target->arch != Arch::WormholeB0) {
    p.error = "arch " + std::string(archName(p.target->arch)) + ": the simulator models grayskull and wormhole_b0";
    return;
  }
  p.hlkcArch = std::string(archName(p.target->arch));
  for (const auto& g : p.nl->graphs)
    for (const auto& o : g.ops)
      if (p.op == nullptr && (o.name == p.req.op || (p.req.op.empty() && o.type.value == "fused_op"))) {
        p.op = &o;
        p.graph = &g;
      }
  if (!p.op) {
    p.error = p.req.op.empty() ? "no fused_op in the netlist" : "no op '" + p.req.op + "' in the netlist";
    return;
  }
  DiagnosticEngine gen;
  p.config = hlk::configureOp(*p.nl, *p.op, *p.target, gen);
  if (!p.config) {
    std::ostringstream e;
    printDiagnostics(e, *p.source, gen, print);
    p.error = "net2hlks cannot generate the kernel:\n" + e.str();
    return;
  }
  p.text = hlk::renderKernel(*p.config);
  p.kernelDir = (fs::path(workRoot()) / "kernels" / p.hlkcArch /
                 (std::string(hlk::familyName(p.config->family)) + "-" + hlk::contentHash(p.text)))
                    .string();
}

void Session::compile() {
  std::map<std::string, std::vector<Impl::Prepared*>> byArch;
  for (auto& p : impl_->items) {
    if (!p.source) impl_->prepare(p);
    if (!p.error.empty()) continue;
    byArch[p.hlkcArch].push_back(&p);
  }
  for (auto& [arch, list] : byArch) {
    std::set<std::string> dirs;
    for (Impl::Prepared* p : list) {
      if (!dirs.insert(p->kernelDir).second) continue;
      std::error_code ec;
      fs::create_directories(p->kernelDir, ec);
      for (const auto& [name, content] : {std::pair<const char*, const std::string*>{"hlk_args.h", &p->text.argsHeader},
                                          {"hlks.cpp", &p->text.source}}) {
        std::string path = (fs::path(p->kernelDir) / name).string();
        if (auto written = writeIfChanged(path, *content); !written)
          p->error = "cannot write " + path + ": " + written.error();
      }
      // Stale ELFs must not survive a failed compile.
      for (const char* elf : {"unpack.elf", "math.elf", "pack.elf"}) fs::remove(fs::path(p->kernelDir) / elf, ec);
    }
    hlkc::Options opts;
    opts.kernelDirs.assign(dirs.begin(), dirs.end());
    opts.arch = arch;
    opts.cacheDir = (fs::path(workRoot()) / "hlkc-cache").string();
    std::ostringstream out, err;
    int rc = hlkc::run(opts, out, err);
    for (Impl::Prepared* p : list) {
      if (!p->error.empty()) continue;
      bool have = true;
      for (const char* elf : {"unpack.elf", "math.elf", "pack.elf"}) have = have && fs::exists(fs::path(p->kernelDir) / elf);
      if (!have) p->error = "hlkc failed (exit " + std::to_string(rc) + "):\n" + err.str();
    }
  }
  impl_->compiled = true;
}

Outcome Session::run(size_t i) {
  if (!impl_->compiled) compile();
  return impl_->run(impl_->items.at(i));
}

Outcome Session::Impl::run(Prepared& p) {
  Outcome o;
  if (!p.error.empty()) {
    o.report = p.error;
    return o;
  }
  const netlist::Netlist& nl = *p.nl;
  const netlist::Op& op = *p.op;
  const hlk::KernelConfig& k = *p.config;
  const int64_t graphInputs = p.graph->inputCount.present() ? p.graph->inputCount.value : 1;
  const int64_t entries = p.req.entries > 0 ? p.req.entries : std::min<int64_t>(graphInputs, 2);
  std::mt19937 rng(p.req.seed * 0x9E3779B9u ^ fnv32(p.req.label));
  Range baseRange = p.req.range;
  if (p.req.netlistStimulus && nl.testConfig && nl.testConfig->stimulus) {
    const netlist::StimulusConfig& st = *nl.testConfig->stimulus;
    if ((!st.type.present() || st.type.value == "Uniform") && st.uniformLowerBound.present() &&
        st.uniformUpperBound.present() && st.uniformLowerBound.value < st.uniformUpperBound.value)
      baseRange = {static_cast<float>(st.uniformLowerBound.value), static_cast<float>(st.uniformUpperBound.value)};
  }

  // ---- inputs: random tensors of the source's shape, in the op's in_df.
  std::vector<Tensor> goldenInputs;
  std::map<int, std::vector<uint8_t>> fed;  // operand -> packed tiles
  std::map<std::string, Tensor> sources;    // source/df -> its random values
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const netlist::Operand& in = op.inputs[i];
    std::optional<netlist::TensorShape> shape;
    for (const auto& q : nl.queues)
      if (q.name == in.name) shape = netlist::queueShape(q);
    if (!shape)
      for (const auto& g : nl.graphs)
        for (const auto& other : g.ops)
          if (other.name == in.name) shape = netlist::opOutputShape(other);
    if (!shape) {
      o.report = "input " + std::to_string(i) + " '" + in.name + "' has no known shape";
      return o;
    }
    const DataFormat df = i < op.inDf.size() ? op.inDf[i].value : op.outDf.value;
    const Range range = i < p.req.inputRanges.size() ? p.req.inputRanges[i] : baseRange;
    // One tensor per source (and format): an op reading a queue twice sees
    // the same values on both inputs.
    const std::string key = in.name + "/" + std::string(netlist::dataFormatName(df));
    auto known = sources.find(key);
    if (known == sources.end()) {
      Tensor x(entries, shape->t, shape->r * kTile, shape->c * kTile);
      if (netlist::isIntegerFormat(df)) {
        std::uniform_int_distribution<int> dist(static_cast<int>(range.lo), static_cast<int>(range.hi));
        for (float& v : x.data) v = static_cast<float>(dist(rng));
      } else {
        std::uniform_real_distribution<float> dist(range.lo, range.hi);
        for (float& v : x.data) v = dist(rng);
      }
      formats::quantize(df, x);
      known = sources.emplace(key, std::move(x)).first;
    }
    const Tensor& x = known->second;
    // What the op sees (golden), and what the pipe delivers (the kernel does
    // the in-tile part: a transpose per tile, tile_broadcast on unpack).
    std::vector<netlist::Tm> pipeTms;
    int transposes = 0;
    for (const auto& tm : in.tms) {
      if (tm.kind == netlist::TmKind::TileBroadcast) continue;
      if (tm.kind == netlist::TmKind::Transpose) ++transposes;
      pipeTms.push_back(tm);
    }
    Tensor g, f;
    try {
      Tensor base = in.unpad ? golden::unpadTiles(x, *in.unpad) : x;
      g = golden::applyTms(base, in.tms);
      f = golden::applyTms(base, pipeTms);
      if (in.pad) {
        g = golden::padTiles(g, *in.pad);
        f = golden::padTiles(f, *in.pad);
      }
    } catch (const std::exception& e) {
      o.report = std::string("input TMs: ") + e.what();
      return o;
    }
    goldenInputs.push_back(std::move(g));

    const hlk::OperandInfo* info = nullptr;
    for (const auto& oi : k.operands)
      if (oi.role == hlk::OperandRole::Input && oi.index == static_cast<int>(i)) info = &oi;
    if (!info) continue;
    const hlk::Layout& l = *info->layout;
    if (l.t != f.z || l.rowTiles() * kTile > f.r || l.colTiles() * kTile > f.c) {
      o.report = "input " + std::to_string(i) + ": the kernel's layout [t=" + std::to_string(l.t) + ", " +
                 std::to_string(l.rowTiles()) + "x" + std::to_string(l.colTiles()) + " tiles] does not fit the tensor [t=" +
                 std::to_string(f.z) + ", " + std::to_string(f.r / kTile) + "x" + std::to_string(f.c / kTile) + " tiles]";
      return o;
    }
    const auto order = streamOrder(l);
    const size_t tileBytes = netlist::tileSizeBytes(info->df);
    std::vector<uint8_t>& bytes = fed[info->operand];
    bytes.resize(static_cast<size_t>(entries * l.t) * order.size() * tileBytes);
    size_t at = 0;
    for (int64_t w = 0; w < entries; ++w)
      for (int64_t z = 0; z < l.t; ++z)
        for (const auto& [rt, ct] : order) {
          TileValues v = tileOf(f, w, z, rt, ct, transposes % 2 == 1);
          formats::packTile(info->df, v, std::span<uint8_t>(bytes.data() + at, tileBytes));
          at += tileBytes;
        }
  }

  // ---- the core.
  const hlk::OperandInfo* outInfo = nullptr;
  std::vector<sim::HarnessOperand> operands;
  const int scale = std::max(1, p.req.capacityScale);
  for (const auto& oi : k.operands) {
    sim::HarnessOperand h;
    h.id = static_cast<uint32_t>(oi.operand);
    h.format = static_cast<contract::DataFormatCode>(oi.df);
    h.capacityTiles = static_cast<uint32_t>(std::max<int64_t>(oi.minTiles, 1) * scale);
    if (oi.role == hlk::OperandRole::Input) {
      h.inputTiles = std::move(fed[oi.operand]);
    } else if (oi.role == hlk::OperandRole::Output) {
      outInfo = &oi;
      const hlk::Layout& l = *oi.layout;
      h.expectTiles = static_cast<uint32_t>(entries * l.t * l.blockTiles());
      if (oi.untilized) {
        h.untilized = true;
        h.tileSizeBytes = static_cast<uint32_t>(kTile * kTile * elementBytes(oi.df));
        h.rowStrideBytes = static_cast<uint32_t>(l.colTiles() * kTile * elementBytes(oi.df));
        h.capacityTiles = static_cast<uint32_t>(l.blockTiles());
      }
    }
    operands.push_back(std::move(h));
  }
  if (!outInfo) {
    o.report = "the kernel has no output operand";
    return o;
  }

  sim::CoreConfig cc;
  cc.arch = p.target->arch;
  cc.name = p.req.label;
  sim::TensixCore core(cc);
  sim::Coprocessor cop(core.l1());
  sim::CoprocessorPortAdapter port(cop);
  core.setCoprocessor(&port);
  static const char* const kElf[contract::kThreadCount] = {"unpack.elf", "math.elf", "pack.elf"};
  for (uint32_t t = 0; t < contract::kThreadCount; ++t) {
    std::string why;
    if (!core.loadElfFile(static_cast<contract::Thread>(t), (fs::path(p.kernelDir) / kElf[t]).string(), why)) {
      o.report = why;
      return o;
    }
  }
  sim::OneCoreHarness harness(core);
  contract::EpochInfo epoch{};
  epoch.inputCount = static_cast<uint32_t>(entries);
  {
    std::string why;
    if (!harness.setup(operands, epoch, why)) {
      o.report = "operand setup: " + why;
      return o;
    }
  }
  auto cpuNow = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  const double cpuStarted = cpuNow();
  const auto started = std::chrono::steady_clock::now();
  sim::CoreRunResult result = harness.run(sim::RunOptions{});
  o.simSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  o.simCpuSeconds = cpuNow() - cpuStarted;
  o.cycles = result.cycles;
  for (const sim::HartReport& h : result.harts) o.riscInstructions += h.instructions;
  o.tilesUnpacked = cop.counters().tilesUnpacked;
  o.matmulTiles = cop.counters().matmulTiles;
  o.sfpuTiles = cop.counters().sfpuTiles;
  if (!result.ok() || !harness.errors().empty()) {
    o.report = "the run failed: " + result.message;
    for (const auto& e : harness.errors()) o.report += "\n" + e;
    return o;
  }

  // ---- the output, in the op's layout.
  const hlk::Layout& ol = *outInfo->layout;
  const std::vector<uint8_t>& raw = harness.output(16);
  Tensor actual(entries, ol.t, ol.rowTiles() * kTile, ol.colTiles() * kTile);
  if (outInfo->untilized) {
    if (entries * ol.t != 1) {
      o.report = "untilized outputs are checked for one entry of t 1 only";
      return o;
    }
    const uint32_t eb = elementBytes(outInfo->df);
    const size_t stride = static_cast<size_t>(actual.c) * eb;
    if (raw.size() < stride * static_cast<size_t>(actual.r)) {
      o.report = "untilized output: " + std::to_string(raw.size()) + " bytes";
      return o;
    }
    for (int64_t r = 0; r < actual.r; ++r)
      for (int64_t c = 0; c < actual.c; ++c)
        actual.at(0, 0, r, c) = decodeUntilized(outInfo->df, &raw[static_cast<size_t>(r) * stride + static_cast<size_t>(c) * eb]);
    o.outTiles = ol.blockTiles();
  } else {
    const auto order = streamOrder(ol);
    const size_t tileBytes = netlist::tileSizeBytes(outInfo->df);
    const size_t tiles = raw.size() / tileBytes;
    o.outTiles = static_cast<int64_t>(tiles);
    if (tiles != static_cast<size_t>(entries * ol.t) * order.size()) {
      o.report = "output: " + std::to_string(tiles) + " tiles drained, expected " +
                 std::to_string(static_cast<size_t>(entries * ol.t) * order.size());
      return o;
    }
    for (size_t n = 0; n < tiles; ++n) {
      const int64_t w = static_cast<int64_t>(n / (order.size() * static_cast<size_t>(ol.t)));
      const int64_t z = static_cast<int64_t>((n / order.size()) % static_cast<size_t>(ol.t));
      const auto [rt, ct] = order[n % order.size()];
      TileValues v;
      formats::unpackTile(outInfo->df, std::span<const uint8_t>(raw.data() + n * tileBytes, tileBytes), v);
      for (int64_t r = 0; r < kTile; ++r)
        for (int64_t c = 0; c < kTile; ++c) actual.at(w, z, rt * kTile + r, ct * kTile + c) = v[static_cast<size_t>(r * kTile + c)];
    }
  }

  // ---- the reference.
  Tensor expected;
  try {
    golden::OpSpec spec = golden::specOf(op, p.target->arch);
    if (op.type.value == "fused_op") {
      const netlist::FusedOp* fused = nullptr;
      for (const auto& f : nl.fusedOps)
        if (f.id == op.attributes.fusedOpId.value) fused = &f;
      if (!fused) throw golden::GoldenError("no fused op '" + op.attributes.fusedOpId.value + "'");
      expected = golden::evalFusedOp(spec, *fused, goldenInputs);
    } else {
      expected = golden::evalOp(spec, goldenInputs);
    }
  } catch (const std::exception& e) {
    o.report = std::string("golden: ") + e.what();
    return o;
  }
  if (expected.w != actual.w || expected.z != actual.z || expected.r < actual.r || expected.c < actual.c) {
    o.report = "golden output [" + std::to_string(expected.w) + ", " + std::to_string(expected.z) + ", " +
               std::to_string(expected.r) + ", " + std::to_string(expected.c) + "] does not hold the core's block";
    return o;
  }
  // A multi-core op: this core computes the top-left block.
  if (expected.r != actual.r || expected.c != actual.c) expected = window(expected, actual.r, actual.c);

  // ---- compare.
  std::ostringstream firstDiffs;
  for (size_t n = 0; n < expected.data.size(); ++n) {
    const float e = expected.data[n], a = actual.data[n];
    if (!sameBits(e, a) && ++o.bitDiffs <= 8) {
      const int64_t c = static_cast<int64_t>(n) % expected.c, r = static_cast<int64_t>(n) / expected.c % expected.r;
      const int64_t z = static_cast<int64_t>(n) / (expected.c * expected.r) % expected.z;
      const int64_t w = static_cast<int64_t>(n) / (expected.c * expected.r * expected.z);
      firstDiffs << "  differs at [" << w << "," << z << "," << r << "," << c << "]: expected " << fmt(e) << " got "
                 << fmt(a) << "\n";
    }
    if (std::isfinite(e) && std::isfinite(a)) o.maxAbsDiff = std::max(o.maxAbsDiff, std::fabs(static_cast<double>(e) - a));
  }
  o.values = static_cast<int64_t>(expected.data.size());
  compare::Config cfg;
  if (p.req.expect == Expect::Exact) {
    cfg.method = compare::Method::Exact;
  } else if (p.req.tolerance) {
    cfg = *p.req.tolerance;
  } else if (nl.testConfig && nl.testConfig->comparison) {
    std::string queue = op.name;
    for (const auto& q : nl.queues)
      if (q.input.value == op.name) queue = q.name;
    cfg = compare::configFor(*nl.testConfig->comparison, queue);
  } else {
    cfg = corpusTolerance();
  }
  o.cmp = compare::compareTensors(expected, actual, cfg);
  o.pass = p.req.expect == Expect::Exact ? o.bitDiffs == 0 : o.cmp.pass;
  std::ostringstream rep;
  rep << compare::formatResult("output of " + op.name, o.cmp);
  rep << "bit-identical: " << (o.values - o.bitDiffs) << " of " << o.values << " values, max |diff| " << fmt(o.maxAbsDiff)
      << "\n" << firstDiffs.str() << "kernel: " << p.kernelDir << "\n";
  if (o.pass && p.req.expect == Expect::Exact && o.bitDiffs) rep << "(expected bit-exact)\n";
  o.report = rep.str();
  return o;
}

// ---------------------------------------------------------------------------
std::string netlistOf(const OneOp& s) {
  const size_t n = s.inDf.size();
  const int entries = std::max(2, s.inputCount);
  auto blockOf = [&](size_t i) { return i < s.inBlock.size() && !s.inBlock[i].empty() ? s.inBlock[i] : s.block; };
  std::ostringstream y;
  y << "devices:\n  arch: " << s.arch << "\nqueues:\n";
  for (size_t i = 0; i < n; ++i) {
    char addr[16];
    std::snprintf(addr, sizeof addr, "0x%08x", 0x10000000u + static_cast<unsigned>(i) * 0x01000000u);
    y << "  in" << i << ": {type: queue, input: HOST, entries: " << entries << ", grid_size: [1, 1], " << blockOf(i)
      << ", df: " << s.inDf[i] << ", target_device: 0, loc: dram, dram: [[0, " << addr << "]]}\n";
  }
  y << "  out: {type: queue, input: op, entries: " << entries << ", grid_size: [1, 1], " << s.block
    << ", df: " << s.outDf << ", target_device: 0, loc: dram, dram: [[0, 0x1f000000]]}\n";
  y << "graphs:\n  g:\n    target_device: 0\n    input_count: " << s.inputCount << "\n";
  y << "    op: {type: " << s.type << ", grid_loc: [0, 0], grid_size: [1, 1], inputs: [";
  for (size_t i = 0; i < n; ++i) y << (i ? ", " : "") << "in" << i;
  y << "], ";
  for (size_t i = 0; i < s.inTms.size(); ++i)
    if (!s.inTms[i].empty()) y << "input_" << i << "_tms: " << s.inTms[i] << ", ";
  y << "in_df: [";
  for (size_t i = 0; i < n; ++i) y << (i ? ", " : "") << s.inDf[i];
  y << "], out_df: " << s.outDf << ", intermed_df: " << (s.intermedDf.empty() ? s.outDf : s.intermedDf)
    << ", acc_df: " << s.accDf << ", math_fidelity: " << s.fidelity << ", " << s.block << ", ublock_order: " << s.ublockOrder;
  if (!s.attrs.empty()) y << ", attributes: {" << s.attrs << "}";
  y << "}\n";
  y << "programs:\n  - run:\n    - execute: {graph_name: g}\n";
  return y.str();
}

std::string summaryLine(const Request& r, const Outcome& o) {
  std::ostringstream s;
  s << r.label << ": " << (o.pass ? "PASS" : "FAIL");
  if (o.values == 0) {
    s << " (" << o.report.substr(0, o.report.find('\n')) << ")";
    return s.str();
  }
  if (o.bitDiffs == 0) {
    s << " bit-exact (" << o.values << " values)";
  } else {
    s << " " << o.bitDiffs << "/" << o.values << " values differ, max|d| " << fmt(o.maxAbsDiff) << ", pcc "
      << fmt(o.cmp.pcc) << ", within " << fmt(o.cmp.pctWithin * 100) << "%";
  }
  s << (r.expect == Expect::Exact ? " [exact]" : " [tolerance]");
  return s.str();
}

} // namespace simgolden
