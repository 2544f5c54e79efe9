// Fused ops: the plan verifier, which replays a plan tile by tile and checks
// that every sub-op reads the tiles its schedule names (PlanCheck).
#include "hlk/fused.hpp"

#include "hlk/internal.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <sstream>

namespace tessera::hlk {

using namespace netlist;

namespace {

// A tile as the verifier labels it: the value (>= 0), op input N (-1 - N) or
// the partial sums of sub-op S (-1000 - S), and its row/col in that block.
struct Tile {
  int64_t tag = 0, row = 0, col = 0;
  friend bool operator==(const Tile&, const Tile&) = default;
};

std::string tileText(const Tile& t) {
  std::string what = t.tag >= 0 ? "value " + std::to_string(t.tag)
                     : t.tag > -1000 ? "input" + std::to_string(-1 - t.tag)
                                     : "partials of sub-op " + std::to_string(-1000 - t.tag);
  return what + " (" + std::to_string(t.row) + ", " + std::to_string(t.col) + ")";
}

class PlanVerifier {
public:
  explicit PlanVerifier(const FusedPlan& plan) : plan_(plan) {}

  PlanCheck run() {
    for (size_t in = 0; in < plan_.inputs.size(); ++in) {
      if (!plan_.inputs[in]) continue;
      const Layout& l = *plan_.inputs[in];
      std::vector<Tile> order(static_cast<size_t>(l.blockTiles()));
      for (int64_t r = 0; r < l.rowTiles(); ++r)
        for (int64_t c = 0; c < l.colTiles(); ++c)
          order[static_cast<size_t>(l.index(r, c))] = {-1 - static_cast<int64_t>(in), r, c};
      buf_[static_cast<int>(in)].assign(order.begin(), order.end());
    }
    for (size_t gi = 0; gi < plan_.groups.size() && why_.empty(); ++gi) {
      if (gi + 1 < plan_.groups.size() && plan_.groups[gi + 1].feed != GroupPlan::Feed::None) {
        fedPair(gi);
        ++gi;
      } else {
        group(gi);
      }
    }
    PlanCheck result;
    result.peaks = peak_;
    result.error = why_.empty() ? finalCheck() : why_;
    return result;
  }

private:
  std::string finalCheck() const {
    for (const auto& [operand, q] : buf_)
      if (!q.empty())
        return "operand " + std::to_string(operand) + " ends the t with " + std::to_string(q.size()) +
               " tile(s), first " + tileText(q.front());
    const Layout& o = plan_.output;
    if (static_cast<int64_t>(output_.size()) != o.blockTiles())
      return "the output gets " + std::to_string(output_.size()) + " tiles per t, not " + std::to_string(o.blockTiles());
    for (size_t k = 0; k < output_.size(); ++k)
      if (o.index(output_[k].first, output_[k].second) != static_cast<int64_t>(k))
        return "output tile " + std::to_string(k) + " is (" + std::to_string(output_[k].first) + ", " +
               std::to_string(output_[k].second) + "), out of the op's tile order";
    return "";
  }

  void fail(const std::string& s) {
    if (why_.empty()) why_ = s;
  }

  void push(int operand, Tile t) {
    auto& q = buf_[operand];
    q.push_back(t);
    peak_[operand] = std::max<int64_t>(peak_[operand], static_cast<int64_t>(q.size()));
  }

  // The kernel may read the first `waited_` tiles of an operand: those it
  // waited for and has not popped.
  void wait(int operand, int64_t tiles, const std::string& where) {
    if (static_cast<int64_t>(buf_[operand].size()) < tiles)
      return fail(where + ": waits for " + std::to_string(tiles) + " tiles of operand " + std::to_string(operand) +
                  " which only ever holds " + std::to_string(buf_[operand].size()) + " here (it would hang)");
    waited_[operand] = std::max(waited_[operand], tiles);
  }

  void pop(int operand, int64_t tiles, const std::string& where) {
    auto& q = buf_[operand];
    if (static_cast<int64_t>(q.size()) < tiles || waited_[operand] < tiles)
      return fail(where + ": pops " + std::to_string(tiles) + " tiles of operand " + std::to_string(operand) +
                  " it has not waited for");
    int64_t tag = q.front().tag;
    for (int64_t k = 0; k < tiles; ++k) {
      if (q.front().tag != tag) return fail(where + ": a pop of operand " + std::to_string(operand) + " spans two values");
      q.pop_front();
    }
    waited_[operand] -= tiles;
  }

  void read(const ReadPlan& r, int64_t row, int64_t col, int64_t d, const std::string& where) {
    if (r.kind == ReadPlan::Kind::Dest) return;
    const int64_t sr = r.rowsMod ? row % r.rowsMod : row, sc = r.colsMod ? col % r.colsMod : col;
    const int64_t index = r.kind == ReadPlan::Kind::Stream ? d : r.layout.index(sr, sc);
    Tile want = r.value >= 0 ? Tile{r.value, sr, sc} : Tile{-1 - static_cast<int64_t>(r.operand), sr, sc};
    expect(r, index, want, where);
  }

