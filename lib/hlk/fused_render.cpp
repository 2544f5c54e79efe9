// Fused ops: from a plan to the body of hlk_main (the C++ the kernel runs).
// The execution model is described in fused.hpp and docs/net2hlks.md.
#include "hlk/fused.hpp"

#include "hlk/internal.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace tessera::hlk {

using namespace netlist;

namespace {

std::string boolText(bool b) { return b ? "true" : "false"; }

class BodyWriter {
public:
  explicit BodyWriter(const FusedPlan& plan) : plan_(plan) {}

  std::string run() {
    size_t sched = SIZE_MAX;
    for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {
      const GroupPlan& g = plan_.groups[gi];
      const SubOpPlan& first = plan_.subs[g.chains.front().subs.front()];
      if (first.sched != sched) {
        sched = first.sched;
        line(1, "// ---- schedule " + std::to_string(sched));
      }
      if (gi + 1 < plan_.groups.size() && plan_.groups[gi + 1].feed != GroupPlan::Feed::None) {
        fedPair(gi);
        ++gi;
      } else {
        group(gi, g);
      }
    }
    return out_.str();
  }

private:
  void line(int indent, const std::string& text) {
    out_ << std::string(static_cast<size_t>(indent + base_) * 2 + 4, ' ') << text << "\n";
  }

  static std::string n(int64_t v) { return std::to_string(v); }

  static std::string describe(const SubOpPlan& s) {
    std::string ins;
    for (const ReadPlan& r : s.inputs) {
      ins += (ins.empty() ? "" : ", ") + r.name;
      if (r.rowsMod) ins += " (broadcast r)";
      if (r.colsMod) ins += " (broadcast c)";
      if (r.tileBcast == contract::kBcastRow) ins += " (tile_broadcast r)";
      if (r.tileBcast == contract::kBcastCol) ins += " (tile_broadcast c)";
    }
    return quote(s.name) + " " + s.type + "(" + ins + ") -> " + s.outName;
  }

  std::string orderR() const { return boolText(plan_.order == UblockOrder::R); }

  // Tile index of operand `r` for the tile at (rowExpr, colExpr) of the view.
  std::string index(const ReadPlan& r, const std::string& rowExpr, const std::string& colExpr,
                    const std::string& streamIndex) const {
    if (r.kind == ReadPlan::Kind::Stream) return streamIndex;
    std::string row = r.rowsMod ? "(" + rowExpr + ") % " + n(r.rowsMod) : rowExpr;
    std::string col = r.colsMod ? "(" + colExpr + ") % " + n(r.colsMod) : colExpr;
    const Layout& l = r.layout;
    return "tile_index<" + n(l.mblock.r) + ", " + n(l.mblock.c) + ", " + n(l.ublock.r) + ", " + n(l.ublock.c) + ", " +
           boolText(l.order == UblockOrder::R) + ">(" + row + ", " + col + ")";
  }

  void counts(int indent, const std::vector<TileCount>& list, const char* call) {
    for (const TileCount& c : list)
      line(indent, std::string(call) + "(" + n(c.operand) + ", " + n(c.tiles) + ");  // " + c.what);
  }

  void ublockCoords(int indent, Dim2 mb) {
    line(indent, "[[maybe_unused]] const int ubR = ublock_row<" + n(mb.r) + ", " + n(mb.c) + ", " + orderR() + ">(ub);");
    line(indent, "[[maybe_unused]] const int ubC = ublock_col<" + n(mb.r) + ", " + n(mb.c) + ", " + orderR() + ">(ub);");
  }

  void relu(int indent, const SubOpPlan& s, const std::string& d) {
    if (s.reluMode == 0) return;
    line(indent, std::string("hlk_sfpu(") + (s.reluMode == 2 ? "kSfpuReluMax" : "kSfpuReluMin") + ", " + d + ", " +
                     hex32(s.reluThresholdBits) + ");  // relu_en");
  }

  void pack(int indent, const SubOpPlan& s, int64_t tiles) {
    if (s.out == SubOpPlan::Out::Output)
      line(indent, "pack_output_ublock<" + n(s.ublock.r) + ", " + n(s.ublock.c) + ", " + n(s.mblock.r * s.mblock.c) +
                       ">(ub, ubR, ubC);");
    else
      line(indent, "pack_tiles(" + n(s.outOperand) + ", " + n(tiles) + ");  // " + s.outName);
  }

