// Fused ops: from the schedules to a plan (chains, groups, how each operand
// is read, buffer capacities). The plan is rendered by fused_render.cpp and
// checked by fused_verify.cpp; the execution model is described in fused.hpp
// and docs/net2hlks.md.
//
// lib/netlist's validator has already enforced every constraint of
// seeds/net2hlks-fused-op-constraints.md (the `fused-*` rules); what is
// reported here (`hlk-fused-*`) is what this generator does not implement or
// needs beyond those rules.
#include "hlk/fused.hpp"

#include "hlk/internal.hpp"
#include "netlist/fused_buffer.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <sstream>

namespace tessera::hlk {

using namespace netlist;

namespace {

bool positive(Dim2 d) { return d.r > 0 && d.c > 0; }

constexpr int kIntermedBase = static_cast<int>(contract::kFirstIntermediateOperand);
constexpr int kOutputOperand = static_cast<int>(contract::kFirstOutputOperand);

class FusedPlanner {
public:
  FusedPlanner(const Netlist& nl, const Op& op, const FusedOp& fused, const ValidationTarget& target,
               DiagnosticEngine& diags, std::vector<OperandInfo>& operands)
      : nl_(nl), op_(op), fused_(fused), diags_(diags), operands_(operands) {
    (void)target; // the arch-dependent fused-op rules are the validator's
    plan_.id = fused.id;
    plan_.order = op.order();
    for (size_t s = 0; s < fused.schedules.size(); ++s)
      for (size_t p = 0; p < fused.schedules[s].ops.size(); ++p) subs_.push_back(&fused.schedules[s].ops[p]);
  }

  std::shared_ptr<const FusedPlan> run() {
    if (fused_.intermediates.value > 8) {
      diags_.error("hlk-fused-intermediates", fused_.intermediates.loc,
                   "fused op " + quote(fused_.id) + ": " + std::to_string(fused_.intermediates.value) +
                       " intermediate buffers, but kernels have operands 24-31 for at most 8")
          .note(op_.loc, opText(op_) + " uses fused op " + quote(fused_.id));
      return nullptr;
    }
    plan_.intermediates = static_cast<int>(std::max<int64_t>(fused_.intermediates.value, 0));
    size_t index = 0;
    for (size_t s = 0; s < fused_.schedules.size(); ++s)
      for (size_t p = 0; p < fused_.schedules[s].ops.size(); ++p) describeSubOp(index++, s, p);
    if (failed_) return nullptr;
    checkDestChains();
    if (failed_) return nullptr;
    traceValues();
    if (failed_) return nullptr;
    planInputs();
    if (failed_) return nullptr;
    checkOutputWriter();
    placeSpill();
    if (failed_) return nullptr;
    plan_.inputs = inputLayouts_;
    plan_.output = blockLayout(op_.mblock.value, op_.ublock.value);
    for (const Value& v : values_) plan_.values.push_back({v.operand, v.producer, v.layout});
    formGroups();
    finish();
    if (failed_) return nullptr;
    return std::make_shared<FusedPlan>(std::move(plan_));
  }

private:
  // ------------------------------------------------------------ reporting
  void report(const std::string& rule, size_t i, SourceLoc loc, const std::string& what,
              std::vector<DiagNote> notes = {}) {
    failed_ = true;
    const SubOpPlan& s = plan_.subs.size() > i ? plan_.subs[i] : SubOpPlan{};
    std::string name = s.name.empty() ? subs_[i]->name : s.name;
    size_t sched = plan_.subs.size() > i ? s.sched : schedOf(i);
    auto b = diags_.error(rule, loc.valid() ? loc : subs_[i]->loc,
                          "fused op " + quote(fused_.id) + " schedule " + std::to_string(sched) + " sub-op " +
                              quote(name) + ": " + what);
    for (DiagNote& n : notes) b.note(n.loc, std::move(n.message));
    b.note(op_.loc, opText(op_) + " uses fused op " + quote(fused_.id));
  }
  void unsupported(size_t i, SourceLoc loc, const std::string& what, std::vector<DiagNote> notes = {}) {
    report("hlk-fused-unsupported", i, loc, what + " is not supported by net2hlks yet", std::move(notes));
  }
  size_t schedOf(size_t i) const {
    size_t n = 0;
    for (size_t s = 0; s < fused_.schedules.size(); ++s) {
      n += fused_.schedules[s].ops.size();
      if (i < n) return s;
    }
    return 0;
  }
  DiagNote subNote(size_t i, const std::string& what) const {
    return {subs_[i]->loc, "sub-op " + quote(subs_[i]->name) + " " + what};
  }

