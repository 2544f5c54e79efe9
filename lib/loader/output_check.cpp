#include "loader/output_check.hpp"

#include "compare/compare.hpp"
#include "host/npy.hpp"
#include "loader/host_io.hpp"
#include "loader/run_setup.hpp"
#include "netlist/shape.hpp"
#include "support/tool_output.hpp"

#include <filesystem>
#include <stdexcept>

namespace tessera::loader {
namespace {

constexpr const char* kTool = "loader";

formats::Tensor queueEntries(const std::vector<formats::PackedTensor>& entries, const netlist::Queue& q) {
  auto shape = netlist::queueShape(q);
  return formats::concatEntries(entries, shape ? shape->t : 1, shape ? shape->r * formats::kTileDim : 0,
                                shape ? shape->c * formats::kTileDim : 0);
}

const std::vector<formats::PackedTensor>& entriesOf(const EntryLog& log, const std::string& queue) {
  static const std::vector<formats::PackedTensor> kNone;
  auto it = log.find(queue);
  return it == log.end() ? kNone : it->second;
}

} // namespace

std::optional<bool> checkOutputs(const netlist::Netlist& nl, const runtime::QueueStore& store, const HostIo& host,
                                 const OutputCheckRequest& request, DiagnosticEngine& diags,
                                 const std::function<void()>& printDiags, std::ostream& out, std::ostream& err) {
  const bool againstReference = request.reference != nullptr;
  // A queue's comparison-config; false after reporting a bad type, range or regex in it.
  auto configFor = [&](const std::string& queue, compare::Config& cfg) -> bool {
    cfg = compare::Config{};
    try {
      if (nl.testConfig && nl.testConfig->comparison) cfg = compare::configFor(*nl.testConfig->comparison, queue);
      return true;
    } catch (const std::invalid_argument& e) {
      diags.error("comparison-config", nl.testConfig->comparison->loc, e.what());
      printDiags();
      return false;
    }
  };
  bool failed = false;
  std::vector<compare::QueueCheck> table;
  // Several chips: the check table names each queue's chip.
  bool multiChip = false;
  for (const auto& q : nl.queues) multiChip |= q.targetDevice.value > 0;
  for (const auto& g : nl.graphs) multiChip |= g.targetDevice.value > 0;
  for (const auto& q : nl.queues) {
    const bool hostSide = isHostSide(q);
    int64_t count = hostSide ? host.pushed(q.name) : store.writeCount(q.name);
    if (hostSide && count == 0) continue; // never fed: nothing read it
    if (!againstReference)
      out << (hostSide ? "input " : "output ") << q.name << ": " << count << (count == 1 ? " entry" : " entries");
    if (!request.recording) {
      out << "\n";
      continue;
    }
    formats::Tensor all = queueEntries(entriesOf(hostSide ? host.pushLog() : store.writeLog(), q.name), q);
    if (!againstReference) out << " of [t=" << all.z << ", " << all.r << "x" << all.c << "]";
    if (!request.outputsDir.empty()) {
      std::string path = (std::filesystem::path(request.outputsDir) / npyName(q.name)).string();
      try {
        std::filesystem::create_directories(request.outputsDir);
        host::writeNpy(path, all);
      } catch (const std::exception& e) {
        out << "\n";
        toolError(err, kTool) << "cannot write '" << path << "': " << e.what() << "\n";
        return std::nullopt;
      }
      if (!againstReference) out << " -> " << path;
    }
    if (!againstReference) out << "\n";
    if (hostSide) continue;
    if (againstReference) {
      if (count == 0 && !request.reference->contains(q.name)) continue; // no op writes it in the programs run
      compare::Config cfg;
      if (!configFor(q.name, cfg)) return std::nullopt;
      formats::Tensor expected = queueEntries(entriesOf(*request.reference, q.name), q);
      table.push_back({q.name, count, compare::compareTensors(expected, all, cfg),
                       multiChip ? std::optional<int64_t>(std::max<int64_t>(0, q.targetDevice.value)) : std::nullopt});
      continue;
    }
    if (!request.expectedDir.empty()) {
      std::string path = (std::filesystem::path(request.expectedDir) / npyName(q.name)).string();
      if (!std::filesystem::exists(path)) continue;
      formats::Tensor expected;
      try {
        expected = host::readNpy(path);
      } catch (const host::NpyError& e) {
        toolError(err, kTool) << e.what() << "\n";
        return std::nullopt;
      }
      compare::Config cfg;
      if (!configFor(q.name, cfg)) return std::nullopt;
      compare::Result r = compare::compareTensors(expected, all, cfg);
      out << compare::formatResult(q.name, r);
      failed |= !r.pass;
    }
  }
  if (againstReference) {
    out << compare::formatCheckTable(table);
    for (const auto& c : table) failed |= !c.result.pass;
  }
  return failed;
}

} // namespace tessera::loader