  void group(size_t gi, const GroupPlan& g) {
    const SubOpPlan& first = plan_.subs[g.chains.front().subs.front()];
    if (first.kind == SubOpPlan::Kind::Matmul) return matmul(gi, g, first);
    if (first.kind == SubOpPlan::Kind::Reduce) return reduce(gi, g, first);
    lockstep(gi, g);
  }

  void lockstepHeader(size_t gi, const GroupPlan& g) {
    line(1, "// group " + n(static_cast<int64_t>(gi)) + ": mblock " + dimText(g.mblock) + " x ublock " +
                dimText(g.ublock) + ", ublock by ublock");
    for (const ChainPlan& c : g.chains) {
      std::string text;
      for (size_t i : c.subs) text += (text.empty() ? "" : "; ") + describe(plan_.subs[i]);
      line(1, "//   " + text);
    }
  }

  // Chains joined after a matmul (same output block): a comment line each.
  void joinedHeader(const GroupPlan& g) {
    for (size_t ci = 1; ci < g.chains.size(); ++ci) {
      std::string text;
      for (size_t i : g.chains[ci].subs) text += (text.empty() ? "" : "; ") + describe(plan_.subs[i]);
      line(1, "//   then, on each output ublock: " + text);
    }
  }

  void joinedChains(const GroupPlan& g) {
    for (size_t ci = 1; ci < g.chains.size(); ++ci) chain(g, g.chains[ci]);
  }

  void lockstep(size_t gi, const GroupPlan& g) {
    lockstepHeader(gi, g);
    line(1, "{");
    counts(2, g.waitAtStart, "hlk_wait_tiles");
    line(2, "for (int ub = 0; ub < " + n(g.mblock.r * g.mblock.c) + "; ++ub) {");
    ublockCoords(3, g.mblock);
    for (const ChainPlan& c : g.chains) chain(g, c);
    line(2, "}");
    counts(2, g.popAtEnd, "hlk_pop_tiles");
    line(1, "}");
  }

  // A lockstep group and the matmul it feeds, interleaved (GroupPlan::feed).
  void fedPair(size_t gi) {
    const GroupPlan& g = plan_.groups[gi];
    const GroupPlan& m = plan_.groups[gi + 1];
    const SubOpPlan& s = plan_.subs[m.chains.front().subs.front()];
    const bool rows = m.feed == GroupPlan::Feed::Rows;
    lockstepHeader(gi, g);
    line(1, "// group " + n(static_cast<int64_t>(gi + 1)) + ": " + describe(s));
    line(1, "//   m_k " + n(s.mK) + ", u_kt " + n(s.uKt) + "; output mblock " + dimText(s.mblock) + " x ublock " +
                dimText(s.ublock));
    joinedHeader(m);
    line(1, "// interleaved: " +
                std::string(rows ? "a row of ublocks of group " : "a ublock of group ") + n(static_cast<int64_t>(gi)) +
                ", then the matmul on it (" + n(m.feedTiles) + " tiles of operand " + n(m.feedOperand) + ")");
    line(1, "{");
    counts(2, g.waitAtStart, "hlk_wait_tiles");
    counts(2, m.waitAtStart, "hlk_wait_tiles");
    line(2, "for (int ubRow = 0; ubRow < " + n(g.mblock.r) + "; ++ubRow) {");
    const std::string step = rows ? "this row" : "this ublock";
    const std::string feedWait =
        "hlk_wait_tiles(" + n(m.feedOperand) + ", " + n(m.feedTiles) + ");  // " + s.inputs[0].name + ": " + step;
    const std::string feedPop =
        "hlk_pop_tiles(" + n(m.feedOperand) + ", " + n(m.feedTiles) + ");  // " + s.inputs[0].name + ": done with " + step;
    if (rows) {
      line(3, "for (int i = 0; i < " + n(g.mblock.c) + "; ++i) {");
      line(4, "const int ub = ubRow * " + n(g.mblock.c) + " + i;");
      base_ = 1;
      ublockCoords(3, g.mblock);
      for (const ChainPlan& c : g.chains) chain(g, c);
      base_ = 0;
      line(3, "}");
      line(3, feedWait);
      line(3, "for (int j = 0; j < " + n(s.mblock.c) + "; ++j) {");
      line(4, "const int ub = ubRow * " + n(s.mblock.c) + " + j;");
      ublockCoords(4, s.mblock);
      matmulUblock(4, s, m.feed);
      base_ = 1;
      joinedChains(m);
      base_ = 0;
      line(3, "}");
      line(3, feedPop);
    } else {
      line(3, "for (int kb = 0; kb < " + n(s.mK) + "; ++kb) {");
      line(4, "{");
      line(5, "const int ub = ubRow * " + n(g.mblock.c) + " + kb;");
      base_ = 2;
      ublockCoords(3, g.mblock);
      for (const ChainPlan& c : g.chains) chain(g, c);
      base_ = 0;
      line(4, "}");
      line(4, feedWait);
      line(4, "{");
      line(5, "const int ub = ubRow;");
      ublockCoords(5, s.mblock);
      matmulStep(5, s, m.feed);
      line(4, "}");
      line(4, feedPop);
      if (m.chains.size() > 1) {
        line(4, "if (kb + 1 == " + n(s.mK) + ") {");
        line(5, "const int ub = ubRow;");
        ublockCoords(5, s.mblock);
        base_ = 2;
        joinedChains(m);
        base_ = 0;
        line(4, "}");
      }
      line(3, "}");
    }
    line(2, "}");
    counts(2, g.popAtEnd, "hlk_pop_tiles");
    counts(2, m.popAtEnd, "hlk_pop_tiles");
    line(1, "}");
  }