  // ------------------------------------------------------------ sub-ops
  void describeSubOp(size_t i, size_t sched, size_t pos) {
    const FusedSubOp& s = *subs_[i];
    SubOpPlan p;
    p.name = s.name;
    p.type = s.type.value;
    p.sched = sched;
    p.pos = pos;
    p.mblock = s.mblock.value;
    p.ublock = s.ublock.value;
    plan_.subs.push_back(p);
    SubOpPlan& sp = plan_.subs.back();
    const std::string& type = s.type.value;
    const SourceLoc typeLoc = locOr(s.type, s.loc);
    size_t wantInputs = 1;
    if (isCopyType(type)) {
      sp.kind = SubOpPlan::Kind::Copy;
    } else if (type == "dropout") {
      // The reference model only models p = 0, which keeps every value.
      if (const Attribute* p = s.attributes.find("p"); p && p->value.is_number() && p->value.get<double>() != 0.0)
        return unsupported(i, p->loc, "dropout with p = " + p->value.dump() +
                                          " (random; only p = 0, the identity, is modelled)");
      sp.kind = SubOpPlan::Kind::Copy;
    } else if (type == "quantization" || type == "requantization" || type == "dequantization") {
      sp.kind = SubOpPlan::Kind::Quant;
      sp.dequant = type == "dequantization";
      wantInputs = 2;
      // Corpus sub-ops write zero_point next to type, not under attributes.
      double zp = s.attributes.zeroPoint.present() ? s.attributes.zeroPoint.value : 0.0;
      if (!s.attributes.zeroPoint.present())
        for (const ExtraField& e : s.extra)
          if (e.key == "zero_point" && e.value.is_number()) zp = e.value.get<double>();
      sp.param = floatBits(sp.dequant ? -zp : zp);
    } else if (auto f = sfpuFuncOf(type)) {
      sp.kind = SubOpPlan::Kind::Sfpu;
      sp.func = *f;
      std::string why;
      auto param = sfpuParam(*f, s.attributes, why);
      if (!param) return report("hlk-attribute", i, typeLoc, why);
      sp.param = *param;
      // approximate_mode: the sub-op's, else the graph op's (as the golden model reads it).
      const auto& am = s.attributes.approximateMode.present() ? s.attributes.approximateMode : op_.attributes.approximateMode;
      sp.approximate = am.present() && am.value;
    } else if (auto e = eltwiseOpOf(type)) {
      sp.kind = SubOpPlan::Kind::Binary;
      sp.eltOp = *e;
      wantInputs = 2;
    } else if (type == "matmul") {
      sp.kind = SubOpPlan::Kind::Matmul;
      wantInputs = 2;
      const OpAttributes& a = s.attributes;
      for (const char* key : {"bias", "accumulate", "requant", "dequant"})
        if (const Attribute* q = a.find(key); q && q->value.is_boolean() && q->value.get<bool>())
          return unsupported(i, q->loc, "a matmul sub-op with " + std::string(key) + ": true");
      if (const Attribute* q = a.find("sfpu_op"); q && q->value.is_string() && q->value.get<std::string>() != "invalid")
        return unsupported(i, q->loc, "a matmul sub-op with sfpu_op");
      if (!a.mK.present() || !a.uKt.present() || a.mK.value < 1 || a.uKt.value < 1)
        return unsupported(i, typeLoc, "a matmul sub-op without m_k and u_kt");
      sp.mK = a.mK.value;
      sp.uKt = a.uKt.value;
    } else if (type == "reduce") {
      sp.kind = SubOpPlan::Kind::Reduce;
      const OpAttributes& a = s.attributes;
      const std::string& dim = a.reduceDim.value;
      if (dim != "r" && dim != "c") return unsupported(i, locOr(a.reduceDim, typeLoc), "reduce over " + quote(dim) + " in a fused op");
      sp.reduceDim = dim == "r" ? contract::kReduceRows : contract::kReduceCols;
      const std::string& rt = a.reduceType.value;
      if (rt != "sum" && rt != "max" && rt != "avg")
        return report("hlk-attribute", i, locOr(a.reduceType, typeLoc), "reduce needs type sum, max or avg");
      sp.reduceType = rt == "max" ? contract::kReduceMax : contract::kReduceSum;
      if (a.mK.present() && a.uKt.present() && a.mK.value > 0 && a.uKt.value > 0) {
        sp.mK = a.mK.value;
        sp.uKt = a.uKt.value;
      } else {
        sp.mK = 0; // derived from the input's shape in planInputs/traceValues
        sp.uKt = 1;
      }
    } else {
      return unsupported(i, typeLoc, "sub-op type " + quote(type));
    }
    if (s.t.present() && op_.t.present() && s.t.value != op_.t.value)
      return unsupported(i, s.t.loc, "t " + std::to_string(s.t.value) + " on a sub-op of an op with t " +
                                         std::to_string(op_.t.value) + " (sub-ops run once per t of the op)");
    if (!positive(sp.mblock) || !positive(sp.ublock))
      return report("hlk-fused-dims", i, s.loc, "needs positive mblock and ublock");
    if (s.inputs.size() != wantInputs)
      return report("hlk-fused-dims", i, s.inputsLoc,
                    type + " takes " + std::to_string(wantInputs) + " input(s), got " + std::to_string(s.inputs.size()));
    reluOf(s.attributes, sp.reluMode, sp.reluThresholdBits);

    // Operands and their TMs.
    int destReads = 0;
    for (size_t j = 0; j < s.inputs.size(); ++j) {
      const Operand& in = s.inputs[j];
      ReadPlan r;
      r.name = in.name;
      BufName b = parseBufName(in.name);
      if (b.kind == BufKind::Dest) {
        r.kind = ReadPlan::Kind::Dest;
        ++destReads;
        if (!in.tms.empty()) return unsupported(i, in.tmsLoc, "a TM on dest");
      } else if (b.kind == BufKind::Intermed) {
        r.kind = ReadPlan::Kind::Random;
        r.operand = kIntermedBase + static_cast<int>(b.index);
      } else if (b.kind == BufKind::Input) {
        r.kind = ReadPlan::Kind::Random; // may become Stream in planInputs
        r.operand = static_cast<int>(b.index);
      } else {
        return report("hlk-fused-dims", i, in.loc, "invalid input " + quote(in.name));
      }
      for (const Tm& tm : in.tms) {
        if (tm.kind == TmKind::Broadcast && (tm.dim == 'r' || tm.dim == 'c')) {
          if (b.kind != BufKind::Intermed)
            return unsupported(i, tm.loc, "a broadcast of " + in.name + " (only intermediates are broadcast)");
          (tm.dim == 'r' ? r.rowsMod : r.colsMod) = -1; // resolved from the producer's block in traceValues
        } else if (tm.kind == TmKind::TileBroadcast) {
          r.tileBcast = tm.dim == 'c' ? contract::kBcastCol : contract::kBcastRow;
        } else {
          return unsupported(i, tm.loc, "TM " + quote(std::string(tmKindName(tm.kind))) + " inside a fused op");
        }
      }
      if (r.tileBcast != contract::kBcastNone && (sp.kind != SubOpPlan::Kind::Binary || j != 1))
        return unsupported(i, in.tmsLoc, "tile_broadcast on input " + std::to_string(j) + " of a " + type + " sub-op");
      sp.inputs.push_back(r);
    }
    if (destReads > 1) return unsupported(i, s.inputsLoc, "reading dest twice in one sub-op");
    if (sp.kind == SubOpPlan::Kind::Binary && sp.inputs[1].kind == ReadPlan::Kind::Dest &&
        sp.inputs[0].kind == ReadPlan::Kind::Dest)
      return unsupported(i, s.inputsLoc, "reading dest twice in one sub-op");

    BufName out = parseBufName(s.output.value);
    sp.outName = s.output.value;
    if (out.kind == BufKind::Dest) {
      sp.out = SubOpPlan::Out::Dest;
    } else if (out.kind == BufKind::Intermed) {
      sp.out = SubOpPlan::Out::Intermed;
      sp.outOperand = kIntermedBase + static_cast<int>(out.index);
    } else if (out.kind == BufKind::Output) {
      sp.out = SubOpPlan::Out::Output;
      sp.outOperand = kOutputOperand;
    } else {
      return report("hlk-fused-dims", i, locOr(s.output, s.loc), "invalid output " + quote(s.output.value));
    }
  }

