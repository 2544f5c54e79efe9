// manifest.yaml: which kernel directory each op runs, and the operands the
// kernel expects (docs/artifacts.md; schemas/hlk-manifest.schema.json).
#include "hlk/driver.hpp"

#include "hlk/internal.hpp"

#include <cstdio>
#include <sstream>

namespace tessera::hlk {

namespace {

// A YAML scalar: plain when that cannot be misread, else double-quoted.
std::string scalar(const std::string& s, bool forceQuotes = false) {
  bool plain = !s.empty() && !forceQuotes;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '.' || ch == '/' || ch == '-';
    plain &= ok;
  }
  if (plain) {
    // Words YAML 1.1/1.2 readers turn into booleans, nulls or numbers.
    static const char* const kSpecial[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
    std::string lower;
    for (char ch : s) lower += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    for (const char* w : kSpecial) plain &= lower != w;
    bool numeric = true;
    for (char ch : s) numeric &= (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
    plain &= !numeric && s.front() != '-' && s.front() != '.';
  }
  if (plain) return s;
  std::string q = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      q += '\\';
      q += static_cast<char>(ch);
    } else if (ch < 0x20 || ch == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", ch);
      q += buf;
    } else {
      q += static_cast<char>(ch);
    }
  }
  return q + "\"";
}

std::string dims(Dim2 d) { return "[" + std::to_string(d.r) + ", " + std::to_string(d.c) + "]"; }

std::string operandLine(const OperandInfo& o) {
  std::string s = "{operand: " + std::to_string(o.operand) + ", role: " + std::string(roleName(o.role));
  if (o.index >= 0) s += ", index: " + std::to_string(o.index);
  if (!o.source.empty()) s += ", source: " + scalar(o.source);
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
      << "netlist: " << scalar(g.netlist) << "\n"
      << "arch: " << scalar(g.arch) << "\n"
      << "device: " << scalar(g.device) << "\n";
  out << "kernels:" << (g.kernels.empty() ? " []" : "") << "\n";
  for (const KernelDir& k : g.kernels) {
    out << "  - dir: " << scalar(k.dir) << "\n"
        << "    family: " << familyName(k.family) << "\n"
        << "    ops: [";
    for (size_t i = 0; i < k.users.size(); ++i) out << (i ? ", " : "") << scalar(k.users[i]);
    out << "]\n";
  }
  out << "ops:" << (g.ops.empty() ? " []" : "") << "\n";
  for (const OpKernel& o : g.ops) {
    out << "  # graph " << quote(o.graph) << ", op " << quote(o.op) << ": " << o.type << " on grid "
        << dims(o.gridSize) << "\n"
        << "  - graph: " << scalar(o.graph) << "\n"
        << "    op: " << scalar(o.op) << "\n"
        << "    type: " << scalar(o.type) << "\n";
    if (!o.fusedOpId.empty()) out << "    fused_op_id: " << scalar(o.fusedOpId, true) << "\n";
    out << "    kernel: " << scalar(o.kernelDir) << "\n"
        << "    family: " << familyName(o.family) << "\n"
        << "    input_count: " << o.inputCount << "\n"
        << "    grid_size: " << dims(o.gridSize) << "\n"
        << "    operands:\n";
    for (const OperandInfo& op : o.operands) out << "      - " << operandLine(op) << "\n";
  }
  return out.str();
}

} // namespace tessera::hlk