  void chain(const GroupPlan& g, const ChainPlan& c) {
    const int64_t U = g.ublock.r * g.ublock.c;
    counts(3, c.waits, "hlk_wait_tiles");
    line(3, "hlk_acquire_dst();");
    for (size_t i : c.subs) {
      const SubOpPlan& s = plan_.subs[i];
      bool copyFromDest = (s.kind == SubOpPlan::Kind::Copy) && s.inputs[0].kind == ReadPlan::Kind::Dest;
      line(3, "// " + describe(s));
      if (copyFromDest && s.reluMode == 0) {
        line(3, "// (the value stays in dest)");
        continue;
      }
      line(3, "for (int h = 0; h < " + n(g.ublock.r) + "; ++h) {");
      line(4, "for (int w = 0; w < " + n(g.ublock.c) + "; ++w) {");
      line(5, "const int d = h * " + n(g.ublock.c) + " + w;");
      line(5, "[[maybe_unused]] const int row = ubR * " + n(g.ublock.r) + " + h;");
      line(5, "[[maybe_unused]] const int col = ubC * " + n(g.ublock.c) + " + w;");
      auto idx = [&](size_t j) { return index(s.inputs[j], "row", "col", "d"); };
      switch (s.kind) {
      case SubOpPlan::Kind::Copy:
      case SubOpPlan::Kind::Sfpu:
        if (s.inputs[0].kind != ReadPlan::Kind::Dest)
          line(5, "hlk_copy_tile_to_dst(" + n(s.inputs[0].operand) + ", " + idx(0) + ", d);");
        if (s.kind == SubOpPlan::Kind::Sfpu)
          line(5, "hlk_sfpu(" + sfpuCode(s.func, s.approximate) + ", d, " + hex32(s.param) + ");");
        break;
      case SubOpPlan::Kind::Binary: {
        const ReadPlan& a = s.inputs[0];
        const ReadPlan& b = s.inputs[1];
        if (a.kind == ReadPlan::Kind::Dest)
          line(5, "hlk_binary_tile_dest_a(" + eltwiseCode(s.eltOp) + ", " + n(b.operand) + ", " + idx(1) + ", d, " +
                      bcastCode(b.tileBcast) + ");");
        else if (b.kind == ReadPlan::Kind::Dest)
          line(5, "hlk_binary_tile_dest_b(" + eltwiseCode(s.eltOp) + ", " + n(a.operand) + ", " + idx(0) + ", d);");
        else
          line(5, "hlk_binary_tile(" + eltwiseCode(s.eltOp) + ", " + n(a.operand) + ", " + n(b.operand) + ", " +
                      idx(0) + ", " + idx(1) + ", d, " + bcastCode(b.tileBcast) + ");");
        break;
      }
      case SubOpPlan::Kind::Quant: {
        // Plain float32 products (Float32 dest; HiFi4 for the multiply).
        const ReadPlan& a = s.inputs[0];
        const ReadPlan& b = s.inputs[1];
        const bool destA = a.kind == ReadPlan::Kind::Dest, destB = b.kind == ReadPlan::Kind::Dest;
        // The other operand: with dest read, the one that is not dest (the
        // scale, or for quantization either factor); else input 1.
        const ReadPlan& other = destA ? b : a;
        const std::string otherIdx = destA ? idx(1) : idx(0);
        if (s.dequant) {
          // (value - zero point) x scale; the value is dest when dest is read, else input 0.
          if (!destA && !destB) line(5, "hlk_copy_tile_to_dst(" + n(a.operand) + ", " + idx(0) + ", d);");
          line(5, "hlk_sfpu(kSfpuAddScalar, d, " + hex32(s.param) + ");  // - zero_point");
        }
        line(5, "if constexpr (kMathFidelity != kHiFi4) hlk_set_math_fidelity(kHiFi4);");
        if (destA || destB)
          line(5, "hlk_binary_tile_dest_a(kEltMul, " + n(other.operand) + ", " + otherIdx + ", d);");
        else if (s.dequant)
          line(5, "hlk_binary_tile_dest_a(kEltMul, " + n(b.operand) + ", " + idx(1) + ", d);");
        else
          line(5, "hlk_binary_tile(kEltMul, " + n(a.operand) + ", " + n(b.operand) + ", " + idx(0) + ", " + idx(1) +
                      ", d);");
        line(5, "if constexpr (kMathFidelity != kHiFi4) hlk_set_math_fidelity(kMathFidelity);");
        if (!s.dequant) line(5, "hlk_sfpu(kSfpuQuantInt8, d, " + hex32(s.param) + ");  // + zero_point, to Int8");
        break;
      }
      default: break;
      }
      relu(5, s, "d");
      line(4, "}");
      line(3, "}");
    }
    counts(3, c.pops, "hlk_pop_tiles");
    pack(3, plan_.subs[c.subs.back()], U);
    line(3, "hlk_release_dst();");
  }

