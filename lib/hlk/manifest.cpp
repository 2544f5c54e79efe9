// manifest.yaml: which kernel directory each op runs, and the operands the
// kernel expects (docs/artifacts.md; schemas/hlk-manifest.schema.json).
#include "hlk/driver.hpp"

#include "hlk/internal.hpp"
#include "support/text_format.hpp"

#include <cstdio>
#include <sstream>

namespace tessera::hlk {

namespace {

std::string dims(Dim2 d) { return "[" + std::to_string(d.r) + ", " + std::to_string(d.c) + "]"; }

std::string operandLine(const OperandInfo& o) {
  std::string s = "{operand: " + std::to_string(o.operand) + ", role: " + std::string(roleName(o.role));
  if (o.index >= 0) s += ", index: " + std::to_string(o.index);
  if (!o.source.empty()) s += ", source: " + support::yamlScalar(o.source);
  s += ", df: " + std::string(netlist::dataFormatName(o.df));
  if (o.layout) {
    const Layout& l = *o.layout;
    s += ", t: " + std::to_string(l.t) + ", mblock: " + dims(l.mblock) + ", ublock: " + dims(l.ublock) +
         ", ublock_order: " + std::string(netlist::ublockOrderName(l.order));
  }
  if (o.role == OperandRole::Output) s += std::string(", untilized: ") + (o.untilized ? "true" : "false");
  s += ", min_tiles: " + std::to_string(o.minTiles) + "}";
  return s;
}

} // namespace

std::string manifestYaml(const Generation& g) {
  std::ostringstream out;
  out << "# net2hlks (Tessera) kernels of " << g.netlist << "; do not edit.\n"
      << "# Format: docs/artifacts.md; schema: schemas/hlk-manifest.schema.json.\n"
      << "version: 1\n"
      << "netlist: " << support::yamlScalar(g.netlist) << "\n"
      << "arch: " << support::yamlScalar(g.arch) << "\n"
      << "device: " << support::yamlScalar(g.device) << "\n";
  out << "kernels:" << (g.kernels.empty() ? " []" : "") << "\n";
  for (const KernelDir& k : g.kernels) {
    out << "  - dir: " << support::yamlScalar(k.dir) << "\n"
        << "    family: " << familyName(k.family) << "\n"
        << "    ops: [";
    for (size_t i = 0; i < k.users.size(); ++i) out << (i ? ", " : "") << support::yamlScalar(k.users[i]);
    out << "]\n";
  }
  out << "ops:" << (g.ops.empty() ? " []" : "") << "\n";
  for (const OpKernel& o : g.ops) {
    out << "  # graph " << quote(o.graph) << ", op " << quote(o.op) << ": " << o.type << " on grid "
        << dims(o.gridSize) << "\n"
        << "  - graph: " << support::yamlScalar(o.graph) << "\n"
        << "    op: " << support::yamlScalar(o.op) << "\n"
        << "    type: " << support::yamlScalar(o.type) << "\n";
    if (!o.fusedOpId.empty()) out << "    fused_op_id: " << support::yamlScalar(o.fusedOpId, true) << "\n";
    out << "    kernel: " << support::yamlScalar(o.kernelDir) << "\n"
        << "    family: " << familyName(o.family) << "\n"
        << "    input_count: " << o.inputCount << "\n"
        << "    grid_size: " << dims(o.gridSize) << "\n"
        << "    operands:\n";
    for (const OperandInfo& op : o.operands) out << "      - " << operandLine(op) << "\n";
  }
  // Only when there are any: manifests of netlists without such ops keep their bytes.
  if (!g.skipped.empty()) out << "skipped:\n";
  for (const SkippedOp& s : g.skipped)
    out << "  - {graph: " << support::yamlScalar(s.graph) << ", op: " << support::yamlScalar(s.op)
        << ", type: " << support::yamlScalar(s.type) << ", reason: " << support::yamlScalar(s.reason) << "}\n";
  return out.str();
}

} // namespace tessera::hlk