  // A dest value is read by the very next sub-op of the same schedule, which
  // writes the same block: the two run on the same ublock in dest.
  void checkDestChains() {
    const auto& subs = plan_.subs;
    for (size_t i = 0; i < subs.size(); ++i) {
      bool readsDest = false;
      for (const ReadPlan& r : subs[i].inputs) readsDest |= r.kind == ReadPlan::Kind::Dest;
      bool prevWritesDest = i > 0 && subs[i - 1].sched == subs[i].sched && subs[i - 1].out == SubOpPlan::Out::Dest;
      if (readsDest && !prevWritesDest)
        report("hlk-fused-dest-chain", i, subs_[i]->inputsLoc,
               "reads dest, but the sub-op before it in the schedule does not write dest");
      else if (readsDest && (subs[i - 1].mblock != subs[i].mblock || subs[i - 1].ublock != subs[i].ublock))
        report("hlk-fused-dest-chain", i, locOr(subs_[i]->mblock, subs_[i]->loc),
               "reads dest written as mblock " + dimText(subs[i - 1].mblock) + " x ublock " +
                   dimText(subs[i - 1].ublock) + " but writes mblock " + dimText(subs[i].mblock) + " x ublock " +
                   dimText(subs[i].ublock) + ": a dest chain works on one ublock at a time",
               {subNote(i - 1, "writes dest")});
      if (subs[i].out == SubOpPlan::Out::Dest) {
        bool nextReads = false;
        if (i + 1 < subs.size() && subs[i + 1].sched == subs[i].sched)
          for (const ReadPlan& r : subs[i + 1].inputs) nextReads |= r.kind == ReadPlan::Kind::Dest;
        if (!nextReads)
          report("hlk-fused-dest-chain", i, locOr(subs_[i]->output, subs_[i]->loc),
                 "writes dest, but the next sub-op of the schedule does not read it (the value would be lost)");
      }
    }
  }

