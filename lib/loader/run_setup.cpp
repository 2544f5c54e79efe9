#include "loader/run_setup.hpp"

#include "host/npy.hpp"
#include "loader/host_io.hpp"
#include "netlist/shape.hpp"
#include "support/tool_output.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

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

std::string dims(const Tensor& t) {
  return std::to_string(t.w) + "x" + std::to_string(t.z) + "x" + std::to_string(t.r) + "x" + std::to_string(t.c);
}

} // namespace

std::string npyName(const std::string& queue) {
  std::string s = queue;
  std::replace(s.begin(), s.end(), '/', '_');
  return s + ".npy";
}

std::vector<const netlist::VarDecl*> declaredParams(const netlist::Program& p) {
  std::vector<const netlist::VarDecl*> out;
  for (const auto& ins : p.instructions)
    if (ins.kind == netlist::InstrKind::Param)
      for (const auto& v : ins.vars) out.push_back(&v);
  return out;
}

int checkOptionCombinations(const LoaderOptions& opts, bool mpi, std::optional<sim::InjectSpec>& inject,
                            std::ostream& err) {
  const bool runCommand = opts.command == "run";
  if (!opts.command.empty() && opts.target == "golden" && !runCommand) {
    toolError(err, kTool) << "deploy runs built artifacts on the simulated chip; use 'loader run --target golden'\n";
    return 2;
  }
  if (!opts.pipesFrom.empty() && (!runCommand || opts.target != "sim")) {
    toolError(err, kTool) << "--pipes-from replaces net2pipe's files when `loader run` builds for the simulated "
        << "chip; --target golden builds nothing\n";
    return 2;
  }
  if (opts.target == "sim" && opts.buildDir.empty()) {
    toolError(err, kTool) << "--target sim needs --build-dir <dir> with the stage tools' artifacts "
        << "(loader run <netlist> builds them)\n";
    return 2;
  }
  if (mpi && opts.target != "sim") {
    toolError(err, kTool) << "--mpi spreads the chips of the simulated cluster over MPI ranks: it needs --target sim\n";
    return 2;
  }
  if (opts.target != "sim" && !opts.perfReport.empty()) {
    toolError(err, kTool) << "--perf-report needs the simulated chip (--target sim)\n";
    return 2;
  }
  if (opts.target != "sim" && (!opts.traceFile.empty() || !opts.reportFile.empty())) {
    toolError(err, kTool) << (opts.traceFile.empty() ? "--report" : "--trace <file>")
        << " needs the simulated chip (--target sim)\n";
    return 2;
  }
  // `loader run --trace NETLIST` would take the netlist for the trace file.
  if (opts.traceFile.ends_with(".yaml") || opts.traceFile.ends_with(".yml")) {
    toolError(err, kTool) << "--trace takes the trace file to write, not '" << opts.traceFile
        << "': put the netlist first or write --trace=<file.json>\n";
    return 2;
  }
  if (!opts.inject.empty()) {
    Expected<sim::InjectSpec> parsed = sim::parseInjectSpec(opts.inject);
    if (!parsed) {
      toolError(err, kTool) << "--inject: " << parsed.error() << "\n";
      return 2;
    }
    inject = *parsed;
    if (opts.target != "sim" || mpi) {
      toolError(err, kTool) << "--inject needs the simulated chip (--target sim), one process\n";
      return 2;
    }
  }
  if (opts.target != "sim" && opts.perfCheck) {
    toolError(err, kTool) << "--perf-check needs the simulated chip (--target sim)\n";
    return 2;
  }
  if (opts.target != "sim" && !opts.buildDir.empty()) {
    toolError(err, kTool) << "--build-dir is only used by --target sim\n";
    return 2;
  }
  return 0;
}

std::optional<ProgramChoice> choosePrograms(const netlist::Netlist& nl, const LoaderOptions& opts,
                                            const netlist::TestDriver& driver, std::ostream& out, std::ostream& err) {
  std::vector<const netlist::Program*> programs;
  if (opts.programs.empty()) {
    for (const auto& p : nl.programs) programs.push_back(&p);
  } else {
    for (const auto& name : opts.programs) {
      auto it = std::find_if(nl.programs.begin(), nl.programs.end(), [&](const auto& p) { return p.name == name; });
      if (it == nl.programs.end()) {
        std::string list;
        for (const auto& p : nl.programs) list += (list.empty() ? "" : ", ") + p.name;
        toolError(err, kTool) << "--program '" << name << "': no such program in " << opts.netlist << " (programs: "
            << (list.empty() ? "none" : list) << ")\n";
        return std::nullopt;
      }
      programs.push_back(&*it);
    }
  }
  std::vector<const netlist::VarDecl*> params;  // every program being run declares
  for (const auto* p : programs)
    for (const auto* v : declaredParams(*p)) params.push_back(v);
  auto declared = [&](const std::string& name) {
    return std::any_of(params.begin(), params.end(), [&](const netlist::VarDecl* v) { return v->name == name; });
  };
  std::map<std::string, int64_t> given;
  for (const auto& kv : opts.params) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      toolError(err, kTool) << "--param '" << kv << "': expected NAME=VALUE\n";
      return std::nullopt;
    }
    std::string name = withDollar(kv.substr(0, eq));
    auto value = parseInteger(kv.substr(eq + 1));
    if (!value) {
      toolError(err, kTool) << "--param '" << kv << "': value '" << kv.substr(eq + 1) << "' is not an integer\n";
      return std::nullopt;
    }
    if (!declared(name)) {
      std::string list;
      for (const auto* v : params) list += (list.empty() ? "" : ", ") + v->name;
      toolError(err, kTool) << "--param '" << name << "': no program being run declares it (params: "
          << (list.empty() ? "none" : list) << ")\n";
      return std::nullopt;
    }
    given[name] = *value;
  }
  // Params the test driver passes (docs/stimulus.md): for those a program
  // being run declares and --param does not give, with a line naming them.
  std::map<std::string, int64_t> driverGiven;
  {
    std::string line;
    for (const auto& [param, value] : netlist::driverParams(driver, nl)) {
      if (!declared(param->name) || given.count(param->name) || !driverGiven.emplace(param->name, value).second) continue;
      line += (line.empty() ? "" : ", ") + param->name + "=" + std::to_string(value) +
              (param->how.empty() ? "" : " (" + param->how + ")");
    }
    if (!line.empty())
      out << kTool << ": program params of " << driver.name << " (" << driver.source << "): " << line << "\n";
  }
  return ProgramChoice{std::move(programs), std::move(given), std::move(driverGiven)};
}

bool readNpyInputs(const netlist::Netlist& nl, const std::string& dir, DiagnosticEngine& diags,
                   std::map<std::string, Tensor>& inputs) {
  std::set<std::string> read;
  for (const auto& g : nl.graphs)
    for (const auto& op : g.ops)
      for (const auto& in : op.inputs) read.insert(in.name);
  bool ok = true;
  for (const auto& q : nl.queues) {
    if (!isHostSide(q) || !read.count(q.name)) continue;
    std::string path = (std::filesystem::path(dir) / npyName(q.name)).string();
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
  return ok;
}

} // namespace tessera::loader
