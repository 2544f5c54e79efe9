// net2hlks as a library: generate the kernels of a netlist's ops, the
// manifest naming them, and the whole tool (flags in, exit code out) so the
// driver stays a thin flag parser (tools/net2hlks/main.cpp).
#pragma once
#include "hlk/config.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::hlk {

// One kernel directory: the files and the ops that run them.
struct KernelDir {
  std::string dir; // kernels/<family>-<16 hex digits of the content hash>
  Family family = Family::Unary;
  KernelText text;
  std::vector<std::string> users; // graph/op
};

// One op of the manifest.
struct OpKernel {
  std::string graph, op, type;
  std::string fusedOpId;  // fused_op only
  std::string kernelDir;
  Family family = Family::Unary;
  int64_t inputCount = 1; // the graph's input_count: what the loader sets EpochInfo.inputCount to
  Dim2 gridSize{1, 1};
  std::vector<OperandInfo> operands;
};

// An op that runs no kernel, and why (the manifest lists it).
struct SkippedOp {
  std::string graph, op, type;
  std::string reason;
};

struct Generation {
  std::string netlist; // file name (no directories: the manifest does not depend on where the netlist is)
  std::string arch;
  std::string device;
  std::vector<KernelDir> kernels; // sorted by dir
  std::vector<OpKernel> ops;      // graph order, then op order
  std::vector<SkippedOp> skipped; // graph order, then op order
};

struct Selection {
  std::string graph; // empty: every graph
  std::string op;    // empty: every op
};

// Generates the kernels of the selected ops of a validated netlist. Problems
// are reported on `diags`; returns false when any op could not be generated.
bool generateKernels(const netlist::Netlist& nl, const netlist::ValidationTarget& target, const Selection& selection,
                     DiagnosticEngine& diags, Generation& out);

// The manifest text (docs/artifacts.md, schemas/hlk-manifest.schema.json).
std::string manifestYaml(const Generation& g);

// 64-bit FNV-1a of the kernel's two files, as 16 hex digits.
std::string contentHash(const KernelText& text);

struct Net2HlksOptions {
  std::string input;   // the netlist
  std::string outDir;
  std::string arch;    // empty: the first arch the netlist lists
  std::string device;  // SoC descriptor file or bundled name; overrides arch
  std::string depfile;
  Selection selection;
  size_t maxErrors = 20;
  bool noWarnings = false;
};

// The tool: returns the exit code (0 generated, 1 invalid netlist or
// unsupported op or write failure, 2 usage error).
int runNet2Hlks(const Net2HlksOptions& options, std::ostream& out, std::ostream& err);

} // namespace tessera::hlk
