#include "loader/driver.hpp"

#include "compare/compare.hpp"
#include "device/soc_descriptor.hpp"
#include "golden/ops.hpp"
#include "host/npy.hpp"
#include "loader/golden_target.hpp"
#include "loader/host_io.hpp"
#include "loader/sim_target.hpp"
#include "netlist/parser.hpp"
#include "netlist/shape.hpp"
#include "netlist/target.hpp"
#include "netlist/validator.hpp"
#include "support/file_io.hpp"

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

namespace tessera::loader {

using formats::Tensor;

namespace {

constexpr const char* kTool = "loader";

std::string withDollar(const std::string& name) { return name.starts_with("$") ? name : "$" + name; }

std::optional<int64_t> parseInteger(const std::string& text) {
  int64_t v = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) begin += 2, base = 16;
  auto [p, ec] = std::from_chars(begin, end, v, base);
  if (ec != std::errc() || p != end || begin == end) return std::nullopt;
  return v;
}

// File name of a queue's .npy: queue names may hold '/', which cannot be in a file name.
std::string npyName(const std::string& queue) {
  std::string s = queue;
  std::replace(s.begin(), s.end(), '/', '_');
  return s + ".npy";
}

// Params a program declares, in order.
std::vector<const netlist::VarDecl*> declaredParams(const netlist::Program& p) {
  std::vector<const netlist::VarDecl*> out;
  for (const auto& ins : p.instructions)
    if (ins.kind == netlist::InstrKind::Param)
      for (const auto& v : ins.vars) out.push_back(&v);
  return out;
}

// A value for a param the user did not give: test-args names the usual ones
// ($p_microbatch_count <- microbatch_count, $p_loop_count <- program_loop_count).
std::optional<int64_t> testArgDefault(const netlist::Netlist& nl, const std::string& param) {
  if (!nl.testConfig) return std::nullopt;
  for (const auto& e : nl.testConfig->extra) {
    if (e.key != "test-args" || !e.value.is_object()) continue;
    std::string bare = param.substr(param.starts_with("$p_") ? 3 : 1);
    for (const std::string& key : {bare, "program_" + bare})
      if (auto it = e.value.find(key); it != e.value.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return std::nullopt;
}

Tensor concatEntries(const std::vector<Tensor>& entries, const netlist::Queue& q) {
  auto shape = netlist::queueShape(q);
  std::vector<const Tensor*> ptrs;
  for (const Tensor& e : entries) ptrs.push_back(&e);
  return formats::concatEntries(ptrs, shape ? shape->t : 1, shape ? shape->r * formats::kTileDim : 0,
                               shape ? shape->c * formats::kTileDim : 0);
}

std::string dims(const Tensor& t) {
  return std::to_string(t.w) + "x" + std::to_string(t.z) + "x" + std::to_string(t.r) + "x" + std::to_string(t.c);
}

} // namespace

int runLoader(const LoaderOptions& opts, std::ostream& out, std::ostream& err) {
  PrintOptions print{opts.maxErrors, false, false};
  if (opts.target != "golden" && opts.target != "sim") {
    err << kTool << ": error: unknown target '" << opts.target << "' (available: golden, sim)\n";
    return 2;
  }
  if (opts.target == "sim" && opts.buildDir.empty()) {
    err << kTool << ": error: --target sim needs --build-dir <dir> with the stage tools' artifacts "
        << "(scripts/build-artifacts.sh <netlist> <dir>)\n";
    return 2;
  }
  if (opts.target != "sim" && !opts.buildDir.empty()) {
    err << kTool << ": error: --build-dir is only used by --target sim\n";
    return 2;
  }
  std::optional<SimArtifacts> artifacts;
  if (opts.target == "sim") {
    std::string error;
    artifacts = loadSimArtifacts(opts.buildDir, error);
    if (!artifacts) {
      err << kTool << ": error: --build-dir: " << error << "\n";
      return 2;
    }
  }
  std::optional<Arch> requested;
  if (!netlist::parseArchOption(opts.arch, kTool, err, requested)) return 2;

  std::string readError;
  auto text = readFile(opts.netlist, readError);
  if (!text) {
    err << opts.netlist << ": error: cannot read netlist: " << readError << "\n";
    return 1;
  }
  SourceBuffer source(opts.netlist, std::move(*text));
  DiagnosticEngine diags;
  std::optional<netlist::Netlist> parsed = netlist::parseNetlist(source, diags);
  if (!parsed) {
    printDiagnostics(err, source, diags, print);
    return 1;
  }
  const netlist::Netlist& nl = *parsed;
  Arch arch = requested ? *requested : (nl.devices.arch.empty() ? Arch::Grayskull : nl.devices.arch.front().value);
  SocDescriptor device = loadBundledDescriptor(defaultDescriptorName(arch));
  if (diags.errorCount() == 0) netlist::validateNetlist(nl, netlist::ValidationTarget{arch, &device}, diags);
  if (printDiagnostics(err, source, diags, print) > 0) return 1;
  if (artifacts && artifacts->netlist != std::filesystem::path(opts.netlist).filename().string()) {
    err << kTool << ": error: --build-dir '" << opts.buildDir << "' holds the artifacts of '" << artifacts->netlist
        << "', not of '" << std::filesystem::path(opts.netlist).filename().string()
        << "' (scripts/build-artifacts.sh " << opts.netlist << " <dir>)\n";
    return 2;
  }
  if (artifacts && !artifacts->arch.empty() && artifacts->arch != archName(arch)) {
    err << kTool << ": error: --build-dir '" << opts.buildDir << "' was built for " << artifacts->arch << ", not "
        << archName(arch) << " (run scripts/build-artifacts.sh --arch " << archName(arch) << ")\n";
    return 2;
  }

  // Programs and params: usage errors, reported before anything runs.
  std::vector<const netlist::Program*> programs;
  if (opts.programs.empty()) {
    for (const auto& p : nl.programs) programs.push_back(&p);
  } else {
    for (const auto& name : opts.programs) {
      auto it = std::find_if(nl.programs.begin(), nl.programs.end(), [&](const auto& p) { return p.name == name; });
      if (it == nl.programs.end()) {
        std::string list;
        for (const auto& p : nl.programs) list += (list.empty() ? "" : ", ") + p.name;
        err << kTool << ": error: --program '" << name << "': no such program in " << opts.netlist << " (programs: "
            << (list.empty() ? "none" : list) << ")\n";
        return 2;
      }
      programs.push_back(&*it);
    }
  }
  std::map<std::string, int64_t> given;
  for (const auto& kv : opts.params) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      err << kTool << ": error: --param '" << kv << "': expected NAME=VALUE\n";
      return 2;
    }
    std::string name = withDollar(kv.substr(0, eq));
    auto value = parseInteger(kv.substr(eq + 1));
    if (!value) {
      err << kTool << ": error: --param '" << kv << "': value '" << kv.substr(eq + 1) << "' is not an integer\n";
      return 2;
    }
    bool declared = false;
    for (const auto* p : programs)
      for (const auto* v : declaredParams(*p)) declared |= v->name == name;
    if (!declared) {
      std::string list;
      for (const auto* p : programs)
        for (const auto* v : declaredParams(*p)) list += (list.empty() ? "" : ", ") + v->name;
      err << kTool << ": error: --param '" << name << "': no program being run declares it (params: "
          << (list.empty() ? "none" : list) << ")\n";
      return 2;
    }
    given[name] = *value;
  }