  // Output ublock by ublock, the whole inner dimension each (BUDA's order):
  // the sum stays in dest over the m_k blocks, or, when the intermediate
  // format would round it (intermed_df other than dest's), goes through the
  // spill operand between blocks, one ublock at a time.
  void matmul(size_t gi, const GroupPlan& g, const SubOpPlan& s) {
    line(1, "// group " + n(static_cast<int64_t>(gi)) + ": " + describe(s));
    line(1, "//   m_k " + n(s.mK) + ", u_kt " + n(s.uKt) + "; output mblock " + dimText(s.mblock) + " x ublock " +
                dimText(s.ublock));
    joinedHeader(g);
    line(1, "{");
    counts(2, g.waitAtStart, "hlk_wait_tiles");
    line(2, "for (int ub = 0; ub < " + n(s.mblock.r * s.mblock.c) + "; ++ub) {");
    ublockCoords(3, s.mblock);
    matmulUblock(3, s, GroupPlan::Feed::None);
    joinedChains(g);
    line(2, "}");
    counts(2, g.popAtEnd, "hlk_pop_tiles");
    line(1, "}");
  }

  // The tile products of m_k block `kb` into dest, for output ublock (ubR, ubC).
  void matmulProducts(int indent, const SubOpPlan& s, GroupPlan::Feed feed) {
    line(indent, "for (int k = 0; k < " + n(s.uKt) + "; ++k) {");
    line(indent + 1, "const int inner = kb * " + n(s.uKt) + " + k;");
    line(indent + 1, "for (int h = 0; h < " + n(s.ublock.r) + "; ++h) {");
    line(indent + 2, "for (int w = 0; w < " + n(s.ublock.c) + "; ++w) {");
    // A fed input 0 holds one row of ublocks, or one ublock (GroupPlan::feed).
    const std::string in0 =
        feed == GroupPlan::Feed::None ? index(s.inputs[0], "ubR * " + n(s.ublock.r) + " + h", "inner", "")
        : feed == GroupPlan::Feed::Rows
            ? "tile_index<1, " + n(s.mK) + ", " + n(s.ublock.r) + ", " + n(s.uKt) + ", true>(h, inner)"
            : "h * " + n(s.uKt) + " + k";
    line(indent + 3, "hlk_mm_tile(" + n(s.inputs[0].operand) + ", " + n(s.inputs[1].operand) + ", " + in0 + ", " +
                         index(s.inputs[1], "inner", "ubC * " + n(s.ublock.c) + " + w", "") + ", h * " +
                         n(s.ublock.c) + " + w);");
    line(indent + 2, "}");
    line(indent + 1, "}");
    line(indent, "}");
  }

  void matmulFinish(int indent, const SubOpPlan& s) {
    const int64_t U = s.ublock.r * s.ublock.c;
    if (s.reluMode) {
      line(indent, "for (int d = 0; d < " + n(U) + "; ++d) {");
      relu(indent + 1, s, "d");
      line(indent, "}");
    }
    pack(indent, s, U);
  }

