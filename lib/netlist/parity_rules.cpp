// Rules BUDA's own netlist parser enforces that the rest of the validator
// did not: kept together so the corpus' parity with that parser has one
// place (docs/netlist-rules.md, "Parity with BUDA's parser"). Sources in
// tenstorrent/tt-budabackend: netlist/netlist_parser.cpp (tile_dim on
// grayskull, transpose TMs), netlist/netlist_utils.cpp (parse_fused_op_info:
// duplicate sub-op names), netlist/netlist_parser.cpp verify_complex_settings
// (embedding num_indices); and one of its golden model, ops/mm_bare.cpp (the
// ublock rows a sparse encoding can name).
#include "netlist/text.hpp"
#include "netlist/validator.hpp"

#include <bit>
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

// sparse-ublock-bits: a sparse matmul's encoding names each ublock row of its
// mblock in sparse_ublock_idx_bits (absent or <= 0: sparse_tile_ptr_bits,
// absent: 0). BUDA's golden stops on fewer ("Not enough bits to store ublock
// index", ops/mm_bare.cpp) and its kernel (hlks/matmul/matmul_ident.cpp)
// masks the index to those bits, so rows it cannot name never compute. The
// older encoding's attributes (num_columns, indices_len, starting_row) are
// parsed upstream but read by neither.
void checkSparseUblockBits(const Netlist& nl, DiagnosticEngine& d) {
  for (const Graph& g : nl.graphs)
    for (const Op& op : g.ops) {
      const OpAttributes& a = op.attributes;
      const bool sparse = (op.type.value == "matmul" && a.identity.value) || op.type.value == "sparse_matmul";
      if (!sparse || !op.mblock.present()) continue;
      const bool own = a.sparseUblockIdxBits.present() && a.sparseUblockIdxBits.value > 0;
      const int64_t bits = own ? a.sparseUblockIdxBits.value : a.sparseTilePtrBits.present() ? a.sparseTilePtrBits.value : 0;
      if (bits < 0 || bits >= 16) continue; // out of range: the bit-width checks say so
      const int64_t rows = op.mblock.value.r;
      if ((int64_t{1} << bits) >= rows) continue;
      const std::string from = own ? "sparse_ublock_idx_bits " + std::to_string(bits)
                               : a.sparseTilePtrBits.present()
                                   ? "sparse_ublock_idx_bits (absent: sparse_tile_ptr_bits " + std::to_string(bits) + ")"
                                   : std::string("sparse_ublock_idx_bits (absent: sparse_tile_ptr_bits, absent: 0)");
      const SourceLoc at = own ? a.sparseUblockIdxBits.loc
                           : a.sparseTilePtrBits.present() ? a.sparseTilePtrBits.loc
                                                           : (a.loc.valid() ? a.loc : op.loc);
      const int64_t named = int64_t{1} << bits;
      auto diag = d.error("sparse-ublock-bits", at,
                           "op " + quote(op.name) + ": " + from + " can name " + std::to_string(named) + " ublock row" +
                               (named == 1 ? "" : "s") + " of the sparse encoding, but the mblock has " +
                               std::to_string(rows) + " (BUDA: \"Not enough bits to store ublock index\")");
      const int need = std::bit_width(static_cast<uint64_t>(rows - 1));
      diag.note(op.mblock.loc, "mblock rows: " + std::to_string(rows) + ", which need " + std::to_string(need) +
                                   (need == 1 ? " bit" : " bits"));
      for (const char* old : {"num_columns", "indices_len", "starting_row"})
        if (const Attribute* attr = a.find(old)) {
          diag.note(attr->loc, std::string(old) +
                                   " belongs to an older sparse encoding that BUDA no longer decodes; the current "
                                   "one takes sparse_tile_ptr_bits and sparse_ublock_idx_bits");
          break;
        }
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
  checkSparseUblockBits(netlist, diags);
}

} // namespace tessera::netlist