  // ------------------------------------------------------------ values
  // Each write of an intermediate buffer is a value; reads resolve to the
  // value the buffer holds at that point (the validator guarantees one).
  struct Value {
    size_t producer = 0;
    int operand = 0;
    Layout layout;
    std::vector<size_t> readers; // each once, in order
    int popper = -1;
  };

  Layout blockLayout(Dim2 mb, Dim2 ub) const { return Layout{op_.t.value, mb, ub, op_.order()}; }

  void traceValues() {
    std::map<int, int> current; // operand -> value index
    auto& subs = plan_.subs;
    for (size_t i = 0; i < subs.size(); ++i) {
      SubOpPlan& sp = subs[i];
      for (size_t j = 0; j < sp.inputs.size(); ++j) {
        ReadPlan& r = sp.inputs[j];
        if (r.kind == ReadPlan::Kind::Dest || r.operand < kIntermedBase) continue;
        auto it = current.find(r.operand);
        if (it == current.end()) {
          report("hlk-fused-dims", i, subs_[i]->inputs[j].loc, r.name + " holds no value here");
          return;
        }
        Value& v = values_[it->second];
        r.value = it->second;
        if (v.readers.empty() || v.readers.back() != i) v.readers.push_back(i);
        r.layout = v.layout;
        if (r.rowsMod < 0) r.rowsMod = v.layout.rowTiles();
        if (r.colsMod < 0) r.colsMod = v.layout.colTiles();
      }
      for (const auto* list : {&subs_[i]->pop, &subs_[i]->popLast})
        for (const Field<std::string>& p : *list) {
          BufName b = parseBufName(p.value);
          if (b.kind != BufKind::Intermed) continue; // pops of inputs: the kernel pops inputs after their last reader
          int operand = kIntermedBase + static_cast<int>(b.index);
          auto it = current.find(operand);
          if (it == current.end()) continue;
          values_[it->second].popper = static_cast<int>(i);
          current.erase(it);
        }
      if (sp.out == SubOpPlan::Out::Intermed) {
        Value v;
        v.producer = i;
        v.operand = sp.outOperand;
        v.layout = blockLayout(sp.mblock, sp.ublock);
        current[sp.outOperand] = static_cast<int>(values_.size());
        sp.outValue = static_cast<int>(values_.size());
        values_.push_back(v);
      }
    }
    for (const Value& v : values_)
      if (v.popper < 0)
        report("hlk-fused-dims", v.producer, locOr(subs_[v.producer]->output, subs_[v.producer]->loc),
               "writes " + plan_.subs[v.producer].outName + " which is never popped");
    // A reduce without m_k/u_kt reduces the whole extent of what it reads.
    for (size_t i = 0; i < subs.size(); ++i) {
      SubOpPlan& sp = subs[i];
      if (sp.kind != SubOpPlan::Kind::Reduce || sp.mK != 0) continue;
      const ReadPlan& r = sp.inputs[0];
      if (r.operand >= kIntermedBase) {
        sp.mK = sp.reduceDim == contract::kReduceRows ? r.layout.rowTiles() : r.layout.colTiles();
      } else if (auto per = perCoreInput(static_cast<size_t>(r.operand))) {
        sp.mK = sp.reduceDim == contract::kReduceRows ? per->r : per->c;
      } else {
        unsupported(i, subs_[i]->loc, "a reduce without m_k/u_kt on an input of unknown shape");
      }
    }
    for (SubOpPlan& sp : subs)
      if (sp.kind == SubOpPlan::Kind::Reduce) {
        const double extent = static_cast<double>(sp.mK * sp.uKt) * 32.0;
        sp.reduceScaleBits = subs_[&sp - &subs[0]]->attributes.reduceType.value == "avg" ? floatBits(1.0 / extent)
                                                                                        : floatBits(1.0);
      }
  }

  // Per-core tiles of op input i: the tensor (after the op-level TMs) split
  // over the grid; {t, rows, cols}.
  std::optional<TensorShape> perCoreInput(size_t i) const {
    auto s = inputShape(nl_, op_, i);
    if (!s) return std::nullopt;
    Dim2 g = op_.gridSize.value;
    if (g.r < 1 || g.c < 1) return std::nullopt;
    return TensorShape{s->t, s->r / g.r, s->c / g.c};
  }

