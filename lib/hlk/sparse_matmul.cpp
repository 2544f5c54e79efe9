// Sparse matmul kernels: configuration (operands, tile orders, the encoding's
// bit fields) and the template (docs/net2hlks.md "Sparse matmul").
#include "hlk/sparse_matmul.hpp"

#include "hlk/internal.hpp"
#include "hlk/kernel_bodies.hpp"

#include <memory>
#include <sstream>

namespace tessera::hlk {

using namespace netlist;

namespace {

std::string n(int64_t v) { return std::to_string(v); }

// Bit width BUDA gives u_kt in a tile entry: that of u_kt - 1, at least 1.
int innerDBitsOf(int64_t uKt) {
  int bits = 1;
  while (((uKt - 1) >> bits) > 0) ++bits;
  return bits;
}

class SparseConfigurer {
public:
  SparseConfigurer(const Netlist& nl, const Op& op, KernelConfig k, DiagnosticEngine& diags)
      : nl_(nl), op_(op), k_(std::move(k)), diags_(diags) {}

  std::optional<KernelConfig> run() {
    const OpAttributes& a = op_.attributes;
    k_.family = Family::Matmul;
    auto plan = std::make_shared<SparseMatmulPlan>();
    SparseMatmulPlan& p = *plan;
    bool ok = true;

    // What the template does not do (BUDA's sparse matmul has them).
    if (a.bias.value) ok = unsupported(a.bias.loc, "bias");
    if (a.accumulate.value) ok = unsupported(a.accumulate.loc, "accumulate");
    if (a.fractureFactor.present() && a.fractureFactor.value != 1)
      ok = unsupported(a.fractureFactor.loc, "fracture_factor " + n(a.fractureFactor.value) + " (only 1)");
    for (const char* key : {"requant", "dequant"})
      if (const Attribute* q = a.find(key); q && q->value.is_boolean() && q->value.get<bool>())
        ok = unsupported(q->loc, std::string(key) + ": true");
    if (const Attribute* s = a.find("sfpu_op"); s && s->value.is_string() && s->value.get<std::string>() != "invalid")
      ok = unsupported(s->loc, "sfpu_op");
    if (!ok) return std::nullopt;
    if (op_.inputs.size() != 3)
      return unsupportedError(op_.inputsLoc, n(static_cast<int64_t>(op_.inputs.size())) +
                                            " inputs (expected 3: sparse tiles, activations, encoding)");
    // In-tile TMs: the unpacker transposes input 1's tiles (as for a dense
    // matmul); anything else acting inside tiles has no HLK call here.
    for (size_t i = 0; i < 3; ++i) {
      bool transpose = false;
      const Tm* transposeTm = nullptr;
      for (const Tm& tm : op_.inputs[i].tms) {
        if (tm.kind == TmKind::Transpose) {
          transpose = !transpose;
          transposeTm = &tm;
        } else if (tm.kind == TmKind::TileBroadcast) {
          ok = unsupported(tm.loc.valid() ? tm.loc : op_.inputs[i].tmsLoc, "tile_broadcast on input " + n(static_cast<int64_t>(i)));
        }
      }
      if (transpose && i != 1)
        ok = unsupported(transposeTm->loc.valid() ? transposeTm->loc : op_.inputs[i].tmsLoc,
                         "a transpose TM on input " + n(static_cast<int64_t>(i)));
      if (i == 1) p.transposeIn1 = transpose;
    }
    if (!ok) return std::nullopt;

    // The encoding's bit fields, with BUDA's defaults (as lib/golden).
    const SourceLoc attrLoc = a.loc.valid() ? a.loc : op_.type.loc;
    if (!a.uKt.present() || a.uKt.value < 1) return attribute(locOr(a.uKt, attrLoc), "needs u_kt >= 1");
    p.uKt = a.uKt.value;
    const int64_t ptrBits = a.sparseTilePtrBits.present() ? a.sparseTilePtrBits.value : 0;
    if (ptrBits < 0 || ptrBits > 15)
      return attribute(locOr(a.sparseTilePtrBits, attrLoc), "sparse_tile_ptr_bits must be in 0..15, got " + n(ptrBits));
    p.ptrBits = static_cast<int>(ptrBits);
    const bool ownUblockBits = a.sparseUblockIdxBits.present() && a.sparseUblockIdxBits.value > 0;
    if (ownUblockBits && a.sparseUblockIdxBits.value > 15)
      return attribute(a.sparseUblockIdxBits.loc,
                       "sparse_ublock_idx_bits must be below 16, got " + n(a.sparseUblockIdxBits.value));
    p.ublockIdxBits = ownUblockBits ? static_cast<int>(a.sparseUblockIdxBits.value) : p.ptrBits;
    p.innerDBits = innerDBitsOf(p.uKt);
    // A tile entry holds its ublock row and inner-d position in the bits the
    // tile pointer leaves; without room for the ublock's rows the kernel
    // could not decode it. (Too few ublock index bits for the mblock is left
    // to the data: the kernel decodes such encodings as the reference does,
    // and the reference refuses them.)
    const int rowBits = 16 - p.ptrBits - p.innerDBits;
    const Dim2 mb = op_.mblock.value, ub = op_.ublock.value, grid = op_.gridSize.value;
    if (rowBits < 0 || (int64_t{1} << rowBits) < ub.r)
      return attribute(locOr(a.sparseTilePtrBits, attrLoc),
                       "16 - sparse_tile_ptr_bits " + n(p.ptrBits) + " leaves " + n(16 - p.ptrBits) +
                           " bits for a tile entry's ublock row and inner-d position; u_kt " + n(p.uKt) +
                           " takes " + n(p.innerDBits) + ", ublock rows " + n(ub.r) + " need " +
                           n(innerDBitsOf(ub.r) - (ub.r == 1 ? 1 : 0)));

    // Dest holds one output ublock.
    const int64_t half = k_.common.destFormat == DataFormat::Float32 || k_.common.destFormat == DataFormat::Int32 ? 4 : 8;
    if (ub.r * ub.c > half)
      return unsupportedError(op_.ublock.loc, "a ublock of " + n(ub.r * ub.c) + " tiles (one dest half holds " + n(half) +
                                             " with dest format " + std::string(dataFormatName(k_.common.destFormat)) + ")");
    if (isIntegerFormat(k_.common.destFormat) || isIntegerFormat(op_.intermedDf.value))
      return unsupportedError(op_.type.loc, "an integer sparse matmul");

    // Shapes: inputs 0 and 2 split over the grid rows, input 1 over the grid
    // columns (lib/golden's split with fracture_factor 1).
    auto shape = [&](size_t i) { return inputShape(nl_, op_, i); };
    const auto s0 = shape(0), s1 = shape(1), s2 = shape(2);
    if (!s0 || !s1 || !s2) return unsupportedError(op_.inputsLoc, "an input of unknown shape");
    if (s0->r % grid.r != 0) return shapeError(0, *s0, "its tile rows do not split over the grid's " + n(grid.r) + " rows");
    if (s2->r % grid.r != 0) return shapeError(2, *s2, "its tile rows do not split over the grid's " + n(grid.r) + " rows");
    if (s1->c != grid.c * mb.c * ub.c)
      return shapeError(1, *s1, "the activations need the output's " + n(grid.c * mb.c * ub.c) + " tile columns");
    if (s1->r % p.uKt != 0) return shapeError(1, *s1, "its tile rows are not whole strips of u_kt " + n(p.uKt) + " rows");
    const Dim2 sCore{s0->r / grid.r, s0->c}, eCore{s2->r / grid.r, s2->c};
    p.sparseTiles = s0->t * sCore.r * sCore.c;
    p.indexTiles = s2->t * eCore.r * eCore.c;
    p.strips = s1->t * (s1->r / p.uKt);

    // Operands. Inputs 0 and 2: the core's tiles in tile order (t, row,
    // column), as the reference flattens them; input 1: per strip, a row of
    // ublocks [u_kt x ublock cols] (a dense matmul's input 1 with m_k = the
    // strips of one t).
    addInput(0, Layout{s0->t, {1, 1}, sCore, UblockOrder::R}, p.sparseTiles);
    addInput(1, Layout{s1->t, {s1->r / p.uKt, mb.c}, {p.uKt, ub.c}, UblockOrder::R}, p.uKt * mb.c * ub.c);
    addInput(2, Layout{s2->t, {1, 1}, eCore, UblockOrder::R}, 1);
    addOutput();
    // Partial sums between the strips of an output t, in the dest format so
    // that spilling loses nothing (the reference rounds only at the end).
    OperandInfo spill;
    spill.operand = contract::kFirstIntermediateOperand;
    spill.role = OperandRole::Spill;
    spill.df = k_.common.destFormat;
    spill.minTiles = mb.r * mb.c * ub.r * ub.c;
    k_.operands.push_back(spill);

    k_.sparse = plan;
    return k_;
  }

private:
  std::nullopt_t unsupportedError(SourceLoc loc, const std::string& what) {
    diags_.error("hlk-unsupported-feature", loc.valid() ? loc : op_.loc,
                 opText(op_) + " (sparse matmul): " + what + " is not supported by net2hlks yet");
    return std::nullopt;
  }
  bool unsupported(SourceLoc loc, const std::string& what) {
    unsupportedError(loc, what);
    return false;
  }
  std::nullopt_t attribute(SourceLoc loc, const std::string& what) {
    diags_.error("hlk-attribute", loc.valid() ? loc : op_.loc, opText(op_) + " (sparse matmul): " + what);
    return std::nullopt;
  }
  std::nullopt_t shapeError(size_t i, const TensorShape& s, const std::string& what) {
    diags_.error("hlk-unsupported-feature", op_.inputs[i].loc.valid() ? op_.inputs[i].loc : op_.inputsLoc,
                 opText(op_) + " (sparse matmul): input " + n(static_cast<int64_t>(i)) + " " + s.str() + ": " + what);
    return std::nullopt;
  }

