#include "sim/tensix_run_driver.hpp"

#include "device/arch_params.hpp"
#include "sim/coprocessor.hpp"
#include "sim/coprocessor_port_adapter.hpp"
#include "sim/one_core_harness.hpp"
#include "sim/tensix_core.hpp"
#include "support/diagnostics.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>

namespace tessera::sim {

namespace c = contract;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTool = "tensix-run";

std::ostream& error(std::ostream& err) { return toolError(err, kTool); }

} // namespace

int runTensixRun(const TensixRunOptions& opts, std::ostream& out, std::ostream& err) {
  // 1. The spec, if any.
  RunSpec spec;
  if (!opts.spec.empty()) {
    auto text = readFile(opts.spec);
    if (!text) {
      error(err) << "cannot read spec '" << opts.spec << "': " << text.error() << "\n";
      return 1;
    }
    SourceBuffer source(opts.spec, std::move(*text));
    DiagnosticEngine diags;
    std::optional<RunSpec> parsed = parseRunSpec(source, fs::path(opts.spec).parent_path().string(), diags);
    if (!parsed) {
      printDiagnostics(err, source, diags);
      return 1;
    }
    spec = std::move(*parsed);
  }

  // 2. Command-line overrides and additions (usage errors exit 2).
  Arch arch = spec.arch.value_or(Arch::Grayskull);
  if (!opts.arch.empty()) {
    std::optional<Arch> a = parseArch(opts.arch);
    if (!a) {
      error(err) << "unknown --arch '" << opts.arch << "' (expected grayskull or wormhole_b0)\n";
      return 2;
    }
    arch = *a;
  }
  const std::string kernelDir = !opts.kernelDir.empty() ? opts.kernelDir : spec.kernelDir;
  if (kernelDir.empty()) {
    error(err) << "no kernel directory: pass --kernel-dir or set kernel-dir in the spec\n";
    return 2;
  }
  struct Flag {
    const char* name;
    const std::vector<std::string>* values;
    OperandRole role;
  };
  const Flag flags[] = {{"--input", &opts.inputs, OperandRole::Input},
                        {"--output", &opts.outputs, OperandRole::Output},
                        {"--operand", &opts.operands, OperandRole::Intermediate}};
  for (const Flag& flag : flags) {
    for (const std::string& text : *flag.values) {
      HarnessOperand op;
      std::string why;
      if (!parseOperandArg(text, op, why)) {
        error(err) << flag.name << " " << why << "\n";
        return 2;
      }
      if (*operandRole(op.id) != flag.role) {
        error(err) << flag.name << " '" << text << "': operand " << op.id << " is an "
                   << operandRoleName(*operandRole(op.id)) << ", not an " << operandRoleName(flag.role) << "\n";
        return 2;
      }
      for (const HarnessOperand& other : spec.operands)
        if (other.id == op.id) {
          error(err) << flag.name << " '" << text << "': operand " << op.id << " is already defined"
                     << (opts.spec.empty() ? "" : " (in the spec)") << "\n";
          return 2;
        }
      spec.operands.push_back(std::move(op));
    }
  }
  if (opts.inputCount) spec.epoch.inputCount = *opts.inputCount;
  if (opts.maxCycles) spec.run.maxCycles = *opts.maxCycles;

  // 3. Input files.
  for (HarnessOperand& op : spec.operands) {
    if (op.inputPath.empty()) continue;
    auto bytes = readFile(op.inputPath);
    if (!bytes) {
      error(err) << "operand " << op.id << ": cannot read input '" << op.inputPath << "': " << bytes.error() << "\n";
      return 1;
    }
    op.inputTiles.assign(bytes->begin(), bytes->end());
  }

  // 4. The core, its coprocessor and the three kernels.
  CoreConfig config;
  config.arch = arch;
  config.name = fs::path(kernelDir).filename().string();
  if (config.name.empty()) config.name = fs::path(kernelDir).parent_path().filename().string();
  TensixCore core(config);
  Coprocessor cop(core.l1(), {}, static_cast<uint32_t>(destTiles(arch, false)));
  CoprocessorPortAdapter port(cop);
  core.setCoprocessor(&port);
  static const char* const kElf[c::kThreadCount] = {"unpack.elf", "math.elf", "pack.elf"};
  for (uint32_t t = 0; t < c::kThreadCount; ++t) {
    std::string why;
    if (!core.loadElfFile(static_cast<Thread>(t), (fs::path(kernelDir) / kElf[t]).string(), why)) {
      error(err) << why << "\n";
      return 1;
    }
  }

  // 5. Operands, run.
  OneCoreHarness harness(core);
  {
    std::string why;
    if (!harness.setup(spec.operands, spec.epoch, why)) {
      error(err) << why << "\n";
      return 1;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  CoreRunResult result = harness.run(spec.run);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // 6. Summary (also on failure: it says how far the threads got).
  out << result.message.substr(0, result.message.find('\n')) << "\n";
  uint64_t instructions = 0;
  for (const HartReport& h : result.harts) {
    instructions += h.instructions;
    out << threadLabel(h.thread) << ": ";
    if (h.state == HartState::Absent) {
      out << "no program\n";
      continue;
    }
    out << h.instructions << " instructions, " << h.cycles << " cycles (" << h.stallCycles << " stalled)";
    if (h.state == HartState::Done) out << ", exit " << h.exitCode;
    else out << ", " << hartStateName(h.state);
    out << "\n";
  }
  for (const HarnessOperand& op : harness.operands()) {
    const OperandRole role = *operandRole(op.id);
    out << "operand " << op.id << " (" << operandRoleName(role) << ", " << op.capacityTiles << " x "
        << op.tileSizeBytes << " bytes at 0x" << std::hex << *op.address << std::dec << ")";
    if (role == OperandRole::Input)
      out << ": " << harness.tilesFed(op.id) << " of " << op.inputTiles.size() / op.tileSizeBytes << " tiles fed, "
          << core.tilesAcked(op.id) << " popped";
    else if (role == OperandRole::Output)
      out << ": " << harness.tilesDrained(op.id) << " tiles drained";
    out << "\n";
  }
  if (opts.debugLog)
    for (uint32_t t = 0; t < c::kThreadCount; ++t) {
      const std::string& log = core.debugLog(static_cast<Thread>(t));
      if (log.empty()) continue;
      out << "debug log of " << threadName(static_cast<Thread>(t)) << ":\n" << log;
      if (log.back() != '\n') out << "\n";
    }
  if (opts.time) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "host: %.3f s, %llu instructions, %.1f MIPS\n", seconds,
                  static_cast<unsigned long long>(instructions), seconds > 0 ? instructions / seconds / 1e6 : 0.0);
    out << buf;
  }

  // 7. Verdict; outputs only after a successful run (no partial outputs).
  if (result.stop != CoreStop::Done) {
    error(err) << result.message << "\n";
    return 1;
  }
  bool failed = false;
  for (const HartReport& h : result.harts)
    if (h.state == HartState::Done && h.exitCode != 0) {
      error(err) << "thread " << threadLabel(h.thread) << " exited with code " << h.exitCode << "\n";
      failed = true;
    }
  for (const std::string& e : harness.errors()) {
    error(err) << e << "\n";
    failed = true;
  }
  if (failed) return 1;
  for (const HarnessOperand& op : harness.operands()) {
    if (op.outputPath.empty()) continue;
    const std::vector<uint8_t>& bytes = harness.output(op.id);
    std::string why;
    if (auto written = writeFileAtomic(op.outputPath, std::string(bytes.begin(), bytes.end())); !written) {
      error(err) << "operand " << op.id << ": cannot write '" << op.outputPath << "': " << written.error() << "\n";
      return 1;
    }
  }
  return 0;
}

} // namespace tessera::sim