  // The tile order sub-op i needs for input j when it comes from an op input.
  Layout inputLayoutFor(size_t i, size_t j) const {
    const SubOpPlan& s = plan_.subs[i];
    const Dim2 mb = s.mblock, ub = s.ublock;
    // Matmul input 1 comes column of ublocks by column (ublock order c), as
    // BUDA's net2pipe sends it to a fused op (its kernel takes one output
    // ublock column's share at a time); with one ublock column both orders agree.
    if (s.kind == SubOpPlan::Kind::Matmul)
      return j == 0 ? blockLayout({mb.r, s.mK}, {ub.r, s.uKt})
                    : Layout{op_.t.value, {s.mK, mb.c}, {s.uKt, ub.c}, UblockOrder::C};
    if (s.kind == SubOpPlan::Kind::Reduce)
      return s.reduceDim == contract::kReduceRows ? blockLayout({s.mK, mb.c}, {s.uKt, ub.c})
                                                  : blockLayout({mb.r, s.mK}, {ub.r, s.uKt});
    return blockLayout(mb, ub);
  }

  // Two blockings of the same tiles that stream them in the same order
  // (e.g. mblock [2, 1] x ublock [1, 8] and mblock [2, 2] x ublock [1, 4] in order r).
  static bool sameTileOrder(const Layout& a, const Layout& b) {
    if (a == b) return true;
    if (a.t != b.t || a.rowTiles() != b.rowTiles() || a.colTiles() != b.colTiles()) return false;
    for (int64_t r = 0; r < a.rowTiles(); ++r)
      for (int64_t c = 0; c < a.colTiles(); ++c)
        if (a.index(r, c) != b.index(r, c)) return false;
    return true;
  }

  static std::string layoutText(const Layout& l) {
    return "mblock " + dimText(l.mblock) + " x ublock " + dimText(l.ublock) + " (" + std::to_string(l.rowTiles()) +
           "x" + std::to_string(l.colTiles()) + " tiles)";
  }

  void planInputs() {
    const size_t n = op_.inputs.size();
    inputLayouts_.assign(n, std::nullopt);
    inputReaders_.assign(n, {});
    auto& subs = plan_.subs;
    for (size_t i = 0; i < subs.size(); ++i)
      for (size_t j = 0; j < subs[i].inputs.size(); ++j) {
        ReadPlan& r = subs[i].inputs[j];
        if (r.kind == ReadPlan::Kind::Dest || r.operand >= kIntermedBase) continue;
        size_t in = static_cast<size_t>(r.operand);
        if (in >= n) {
          report("hlk-fused-dims", i, subs_[i]->inputs[j].loc, r.name + " but the op has " + std::to_string(n) + " input(s)");
          continue;
        }
        Layout want = inputLayoutFor(i, j);
        if (!inputLayouts_[in]) {
          inputLayouts_[in] = want;
          // The pipe delivers the op's input split over its grid; the reader
          // must take exactly that many tiles. (Matmul input 1 and the inner
          // dimension of input 0 are not split: every core gets them whole.)
          if (auto per = perCoreInput(in)) {
            const SubOpPlan& s = subs[i];
            bool matmul = s.kind == SubOpPlan::Kind::Matmul;
            auto full = inputShape(nl_, op_, in);
            int64_t rows = matmul && j == 1 ? full->r : per->r;
            int64_t cols = matmul ? (j == 0 ? full->c : per->c) : per->c;
            if (per->t != op_.t.value || rows != want.rowTiles() || cols != want.colTiles())
              report("hlk-fused-input-shape", i, subs_[i]->inputs[j].loc,
                     "reads " + r.name + " as t " + std::to_string(op_.t.value) + ", " + layoutText(want) +
                         " per core, but op input " + std::to_string(in) + " " + quote(op_.inputs[in].name) +
                         " brings t " + std::to_string(per->t) + ", " + std::to_string(rows) + "x" +
                         std::to_string(cols) + " tiles per core");
          }
        } else if (!sameTileOrder(*inputLayouts_[in], want)) {
          size_t first = inputReaders_[in].front();
          report("hlk-fused-input-layout", i, subs_[i]->inputs[j].loc,
                 "reads " + r.name + " as " + layoutText(want) + " but sub-op " + quote(subs[first].name) +
                     " reads it as " + layoutText(*inputLayouts_[in]) +
                     ": an input reaches the kernel in one tile order",
                 {subNote(first, "reads " + r.name)});
        }
        r.layout = *inputLayouts_[in];
        if (inputReaders_[in].empty() || inputReaders_[in].back() != i) inputReaders_[in].push_back(i);
      }
    for (size_t in = 0; in < n; ++in)
      if (inputReaders_[in].empty()) {
        failed_ = true;
        diags_.error("hlk-fused-unused-input", op_.inputs[in].loc,
                     opText(op_) + ": input " + std::to_string(in) + " " + quote(op_.inputs[in].name) +
                         " is read by no sub-op of fused op " + quote(fused_.id) +
                         " (its tiles would never be popped); not supported by net2hlks yet");
      }
  }

  // ------------------------------------------------------------ chains and groups
  bool isEltwise(size_t i) const {
    auto k = plan_.subs[i].kind;
    return k != SubOpPlan::Kind::Matmul && k != SubOpPlan::Kind::Reduce;
  }