  // A read at an index the kernel computes itself (a fed matmul input).
  void readAt(const ReadPlan& r, int64_t row, int64_t col, int64_t index, const std::string& where) {
    expect(r, index, Tile{r.value, row, col}, where);
  }

  // Tile `index` of r's operand: waited for, and the one `want`.
  void expect(const ReadPlan& r, int64_t index, const Tile& want, const std::string& where) {
    const auto& q = buf_[r.operand];
    if (index < 0 || index >= waited_[r.operand])
      return fail(where + " reads " + r.name + " tile " + std::to_string(index) + " but waited for " +
                  std::to_string(waited_[r.operand]));
    if (!(q[static_cast<size_t>(index)] == want))
      fail(where + " reads " + r.name + " tile " + std::to_string(index) + " = " + tileText(q[static_cast<size_t>(index)]) +
           ", wants " + tileText(want));
  }

  void store(const SubOpPlan& s, int64_t row, int64_t col) {
    if (s.out == SubOpPlan::Out::Output) output_.push_back({row, col});
    else push(s.outOperand, {s.outValue, row, col});
  }

  std::pair<int64_t, int64_t> coords(Dim2 mb, int64_t ub) const {
    bool r = plan_.order == UblockOrder::R;
    return {r ? ub / mb.c : ub % mb.r, r ? ub % mb.c : ub / mb.r};
  }

  void group(size_t gi) {
    const GroupPlan& g = plan_.groups[gi];
    const std::string where = "group " + std::to_string(gi);
    for (const auto& c : g.waitAtStart) wait(c.operand, c.tiles, where);
    const size_t first = g.chains.front().subs.front();
    const SubOpPlan& s = plan_.subs[first];
    if (s.kind == SubOpPlan::Kind::Matmul) matmul(g, first, where);
    else if (s.kind == SubOpPlan::Kind::Reduce) reduce(s, where);
    else lockstep(g, where);
    for (const auto& c : g.popAtEnd) pop(c.operand, c.tiles, where);
  }

  void lockstep(const GroupPlan& g, const std::string& where) {
    for (int64_t ub = 0; ub < g.mblock.r * g.mblock.c && why_.empty(); ++ub) lockstepUblock(g, ub, where);
  }

  void lockstepUblock(const GroupPlan& g, int64_t ub, const std::string& where, size_t firstChain = 0) {
    auto [ubR, ubC] = coords(g.mblock, ub);
    for (size_t ci = firstChain; ci < g.chains.size(); ++ci) {
      const ChainPlan& c = g.chains[ci];
      for (const auto& w : c.waits) wait(w.operand, w.tiles, where);
      for (size_t i : c.subs)
        for (int64_t h = 0; h < g.ublock.r; ++h)
          for (int64_t w = 0; w < g.ublock.c; ++w)
            for (const ReadPlan& r : plan_.subs[i].inputs)
              read(r, ubR * g.ublock.r + h, ubC * g.ublock.c + w, h * g.ublock.c + w,
                   where + " sub-op " + quote(plan_.subs[i].name));
      for (const auto& p : c.pops) pop(p.operand, p.tiles, where);
      const SubOpPlan& last = plan_.subs[c.subs.back()];
      for (int64_t h = 0; h < g.ublock.r; ++h)
        for (int64_t w = 0; w < g.ublock.c; ++w) store(last, ubR * g.ublock.r + h, ubC * g.ublock.c + w);
    }
  }

  // A lockstep group and the matmul it feeds, interleaved (GroupPlan::feed).
  void fedPair(size_t gi) {
    const GroupPlan& g = plan_.groups[gi];
    const GroupPlan& m = plan_.groups[gi + 1];
    const size_t si = m.chains.front().subs.front();
    const SubOpPlan& s = plan_.subs[si];
    const std::string where = "groups " + std::to_string(gi) + "-" + std::to_string(gi + 1);
    for (const auto& c : g.waitAtStart) wait(c.operand, c.tiles, where);
    for (const auto& c : m.waitAtStart) wait(c.operand, c.tiles, where);
    for (int64_t row = 0; row < g.mblock.r && why_.empty(); ++row) {
      if (m.feed == GroupPlan::Feed::Rows) {
        for (int64_t i = 0; i < g.mblock.c; ++i) lockstepUblock(g, row * g.mblock.c + i, where);
        wait(m.feedOperand, m.feedTiles, where);
        for (int64_t c = 0; c < s.mblock.c; ++c) {
          matmulSteps(si, row, c, 0, s.mK, m.feed, where);
          lockstepUblock(m, row * s.mblock.c + c, where, 1);
        }
        pop(m.feedOperand, m.feedTiles, where);
      } else {
        for (int64_t kb = 0; kb < s.mK; ++kb) {
          lockstepUblock(g, row * g.mblock.c + kb, where);
          wait(m.feedOperand, m.feedTiles, where);
          matmulSteps(si, row, 0, kb, kb + 1, m.feed, where);
          pop(m.feedOperand, m.feedTiles, where);
          if (kb + 1 == s.mK) lockstepUblock(m, row, where, 1);
        }
      }
    }
    for (const auto& c : g.popAtEnd) pop(c.operand, c.tiles, where);
    for (const auto& c : m.popAtEnd) pop(c.operand, c.tiles, where);
  }