  // Inputs from .npy files: every host-fed queue an op reads needs one.
  std::map<std::string, Tensor> inputs;
  if (!opts.inputsDir.empty()) {
    std::set<std::string> read;
    for (const auto& g : nl.graphs)
      for (const auto& op : g.ops)
        for (const auto& in : op.inputs) read.insert(in.name);
    bool ok = true;
    for (const auto& q : nl.queues) {
      if (!isHostSide(q) || !read.count(q.name)) continue;
      std::string path = (std::filesystem::path(opts.inputsDir) / npyName(q.name)).string();
      if (!std::filesystem::exists(path)) {
        diags.error("input-missing", q.loc, "host-fed queue '" + q.name + "' has no input file '" + path + "'");
        ok = false;
        continue;
      }
      try {
        Tensor t = host::readNpy(path);
        auto shape = netlist::queueShape(q);
        int64_t rows = shape->r * formats::kTileDim, cols = shape->c * formats::kTileDim;
        if (t.z != shape->t || t.r != rows || t.c != cols) {
          diags.error("input-shape", q.loc,
                      "input '" + path + "' has shape " + dims(t) + " but queue '" + q.name + "' entries are [t=" +
                          std::to_string(shape->t) + ", " + std::to_string(rows) + "x" + std::to_string(cols) + "]")
              .note("expected an array [entries, " + std::to_string(shape->t) + ", " + std::to_string(rows) + ", " +
                    std::to_string(cols) + "] (leading dimensions may be omitted when 1)");
          ok = false;
          continue;
        }
        inputs.emplace(q.name, std::move(t));
      } catch (const host::NpyError& e) {
        diags.error("input-npy", q.loc, std::string("queue '") + q.name + "': " + e.what());
        ok = false;
      }
    }
    if (!ok) {
      printDiagnostics(err, source, diags, print);
      return 1;
    }
  }

  // Entries are kept for --outputs/--expected only: a large training netlist
  // writes gigabytes over a run.
  const bool recording = !opts.outputsDir.empty() || !opts.expectedDir.empty();
  runtime::QueueStore store(nl);
  store.recordWrites(recording);
  HostIo host(nl, std::move(inputs), opts.seed, recording);
  host.attach(store);
  std::unique_ptr<GoldenTarget> golden;
  std::unique_ptr<SimTarget> simTarget;
  runtime::Target* targetPtr = nullptr;
  if (artifacts) {
    simTarget = std::make_unique<SimTarget>(nl, device, std::move(*artifacts));
    if (opts.trace) simTarget->trace = [&](const std::string& line) { out << "    " << line << "\n"; };
    targetPtr = simTarget.get();
  } else {
    golden = std::make_unique<GoldenTarget>(nl, arch, opts.threads);
    targetPtr = golden.get();
  }
  runtime::Target& target = *targetPtr;
  runtime::Interpreter interp(nl, store, target, host);
  if (opts.trace) interp.trace = [&](const std::string& line) { out << "  " << line << "\n"; };