  // One output ublock over every m_k block.
  void matmulUblock(int indent, const SubOpPlan& s, GroupPlan::Feed feed) {
    const int64_t U = s.ublock.r * s.ublock.c;
    if (s.spill) {
      line(indent, "for (int kb = 0; kb < " + n(s.mK) + "; ++kb) {");
      matmulStep(indent + 1, s, feed);
      line(indent, "}");
      return;
    }
    line(indent, "hlk_acquire_dst();");
    line(indent, "for (int d = 0; d < " + n(U) + "; ++d) hlk_zero_dst(d);");
    line(indent, "for (int kb = 0; kb < " + n(s.mK) + "; ++kb) {");
    matmulProducts(indent + 1, s, feed);
    line(indent, "}");
    matmulFinish(indent, s);
    line(indent, "hlk_release_dst();");
  }

  // m_k block `kb` of one output ublock: zeros or the spilled partial sums
  // first, the partial sums spilled after (all but the last block).
  void matmulStep(int indent, const SubOpPlan& s, GroupPlan::Feed feed) {
    const int64_t U = s.ublock.r * s.ublock.c;
    line(indent, "hlk_acquire_dst();");
    if (s.spill) line(indent, "begin_sum<" + n(U) + ">(kb == 0, " + n(plan_.spillOperand) + ");");
    else line(indent, "for (int d = 0; d < " + n(U) + "; ++d) hlk_zero_dst(d);");
    matmulProducts(indent, s, feed);
    if (s.mK > 1) {
      line(indent, "if (kb + 1 < " + n(s.mK) + ") {");
      line(indent + 1, "pack_tiles(" + n(plan_.spillOperand) + ", " + n(U) + ");  // partial sums");
      line(indent, "} else {");
      matmulFinish(indent + 1, s);
      line(indent, "}");
    } else {
      matmulFinish(indent, s);
    }
    line(indent, "hlk_release_dst();");
  }

  void reduce(size_t gi, const GroupPlan& g, const SubOpPlan& s) {
    const bool rows = s.reduceDim == contract::kReduceRows;
    const int64_t K = s.mK * s.uKt;
    line(1, "// group " + n(static_cast<int64_t>(gi)) + ": " + describe(s));
    line(1, "//   reduce " + std::string(rows ? "r" : "c") + " over " + n(K) + " tiles; output mblock " +
                dimText(s.mblock) + " x ublock " + dimText(s.ublock));
    line(1, "{");
    counts(2, g.waitAtStart, "hlk_wait_tiles");
    line(2, "for (int ub = 0; ub < " + n(s.mblock.r * s.mblock.c) + "; ++ub) {");
    ublockCoords(3, s.mblock);
    line(3, "hlk_acquire_dst();");
    const std::string type = s.reduceType == contract::kReduceMax ? "kReduceMax" : "kReduceSum";
    if (rows) {
      line(3, "for (int w = 0; w < " + n(s.ublock.c) + "; ++w) {");
      line(4, "for (int k = 0; k < " + n(K) + "; ++k) {");
      line(5, "hlk_reduce_tile(" + type + ", kReduceRows, " + n(s.inputs[0].operand) + ", " +
                  index(s.inputs[0], "k", "ubC * " + n(s.ublock.c) + " + w", "") + ", w, " + hex32(s.reduceScaleBits) +
                  ", k != 0);");
    } else {
      line(3, "for (int h = 0; h < " + n(s.ublock.r) + "; ++h) {");
      line(4, "for (int k = 0; k < " + n(K) + "; ++k) {");
      line(5, "hlk_reduce_tile(" + type + ", kReduceCols, " + n(s.inputs[0].operand) + ", " +
                  index(s.inputs[0], "ubR * " + n(s.ublock.r) + " + h", "k", "") + ", h, " + hex32(s.reduceScaleBits) +
                  ", k != 0);");
    }
    line(4, "}");
    line(3, "}");
    if (s.reluMode) {
      line(3, "for (int d = 0; d < " + n(s.ublock.r * s.ublock.c) + "; ++d) {");
      relu(4, s, "d");
      line(3, "}");
    }
    pack(3, s, s.ublock.r * s.ublock.c);
    line(3, "hlk_release_dst();");
    line(2, "}");
    counts(2, g.popAtEnd, "hlk_pop_tiles");
    line(1, "}");
  }

  const FusedPlan& plan_;
  std::ostringstream out_;
  int base_ = 0; // extra indent of the lines written (a group nested in a fed pair)
};

} // namespace

std::string renderFusedBody(const FusedPlan& plan) { return BodyWriter(plan).run(); }

} // namespace tessera::hlk