  // Chains: runs of sub-ops linked through dest; matmul and reduce alone.
  void formChains() {
    const auto& subs = plan_.subs;
    for (size_t i = 0; i < subs.size(); ++i) {
      bool continues = i > 0 && subs[i - 1].out == SubOpPlan::Out::Dest && subs[i - 1].sched == subs[i].sched;
      if (!continues) chains_.push_back({});
      chains_.back().push_back(i);
    }
  }

  // Groups: consecutive element-wise chains of a schedule that write the same
  // block run in lockstep, ublock by ublock, when the tile-level check of the
  // whole plan accepts it (values they pass stream through one ublock of
  // their buffer); anything else runs as a group of its own.
  void formGroups() {
    formChains();
    std::vector<std::vector<size_t>> grouping;
    for (size_t c = 0; c < chains_.size(); ++c) {
      if (!grouping.empty() && canJoin(grouping.back(), c)) {
        auto trial = grouping;
        trial.back().push_back(c);
        for (size_t r = c + 1; r < chains_.size(); ++r) trial.push_back({r});
        buildGroups(trial);
        if (verifyFusedPlan(plan_).error.empty()) {
          grouping.back().push_back(c);
          continue;
        }
      }
      grouping.push_back({c});
    }
    buildGroups(grouping);
    interleaveFeeds();
  }

  bool canJoin(const std::vector<size_t>& group, size_t c) const {
    size_t a = chains_[group.front()].front(), b = chains_[c].front();
    const SubOpPlan& x = plan_.subs[a];
    const SubOpPlan& y = plan_.subs[b];
    if (!isEltwise(b) || x.mblock != y.mblock || x.ublock != y.ublock) return false;
    // Chains after a matmul that write its output block run with it, output
    // ublock by output ublock, whatever their schedule: what it passes them
    // then streams through one ublock (BUDA's size for a matmul's output).
    if (plan_.subs[a].kind == SubOpPlan::Kind::Matmul) return chains_[group.front()].size() == 1;
    return isEltwise(a) && x.sched == y.sched;
  }

  // Lays the grouping out as GroupPlans: which reads stream (one ublock at
  // the front of the buffer) and which read a whole value, and where the
  // waits and pops go.
  void buildGroups(const std::vector<std::vector<size_t>>& grouping) {
    auto& subs = plan_.subs;
    plan_.groups.clear();
    groupOf_.assign(subs.size(), 0);
    chainOf_.assign(subs.size(), 0);
    for (const auto& chainList : grouping) {
      GroupPlan g;
      const SubOpPlan& first = subs[chains_[chainList.front()].front()];
      g.mblock = first.mblock;
      g.ublock = first.ublock;
      for (size_t c : chainList) {
        ChainPlan cp;
        cp.subs = chains_[c];
        for (size_t i : cp.subs) {
          groupOf_[i] = plan_.groups.size();
          chainOf_[i] = g.chains.size();
        }
        g.chains.push_back(std::move(cp));
      }
      plan_.groups.push_back(std::move(g));
    }
    for (SubOpPlan& s : subs)
      for (ReadPlan& r : s.inputs)
        if (r.kind != ReadPlan::Kind::Dest) r.kind = ReadPlan::Kind::Random;
    // Ublock by ublock: element-wise chains, or a matmul with chains after it.
    auto isChainGroup = [&](size_t g) {
      return isEltwise(plan_.groups[g].chains.front().subs.front()) || plan_.groups[g].chains.size() > 1;
    };
    auto chainAt = [&](size_t i) -> ChainPlan& { return plan_.groups[groupOf_[i]].chains[chainOf_[i]]; };
    auto addOnce = [](std::vector<TileCount>& list, TileCount c) {
      for (const TileCount& x : list)
        if (x.operand == c.operand) return;
      list.push_back(std::move(c));
    };

    // Intermediate values.
    for (size_t vi = 0; vi < values_.size(); ++vi) {
      const Value& v = values_[vi];
      const size_t g = groupOf_[v.producer];
      const std::string name = subs[v.producer].outName;
      bool stream = isChainGroup(g) && v.popper >= 0 && groupOf_[static_cast<size_t>(v.popper)] == g;
      for (size_t r : v.readers) {
        stream &= groupOf_[r] == g;
        for (const ReadPlan& rp : subs[r].inputs)
          if (rp.value == static_cast<int>(vi)) stream &= rp.rowsMod == 0 && rp.colsMod == 0;
      }
      if (stream) {
        const int64_t U = v.layout.ublockTiles();
        for (size_t r : v.readers) {
          for (ReadPlan& rp : subs[r].inputs)
            if (rp.value == static_cast<int>(vi)) rp.kind = ReadPlan::Kind::Stream;
          addOnce(chainAt(r).waits, {v.operand, U, name + " from " + quote(subs[v.producer].name) + ": streamed"});
        }
        chainAt(static_cast<size_t>(v.popper)).pops.push_back({v.operand, U, name + ": popped by " + quote(subs[v.popper].name)});
        continue;
      }
      std::set<size_t> readerGroups;
      for (size_t r : v.readers) readerGroups.insert(groupOf_[r]);
      for (size_t rg : readerGroups)
        plan_.groups[rg].waitAtStart.push_back({v.operand, v.layout.blockTiles(), name + " from " + quote(subs[v.producer].name)});
      if (v.popper >= 0)
        plan_.groups[groupOf_[static_cast<size_t>(v.popper)]].popAtEnd.push_back(
            {v.operand, v.layout.blockTiles(), name + ": popped by " + quote(subs[v.popper].name)});
    }

    // Inputs: streamed when every reader is in one lockstep group that reads
    // them in its own tile order; else held for the whole t (waited for
    // before the first reader, popped after the last).
    for (size_t in = 0; in < inputReaders_.size(); ++in) {
      const auto& readers = inputReaders_[in];
      if (readers.empty() || !inputLayouts_[in]) continue;
      const size_t g0 = groupOf_[readers.front()], g1 = groupOf_[readers.back()];
      const GroupPlan& g = plan_.groups[g0];
      const Layout& l = *inputLayouts_[in];
      const std::string name = "input" + std::to_string(in);
      const int operand = static_cast<int>(in);
      if (g0 == g1 && isChainGroup(g0) && sameTileOrder(l, blockLayout(g.mblock, g.ublock))) {
        const int64_t U = g.ublock.r * g.ublock.c;
        for (size_t r : readers) {
          for (ReadPlan& rp : subs[r].inputs)
            if (rp.operand == operand && rp.kind == ReadPlan::Kind::Random) rp.kind = ReadPlan::Kind::Stream;
          addOnce(chainAt(r).waits, {operand, U, name + ": streamed"});
        }
        chainAt(readers.back()).pops.push_back({operand, U, name + ": done with this ublock"});
        inputMin_[in] = U;
      } else {
        plan_.groups[g0].waitAtStart.push_back({operand, l.blockTiles(), name + ": held for the t"});
        plan_.groups[g1].popAtEnd.push_back({operand, l.blockTiles(), name + ": last read here"});
        inputMin_[in] = l.blockTiles();
      }
    }
    auto byOperand = [](const TileCount& a, const TileCount& b) { return a.operand < b.operand; };
    for (GroupPlan& g : plan_.groups) {
      std::stable_sort(g.waitAtStart.begin(), g.waitAtStart.end(), byOperand);
      std::stable_sort(g.popAtEnd.begin(), g.popAtEnd.end(), byOperand);
      for (ChainPlan& c : g.chains) {
        std::stable_sort(c.waits.begin(), c.waits.end(), byOperand);
        std::stable_sort(c.pops.begin(), c.pops.end(), byOperand);
      }
    }
  }