  // Output ublock by ublock, every m_k block of it (fused_render.cpp).
  void matmul(const GroupPlan& g, size_t si, const std::string& where) {
    const SubOpPlan& s = plan_.subs[si];
    for (int64_t ub = 0; ub < s.mblock.r * s.mblock.c && why_.empty(); ++ub) {
      auto [ubR, ubC] = coords(s.mblock, ub);
      matmulSteps(si, ubR, ubC, 0, s.mK, GroupPlan::Feed::None, where);
      lockstepUblock(g, ub, where, 1); // chains joined after the matmul
    }
  }

  // m_k blocks kb0..kb1-1 of output ublock (ubR, ubC); the last stores it. A
  // fed input 0 holds one row of ublocks (Rows) or the block's ublock (Ublocks).
  void matmulSteps(size_t si, int64_t ubR, int64_t ubC, int64_t kb0, int64_t kb1, GroupPlan::Feed feed,
                   const std::string& where) {
    const SubOpPlan& s = plan_.subs[si];
    const int64_t tag = -1000 - static_cast<int64_t>(si);
    const Layout rowLayout{1, {1, s.mK}, {s.ublock.r, s.uKt}, UblockOrder::R};
    for (int64_t kb = kb0; kb < kb1 && why_.empty(); ++kb) {
      if (kb > 0 && s.spill) {
        auto& q = buf_[plan_.spillOperand];
        for (int64_t h = 0; h < s.ublock.r; ++h)
          for (int64_t w = 0; w < s.ublock.c; ++w) {
            Tile want{tag, ubR * s.ublock.r + h, ubC * s.ublock.c + w};
            if (q.empty() || !(q.front() == want)) return fail(where + ": reloads the wrong partial sums");
            q.pop_front();
          }
      }
      for (int64_t k = 0; k < s.uKt; ++k)
        for (int64_t h = 0; h < s.ublock.r; ++h)
          for (int64_t w = 0; w < s.ublock.c; ++w) {
            const int64_t inner = kb * s.uKt + k, row = ubR * s.ublock.r + h;
            if (feed == GroupPlan::Feed::None) read(s.inputs[0], row, inner, -1, where);
            else readAt(s.inputs[0], row, inner, feed == GroupPlan::Feed::Rows ? rowLayout.index(h, inner) : h * s.uKt + k, where);
            read(s.inputs[1], inner, ubC * s.ublock.c + w, -1, where);
          }
      if (kb + 1 < s.mK && s.spill)
        for (int64_t h = 0; h < s.ublock.r; ++h)
          for (int64_t w = 0; w < s.ublock.c; ++w)
            push(plan_.spillOperand, {tag, ubR * s.ublock.r + h, ubC * s.ublock.c + w});
    }
    if (kb1 == s.mK)
      for (int64_t h = 0; h < s.ublock.r; ++h)
        for (int64_t w = 0; w < s.ublock.c; ++w) store(s, ubR * s.ublock.r + h, ubC * s.ublock.c + w);
  }

  void reduce(const SubOpPlan& s, const std::string& where) {
    const bool rows = s.reduceDim == contract::kReduceRows;
    const int64_t K = s.mK * s.uKt;
    for (int64_t ub = 0; ub < s.mblock.r * s.mblock.c && why_.empty(); ++ub) {
      auto [ubR, ubC] = coords(s.mblock, ub);
      for (int64_t x = 0; x < (rows ? s.ublock.c : s.ublock.r); ++x)
        for (int64_t k = 0; k < K; ++k)
          rows ? read(s.inputs[0], k, ubC * s.ublock.c + x, -1, where)
               : read(s.inputs[0], ubR * s.ublock.r + x, k, -1, where);
      for (int64_t h = 0; h < s.ublock.r; ++h)
        for (int64_t w = 0; w < s.ublock.c; ++w) store(s, ubR * s.ublock.r + h, ubC * s.ublock.c + w);
    }
  }

  const FusedPlan& plan_;
  std::map<int, std::deque<Tile>> buf_;
  std::map<int, int64_t> waited_;
  std::map<int, int64_t> peak_;
  std::vector<std::pair<int64_t, int64_t>> output_;
  std::string why_;
};

} // namespace

PlanCheck verifyFusedPlan(const FusedPlan& plan) { return PlanVerifier(plan).run(); }

} // namespace tessera::hlk
