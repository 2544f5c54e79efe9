// Rules BUDA's own netlist parser enforces that the rest of the validator
// did not: kept together so the corpus' parity with that parser has one
// place (docs/netlist-rules.md, "Parity with BUDA's parser"). Sources in
// tenstorrent/tt-budabackend: netlist/netlist_parser.cpp (tile_dim on
// grayskull, transpose TMs), netlist/netlist_utils.cpp (parse_fused_op_info:
// duplicate sub-op names), netlist/netlist_parser.cpp verify_complex_settings
// (embedding num_indices).
#include "netlist/text.hpp"
#include "netlist/validator.hpp"

#include <map>
#include <set>
#include <string>

namespace tessera::netlist {
namespace {

// BUDA's binary ops (netlist_utils::get_binary_op): the FPU eltwise three and
// the quantization family. maximum runs on the SFPU and may be transposed.
bool isBudaBinary(const std::string& type) {
  static const std::set<std::string> kTypes = {"add",          "subtract",       "multiply",
                                               "quantization", "dequantization", "requantization"};
  return kTypes.count(type) != 0;
}

// tile-dim-arch: grayskull has 32x32 tiles only ("Grayskull only supports
// 32x32 (default) tile sizes"), for queues and ops alike.
void checkGrayskullTiles(const Netlist& nl, DiagnosticEngine& d) {
  auto check = [&](const Field<Dim2>& td, const std::string& element) {
    if (td.present() && !(td.value == Dim2{32, 32}))
      d.error("tile-dim-arch", td.loc, element + ": tile_dim " + dimText(td.value) +
                                           " is not supported on grayskull, which has 32x32 tiles only");
  };
  for (const Queue& q : nl.queues) check(q.tileDim, "queue " + quote(q.name));
  for (const Graph& g : nl.graphs)
    for (const Op& op : g.ops) check(op.tileDim, "op " + quote(op.name));
}

// transpose-binary-input0: grayskull's unpacker cannot transpose input 0 of
// a binary op ("Transpose TM op on binary input 0 is not supported on GRAYSKULL").
void checkGrayskullTransposes(const Netlist& nl, DiagnosticEngine& d) {
  for (const Graph& g : nl.graphs)
    for (const Op& op : g.ops) {
      if (!isBudaBinary(op.type.value) || op.inputs.empty()) continue;
      for (const Tm& tm : op.inputs[0].tms)
        if (tm.kind == TmKind::Transpose)
          d.error("transpose-binary-input0", tm.loc,
                  "op " + quote(op.name) + ": a transpose TM on input 0 of binary op '" + op.type.value +
                      "' is not supported on grayskull (transpose input 1 instead, or use a wormhole_b0 target)")
              .note(op.inputs[0].loc, "input 0 is " + quote(op.inputs[0].name));
    }
}

// fused-duplicate-name: sub-op names are unique within a fused op, across
// all its schedules (BUDA keys its sub-op table by name).
void checkFusedNames(const Netlist& nl, DiagnosticEngine& d) {
  for (const FusedOp& f : nl.fusedOps) {
    std::map<std::string, SourceLoc> seen;
    for (const FusedSchedule& s : f.schedules)
      for (const FusedSubOp& sub : s.ops) {
        auto [it, fresh] = seen.emplace(sub.name, sub.loc);
        if (!fresh)
          d.error("fused-duplicate-name", sub.loc,
                  "fused op " + quote(f.id) + ": sub-op name " + quote(sub.name) +
                      " is used twice; sub-op names must be unique within a fused op")
              .note(it->second, "first used here");
      }
  }
}

// embedding-indices: an embedding gathers rows in whole tiles: num_indices is
// a multiple of 32, one tile row per mblock row (num_indices / 32 ==
// mblock[0]) and ublock rows 1 (tenstorrent/budabackend#1005).
void checkEmbeddings(const Netlist& nl, DiagnosticEngine& d) {
  for (const Graph& g : nl.graphs)
    for (const Op& op : g.ops) {
      if (op.type.value != "embedding") continue;
      const Field<int64_t>& n = op.attributes.numIndices;
      const std::string element = "op " + quote(op.name);
      SourceLoc at = n.present() ? n.loc : op.loc;
      int64_t indices = n.present() ? n.value : 0;
      if (indices % 32 != 0 || indices <= 0) {
        d.error("embedding-indices", at,
                element + ": an embedding's num_indices (" + (n.present() ? std::to_string(indices) : "absent") +
                    ") must be a positive multiple of 32 (the indices fill whole tile rows)");
        continue;
      }
      if (op.ublock.present() && op.ublock.value.r != 1)
        d.error("embedding-indices", op.ublock.loc,
                element + ": an embedding writes one tile row per index tile: ublock rows must be 1, got " +
                    std::to_string(op.ublock.value.r));
      else if (op.mblock.present() && op.mblock.value.r != indices / 32)
        d.error("embedding-indices", op.mblock.loc,
                element + ": mblock rows (" + std::to_string(op.mblock.value.r) + ") must be num_indices / 32 = " +
                    std::to_string(indices / 32));
    }
}

// topk-attributes: BUDA's topk needs k (a power of two: the bitonic network
// halves runs down to single positions), sort max or argmax (the values or
// their indices out) and two inputs, the values and their indices.
void checkTopks(const Netlist& nl, DiagnosticEngine& d) {
  for (const Graph& g : nl.graphs)
    for (const Op& op : g.ops) {
      if (op.type.value != "topk") continue;
      const std::string element = "op " + quote(op.name);
      const Field<int64_t>& k = op.attributes.k;
      if (!k.present() || k.value < 1 || (k.value & (k.value - 1)) != 0)
        d.error("topk-attributes", k.present() ? k.loc : op.loc,
                element + ": a topk's k (" + (k.present() ? std::to_string(k.value) : "absent") +
                    ") must be a power of two");
      const Field<std::string>& sort = op.attributes.sort;
      if (!sort.present() || (sort.value != "max" && sort.value != "argmax"))
        d.error("topk-attributes", sort.present() ? sort.loc : op.loc,
                element + ": a topk's sort (" + (sort.present() ? quote(sort.value) : std::string("absent")) +
                    ") must be max (values out) or argmax (indices out)");
      if (op.inputs.size() != 2)
        d.error("topk-attributes", op.inputsLoc,
                element + ": a topk takes 2 inputs (values, indices), got " + std::to_string(op.inputs.size()));
    }
}

} // namespace

void validateBudaParity(const Netlist& netlist, const ValidationTarget& target, DiagnosticEngine& diags) {
  if (target.arch == Arch::Grayskull) {
    checkGrayskullTiles(netlist, diags);
    checkGrayskullTransposes(netlist, diags);
  }
  checkFusedNames(netlist, diags);
  checkEmbeddings(netlist, diags);
  checkTopks(netlist, diags);
}

} // namespace tessera::netlist