  void checkOutputWriter() {
    for (size_t i = 0; i < plan_.subs.size(); ++i) {
      const SubOpPlan& s = plan_.subs[i];
      if (s.out != SubOpPlan::Out::Output) continue;
      if (s.mblock != op_.mblock.value || s.ublock != op_.ublock.value)
        unsupported(i, locOr(subs_[i]->mblock, subs_[i]->loc),
                    "writing the op's output as mblock " + dimText(s.mblock) + " x ublock " + dimText(s.ublock) +
                        " when the op is blocked mblock " + dimText(op_.mblock.value) + " x ublock " +
                        dimText(op_.ublock.value) + " (the output's tile order would differ)",
                    {{op_.mblock.loc, "mblock of " + opText(op_)}});
    }
  }

  // A matmul sums its whole inner dimension in dest, one output ublock at a
  // time (BUDA's fused matmul has no operand for partial sums). Only when
  // intermed_df is not dest's format, so that BUDA's m_k blocks round the
  // partial sums (the reference does), do they go through an operand of
  // their own, after the fused op's intermediates, one ublock at a time.
  void placeSpill() {
    if (op_.intermedDf.value == destFormatOf(op_.accDf.value)) return;
    for (size_t i = 0; i < plan_.subs.size(); ++i) {
      SubOpPlan& s = plan_.subs[i];
      if (s.kind != SubOpPlan::Kind::Matmul || s.mK <= 1) continue;
      int spill = kIntermedBase + plan_.intermediates;
      if (spill >= static_cast<int>(contract::kOperandCount))
        return unsupported(i, subs_[i]->loc,
                           "a matmul with m_k > 1 in a fused op with 8 intermediates (no operand is left for its "
                           "partial sums)");
      plan_.spillOperand = spill;
      s.spill = true;
    }
  }