  std::string running;
  out << kTool << ": " << opts.netlist << " on target " << target.name() << " (" << archName(arch) << ")\n";
  try {
    for (const auto* p : programs) {
      std::map<std::string, int64_t> params;
      for (const auto* v : declaredParams(*p)) {
        if (auto g = given.find(v->name); g != given.end()) params[v->name] = g->second;
        else if (auto d = testArgDefault(nl, v->name)) params[v->name] = *d;
        else {
          params[v->name] = 1;
          err << kTool << ": note: param " << v->name << " of program '" << p->name
              << "' not given (--param) nor in test-args; using 1\n";
        }
      }
      int64_t before = interp.executeCount();
      running = p->name;
      if (opts.trace) out << "program " << p->name << "\n";
      interp.run(*p, params);
      out << "program " << p->name << ": " << interp.executeCount() - before << " executes\n";
    }
  } catch (const runtime::RuntimeError& e) {
    out << "program " << running << ": failed\n";
    diags.error(e.rule, e.loc, e.what());
    printDiagnostics(err, source, diags, print);
    return 1;
  } catch (const std::invalid_argument& e) { // stimulus config the host cannot generate
    out << "program " << running << ": failed\n";
    diags.error("stimulus", nl.testConfig ? nl.testConfig->loc : SourceLoc{}, e.what());
    printDiagnostics(err, source, diags, print);
    return 1;
  }

  // Outputs: every entry ops wrote into each op-fed queue, in write order; and
  // what the host pushed into each host-fed one, so a run can be reproduced.
  bool failed = false;
  compare::Config base;
  static const std::vector<Tensor> kNone;
  for (const auto& q : nl.queues) {
    const bool hostSide = isHostSide(q);
    int64_t count = hostSide ? host.pushed(q.name) : store.writeCount(q.name);
    if (hostSide && count == 0) continue; // never fed: nothing read it
    out << (hostSide ? "input " : "output ") << q.name << ": " << count << (count == 1 ? " entry" : " entries");
    if (!recording) {
      out << "\n";
      continue;
    }
    const auto& logs = hostSide ? host.pushLog() : store.writeLog();
    auto log = logs.find(q.name);
    Tensor all = concatEntries(log == logs.end() ? kNone : log->second, q);
    out << " of [t=" << all.z << ", " << all.r << "x" << all.c << "]";
    if (!opts.outputsDir.empty()) {
      std::string path = (std::filesystem::path(opts.outputsDir) / npyName(q.name)).string();
      try {
        std::filesystem::create_directories(opts.outputsDir);
        host::writeNpy(path, all);
      } catch (const std::exception& e) {
        out << "\n";
        err << kTool << ": error: cannot write '" << path << "': " << e.what() << "\n";
        return 1;
      }
      out << " -> " << path;
    }
    out << "\n";
    if (!opts.expectedDir.empty() && !hostSide) {
      std::string path = (std::filesystem::path(opts.expectedDir) / npyName(q.name)).string();
      if (!std::filesystem::exists(path)) continue;
      Tensor expected;
      try {
        expected = host::readNpy(path);
      } catch (const host::NpyError& e) {
        err << kTool << ": error: " << e.what() << "\n";
        return 1;
      }
      compare::Config cfg = base;
      try {
        if (nl.testConfig && nl.testConfig->comparison) cfg = compare::configFor(*nl.testConfig->comparison, q.name);
      } catch (const std::invalid_argument& e) { // a bad type, range or regex in comparison-config
        diags.error("comparison-config", nl.testConfig->comparison->loc, e.what());
        printDiagnostics(err, source, diags, print);
        return 1;
      }
      compare::Result r = compare::compareTensors(expected, all, cfg);
      out << compare::formatResult(q.name, r);
      failed |= !r.pass;
    }
  }
  if (opts.profile && simTarget) {
    out << "profile (sim): " << simTarget->epochsRun() << " epochs, " << simTarget->totalCycles() << " cycles\n";
  } else if (opts.profile) {
    out << "profile (golden, " << golden->threads() << (golden->threads() == 1 ? " thread" : " threads")
        << "; wall time per op type):\n";
    char line[160];
    for (const auto& [type, p] : golden->profile()) {
      std::snprintf(line, sizeof line, "  %-24s %8lld calls %10.3f s", type.c_str(), static_cast<long long>(p.calls), p.seconds);
      out << line;
      if (p.flops > 0) {
        std::snprintf(line, sizeof line, "  %.3f GFLOP, %.2f GFLOP/s", p.flops / 1e9, p.seconds > 0 ? p.flops / 1e9 / p.seconds : 0.0);
        out << line;
      }
      out << "\n";
    }
  }
  out << (failed ? "FAIL" : "PASS") << "\n";
  return failed ? 1 : 0;
}

} // namespace tessera::loader