  void addInput(size_t i, Layout layout, int64_t minTiles) { k_.operands.push_back(inputOperand(op_, i, layout, minTiles)); }
  void addOutput() { k_.operands.push_back(outputOperand(op_)); }

  const Netlist& nl_;
  const Op& op_;
  KernelConfig k_;
  DiagnosticEngine& diags_;
};

std::string field(const std::string& type, const std::string& name, const std::string& value, const std::string& comment) {
  std::string decl = "constexpr " + type + " " + name + " = " + value + ";";
  return decl + std::string(decl.size() < 52 ? 52 - decl.size() : 1, ' ') + "// " + comment + "\n";
}

} // namespace

std::optional<KernelConfig> configureSparseMatmul(const Netlist& nl, const Op& op, KernelConfig k, DiagnosticEngine& diags) {
  return SparseConfigurer(nl, op, std::move(k), diags).run();
}

std::string renderSparseMatmulArgs(const KernelConfig& k) {
  const SparseMatmulPlan& p = *k.sparse;
  std::string s = "\n// ---- sparse matmul (identity: true)\n";
  s += field("int", "kUKt", n(p.uKt), "u_kt: activation tile rows per strip");
  s += field("int", "kSparseTiles", n(p.sparseTiles), "input 0 tiles per entry");
  s += field("int", "kStrips", n(p.strips), "input 1 strips per entry");
  s += field("int", "kIn1BlockTiles", n(p.uKt * k.common.mblock.c * k.common.ublock.c), "input 1 tiles per strip");
  s += field("int", "kIndexTiles", n(p.indexTiles), "input 2 (encoding) tiles per entry");
  s += field("uint32_t", "kTileIndexBits", n(16 - p.ptrBits), "16 - sparse_tile_ptr_bits");
  s += field("uint32_t", "kUblockIdxBits", n(p.ublockIdxBits), "sparse_ublock_idx_bits");
  s += field("uint32_t", "kInnerDBits", n(p.innerDBits), "bits of u_kt - 1 (at least 1)");
  s += field("bool", "kTransposeIn1", p.transposeIn1 ? "true" : "false", "transpose TM on input 1");
  s += field("int", "kSpillOperand", n(contract::kFirstIntermediateOperand), "partial sums, in the dest format");
  return s;
}

std::string renderSparseMatmulBody() { return std::string(kernelBody("sparse_matmul")); }

} // namespace tessera::hlk