  // A matmul reading as input 0 a value the lockstep group just before it
  // writes, row by row in the matmul's blocking, runs interleaved with that
  // group (GroupPlan::feed): the value's buffer then holds one row of ublocks
  // (m_k of them), or one ublock when the matmul's output is one ublock wide,
  // as BUDA sizes a fused op's intermediates (an intermediate holds one ublock
  // of its writer, m_k of them when it is input 0 of the matmul ending the
  // schedule and that matmul's mblock is more than one ublock wide).
  // Kept only where the tile-level check accepts the interleaved plan.
  void interleaveFeeds() {
    if (plan_.order != UblockOrder::R) return;
    for (size_t gi = 1; gi < plan_.groups.size(); ++gi) {
      const size_t si = plan_.groups[gi].chains.front().subs.front();
      const SubOpPlan& s = plan_.subs[si];
      const GroupPlan& p = plan_.groups[gi - 1];
      if (s.kind != SubOpPlan::Kind::Matmul || !isEltwise(p.chains.front().subs.front())) continue;
      const ReadPlan& r = s.inputs[0];
      if (r.kind == ReadPlan::Kind::Dest || r.value < 0 || r.rowsMod || r.colsMod || s.inputs[1].value == r.value)
        continue;
      const Value& v = values_[static_cast<size_t>(r.value)];
      if (groupOf_[v.producer] != gi - 1 || v.popper != static_cast<int>(si) || v.readers.size() != 1) continue;
      const Dim2 mb{s.mblock.r, s.mK}, ub{s.ublock.r, s.uKt};
      if (v.layout.mblock != mb || v.layout.ublock != ub || p.mblock != mb || p.ublock != ub) continue;
      const FusedPlan before = plan_;
      // One ublock at a time needs the spill operand between m_k blocks.
      const bool spillFree = kIntermedBase + plan_.intermediates < static_cast<int>(contract::kOperandCount);
      const bool ublocks = s.mblock.c == 1 && (s.mK == 1 || s.spill || spillFree);
      GroupPlan& m = plan_.groups[gi];
      auto drop = [&](std::vector<TileCount>& list) {
        for (auto it = list.begin(); it != list.end(); ++it)
          if (it->operand == v.operand && it->tiles == v.layout.blockTiles()) return list.erase(it), true;
        return false;
      };
      if (!drop(m.waitAtStart) || !drop(m.popAtEnd)) {
        plan_ = before;
        continue;
      }
      m.feed = ublocks ? GroupPlan::Feed::Ublocks : GroupPlan::Feed::Rows;
      m.feedOperand = v.operand;
      m.feedTiles = (ublocks ? 1 : s.mK) * v.layout.ublockTiles();
      if (ublocks && s.mK > 1 && !s.spill) {
        plan_.spillOperand = kIntermedBase + plan_.intermediates;
        plan_.subs[si].spill = true;
      }
      if (!verifyFusedPlan(plan_).error.empty()) plan_ = before;
    }
  }

  // The plan as a whole: tile-level check, and the capacities it needs.
  void finish() {
    plan_.values.clear();
    for (const Value& v : values_) plan_.values.push_back({v.operand, v.producer, v.layout});
    PlanCheck check = verifyFusedPlan(plan_);
    if (!check.error.empty()) {
      failed_ = true;
      diags_.error("hlk-internal", fused_.loc,
                   "fused op " + quote(fused_.id) + ": internal error: the kernel plan does not hold: " + check.error)
          .note(op_.loc, opText(op_) + " uses fused op " + quote(fused_.id));
      return;
    }
    for (size_t in = 0; in < inputLayouts_.size(); ++in) {
      if (!inputLayouts_[in]) continue;
      operands_.push_back(inputOperand(op_, in, *inputLayouts_[in], inputMin_[in]));
    }
    for (const auto& [operand, tiles] : check.peaks) {
      if (operand < kIntermedBase) continue;
      OperandInfo o;
      o.operand = operand;
      o.role = operand == plan_.spillOperand ? OperandRole::Spill : OperandRole::Intermediate;
      o.index = operand == plan_.spillOperand ? -1 : operand - kIntermedBase;
      o.df = op_.intermedDf.value;
      o.minTiles = tiles;
      operands_.push_back(std::move(o));
    }
  }

  const Netlist& nl_;
  const Op& op_;
  const FusedOp& fused_;
  DiagnosticEngine& diags_;
  std::vector<OperandInfo>& operands_;
  std::vector<const FusedSubOp*> subs_;
  FusedPlan plan_;
  bool failed_ = false;
  std::vector<Value> values_;
  std::vector<std::optional<Layout>> inputLayouts_;
  std::vector<std::vector<size_t>> inputReaders_;
  std::map<size_t, int64_t> inputMin_;
  std::vector<std::vector<size_t>> chains_;
  std::vector<size_t> groupOf_;
  std::vector<size_t> chainOf_;
};

} // namespace

std::shared_ptr<const FusedPlan> planFusedOp(const Netlist& nl, const Op& op, const FusedOp& fused,
                                             const ValidationTarget& target, DiagnosticEngine& diags,
                                             std::vector<OperandInfo>& operands) {
  return FusedPlanner(nl, op, fused, target, diags, operands).run();
}

} // namespace tessera::hlk
