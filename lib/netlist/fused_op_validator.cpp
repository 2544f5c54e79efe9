// The fused-op constraints of net2hlks (seeds/net2hlks-fused-op-constraints.md),
// one stable rule id per constraint (the `fused-` rules of docs/netlist-rules.md).
//
// A fused op is a small program: schedules of sub-ops that pass tiles through
// named buffers (`inputN` = the graph op's inputs, `intermedN` = L1 buffers of
// two ublocks, `dest` = the math destination register, `output` = the op's
// output). Most constraints only need the fused op itself; grid size, ublock
// order, arch-specific limits and data formats come from the graph op that uses
// it. So each fused op is checked once per graph op referencing it (through
// attributes.fused_op_id), and a fused op nobody references is checked for the
// op-independent rules only. Identical reports coming from several users of the
// same fused op are printed once (see Reporter).
//
// Shapes: a sub-op's `mblock` x `ublock` is the block it writes. The block a
// sub-op reads from `intermedN` or `dest` is the block of the sub-op that last
// wrote that buffer; the shapes of `inputN` are those of the graph op's inputs
// after their TMs and are not checked here (net2hlks does not check them either).
//
// Seed constraint -> rule:
//   General 1 fused-tile-broadcast-input    2 fused-dest-fork
//           3 fused-dest-input1-grayskull   4 fused-dest-into-matmul-reduce
//           5 fused-dest-into-maximum       6 fused-dest-outside-schedule
//           7 fused-schedule-split          8 fused-grid-matmul, fused-grid-broadcast
//           9 fused-matmul-count
//   Not supported 1 fused-unsupported-op    2 fused-small-tile
//           3 fused-reduce-max-rc-z         4 fused-reblock
//           5 fused-math-fidelity           6 fused-intermed-lifetime
//           7 fused-intermed-ublock-reuse   8 fused-ublock-order
//           9 fused-reduce-row-order       10 fused-reduce-col-order
//          11 fused-transpose              12 fused-binary-sfpu
//   Matmul 12/15 fused-matmul-input1-fork   13/16 fused-matmul-input0-intermed
//          14/17 fused-matmul-input1-intermed  18 fused-matmul-output-mk
//   Broadcasts 19 fused-bcast-mblock       20 fused-bcast-mblock-row
//          21 fused-bcast-ublock           22 fused-bcast-source
//          23 fused-rc-broadcast (#1134)   24 fused-matmul-col-bcast,
//             fused-matmul-ublock-bcast (#1135)  25 fused-matmul-intermed-dims
//   Int 1 fused-int-op-type  2 fused-int-float-mix  3 fused-int-dest-input
//       4 fused-int-formats  5 fused-int-input-df   6 fused-int-output-df
//       7 fused-int-ublock-size  8 fused-int-quantization-inputs
//       9 fused-int-requant-inputs
//   Structure: fused-input-range, fused-intermed-range, fused-output,
//       fused-pop-list, fused-intermed-not-popped, fused-ublock-fits-dest,
//       fused-dims, fused-reduce-mk, fused-output-shape.
// Only partly checkable statically:
//   Not supported 5: sub-ops have no fidelity field in the format; one that
//     sets `math_fidelity` anyway is reported when it differs from the op's.
//   General 7: only "nothing follows a matmul/reduce in its schedule" breaks
//     the kernel; a schedule split that was not needed is harmless, net2hlks
//     accepts it and corpus netlists contain such splits.
//   General 8(1)/9 and the int rules need the graph op (grid, formats), so
//     unreferenced fused ops skip them.
#include "netlist/validator.hpp"
#include "netlist/fused_buffer.hpp"

#include "netlist/text.hpp"

#include "device/arch_params.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace tessera::netlist {

namespace {

// ---------------------------------------------------------------- vocabulary


bool isMatmul(const std::string& t) { return t == "matmul"; }
bool isReduce(const std::string& t) { return t == "reduce"; }
bool isMatmulOrReduce(const std::string& t) { return isMatmul(t) || isReduce(t); }
bool isQuantFamily(const std::string& t) {
  return t == "quantization" || t == "dequantization" || t == "requantization";
}
bool isRequantOrDequant(const std::string& t) { return t == "dequantization" || t == "requantization"; }
// Ops the hardware can tile-broadcast into: the FPU binary ops (source B).
bool isFpuBinary(const std::string& t) { return t == "add" || t == "subtract" || t == "multiply"; }
bool isIntFormat(DataFormat f) { return f == DataFormat::Int8 || f == DataFormat::Int32; }


// Product that saturates instead of overflowing (dimensions come from user input).
int64_t mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

// ---------------------------------------------------------------- shapes

// The block a sub-op writes: mblock ublocks of ublock tiles.
struct Block {
  Dim2 mblock, ublock;
  int64_t rowTiles() const { return mul(mblock.r, ublock.r); }
  int64_t colTiles() const { return mul(mblock.c, ublock.c); }
  std::string str() const { return "mblock " + dimText(mblock) + " x ublock " + dimText(ublock); }
  std::string tilesStr() const { return std::to_string(rowTiles()) + "x" + std::to_string(colTiles()) + " tiles"; }
};

bool positive(Dim2 d) { return d.r > 0 && d.c > 0; }

std::optional<Block> blockOf(const FusedSubOp& s) {
  if (!s.mblock.present() || !s.ublock.present() || !positive(s.mblock.value) || !positive(s.ublock.value))
    return std::nullopt;
  return Block{s.mblock.value, s.ublock.value};
}

std::optional<Block> blockOf(const Op& op) {
  if (!op.mblock.present() || !op.ublock.present() || !positive(op.mblock.value) || !positive(op.ublock.value))
    return std::nullopt;
  return Block{op.mblock.value, op.ublock.value};
}

// What the TMs of one sub-op operand do.
struct TmSummary {
  const Tm* rBcast = nullptr;    // first `broadcast: {r: N}`
  const Tm* cBcast = nullptr;    // first `broadcast: {c: N}`
  const Tm* tileBcast = nullptr; // first tile_broadcast
  const Tm* transpose = nullptr; // first transpose
  int64_t rFactor = 1, cFactor = 1;
  bool reshapes = false; // transpose or slice/stack: the operand's shape is not tracked

  bool broadcasts() const { return rBcast || cBcast; }
};

TmSummary summarize(const Operand& in) {
  TmSummary s;
  for (const Tm& tm : in.tms) {
    switch (tm.kind) {
    case TmKind::Broadcast:
      // z broadcast has no meaning inside a fused op (sub-ops share the op's t);
      // the seed lists no constraint for it, so it is left to net2hlks.
      if (tm.factor <= 0) s.reshapes = true;
      if (tm.dim == 'r') {
        if (!s.rBcast) s.rBcast = &tm;
        s.rFactor = mul(s.rFactor, tm.factor);
      } else if (tm.dim == 'c') {
        if (!s.cBcast) s.cBcast = &tm;
        s.cFactor = mul(s.cFactor, tm.factor);
      }
      break;
    case TmKind::TileBroadcast:
      if (!s.tileBcast) s.tileBcast = &tm;
      break;
    case TmKind::Transpose:
      if (!s.transpose) s.transpose = &tm;
      s.reshapes = true;
      break;
    default: s.reshapes = true;
    }
  }
  return s;
}

const ExtraField* findExtra(const FusedSubOp& s, std::string_view key) {
  for (const ExtraField& e : s.extra)
    if (e.key == key) return &e;
  return nullptr;
}

// ---------------------------------------------------------------- reporting

// A sub-op by its place in the fused op.
struct SubRef {
  size_t sched = 0; // schedule index
  size_t pos = 0;   // position in the schedule
  const FusedSubOp* op = nullptr;
};

// Emits the fused-op diagnostics. A fused op used by several graph ops is
// checked once per user; a problem already reported for the same fused op,
// rule, sub-op and source position is not reported again. Problems located at
// a field of the graph op (its grid, formats...) have one position per user,
// so each offending user gets its own report.
class Reporter {
public:
  explicit Reporter(DiagnosticEngine& diags) : diags_(diags) {}

  void report(const FusedOp& fused, const Op* user, const std::string& rule, const SubRef& sub, SourceLoc loc,
              const std::string& what, std::vector<DiagNote> notes = {}) {
    auto key = std::make_tuple(fused.id, rule, sub.sched, sub.pos, loc.line, loc.col);
    if (!seen_.insert(key).second) return;
    std::string message = "fused op " + quote(fused.id) + " schedule " + std::to_string(sub.sched) + " sub-op " +
                          quote(sub.op->name) + ": " + what;
    auto b = diags_.error(rule, loc.valid() ? loc : sub.op->loc, std::move(message));
    for (DiagNote& n : notes) b.note(n.loc, std::move(n.message));
    if (user)
      b.note(user->loc, "op " + quote(user->name) + " in graph " + quote(user->graph) + " uses fused op " +
                            quote(fused.id));
  }

private:
  DiagnosticEngine& diags_;
  std::set<std::tuple<std::string, std::string, size_t, size_t, uint32_t, uint32_t>> seen_;
};

// ---------------------------------------------------------------- the checker

// Checks one fused op, optionally in the context of one graph op using it.
class FusedOpChecker {
public:
  FusedOpChecker(const FusedOp& fused, const ValidationTarget& target, const Op* user, Reporter& reporter)
      : fused_(fused), target_(target), user_(user), reporter_(reporter) {
    for (size_t s = 0; s < fused.schedules.size(); ++s)
      for (size_t p = 0; p < fused.schedules[s].ops.size(); ++p) subs_.push_back({s, p, &fused.schedules[s].ops[p]});
    analyseDataflow();
  }

  void run() {
    checkOutputWriters();
    checkIntermedLifetimes();
    checkIntermedUblockReuse();
    for (size_t i = 0; i < subs_.size(); ++i) {
      checkNames(i);
      checkOpKind(i);
      checkTms(i);
      checkDest(i);
      checkMatmul(i);
      checkDims(i);
      checkDestCapacity(i);
      checkBinarySfpu(i);
      checkPerOpFields(i);
      checkReduceOrder(i);
    }
    checkGrid();
    checkOutputShape();
    checkIntOps();
  }

private:
  // ------------------------------------------------------------ dataflow
  // producer_[i][j]: index in subs_ of the sub-op that last wrote the
  // intermedN/dest buffer read as input j of sub-op i before i runs; -1 when
  // the operand is an op input or nothing wrote the buffer.
  // readers_[p]: the sub-ops (in order, each once) reading what sub-op p wrote.
  // inputReaders_[name]: the sub-ops (each once) reading op input `name`.
  void analyseDataflow() {
    producer_.assign(subs_.size(), {});
    readers_.assign(subs_.size(), {});
    std::map<std::string, int> lastWriter;
    for (size_t i = 0; i < subs_.size(); ++i) {
      const FusedSubOp& s = *subs_[i].op;
      for (const Operand& in : s.inputs) {
        BufName b = parseBufName(in.name);
        int p = -1;
        if (b.kind == BufKind::Intermed || b.kind == BufKind::Dest) {
          auto it = lastWriter.find(in.name);
          if (it != lastWriter.end()) p = it->second;
          if (p >= 0 && (readers_[p].empty() || readers_[p].back() != i)) readers_[p].push_back(i);
        } else if (b.kind == BufKind::Input) {
          auto& r = inputReaders_[in.name];
          if (r.empty() || r.back() != i) r.push_back(i);
        }
        producer_[i].push_back(p);
      }
      BufName out = parseBufName(s.output.value);
      if (out.kind == BufKind::Intermed || out.kind == BufKind::Dest) lastWriter[s.output.value] = static_cast<int>(i);
    }
  }

  const FusedSubOp& sub(size_t i) const { return *subs_[i].op; }
  const std::string& type(size_t i) const { return subs_[i].op->type.value; }

  // The block written by the producer of operand j of sub-op i, if known.
  std::optional<Block> producerBlock(size_t i, size_t j) const {
    int p = producer_[i][j];
    return p < 0 ? std::nullopt : blockOf(sub(p));
  }

  // "intermed0 (mblock [..] x ublock [..] from sub-op 'x')"
  std::string operandDesc(size_t i, size_t j) const {
    const Operand& in = sub(i).inputs[j];
    int p = producer_[i][j];
    auto b = producerBlock(i, j);
    if (p < 0 || !b) return in.name;
    return in.name + " (" + b->str() + " from sub-op " + quote(sub(p).name) + ")";
  }

  bool producedByMatmulOrReduce(int p) const { return p >= 0 && isMatmulOrReduce(type(p)); }

  // Format of a buffer as seen by the graph op; nullopt without a user or format.
  std::optional<DataFormat> formatOf(const std::string& name) const {
    if (!user_) return std::nullopt;
    BufName b = parseBufName(name);
    switch (b.kind) {
    case BufKind::Input:
      if (b.index >= 0 && static_cast<size_t>(b.index) < user_->inDf.size()) return user_->inDf[b.index].value;
      return std::nullopt;
    case BufKind::Intermed:
      return user_->intermedDf.present() ? std::optional(user_->intermedDf.value) : std::nullopt;
    case BufKind::Dest: return user_->accDf.present() ? std::optional(user_->accDf.value) : std::nullopt;
    default: return std::nullopt;
    }
  }

  // An integer fused op accumulates in Int32 (the int FPU path).
  bool isIntFusedOp() const { return user_ && user_->accDf.present() && user_->accDf.value == DataFormat::Int32; }

  void report(const std::string& rule, size_t i, SourceLoc loc, const std::string& what,
              std::vector<DiagNote> notes = {}) {
    reporter_.report(fused_, user_, rule, subs_[i], loc, what, std::move(notes));
  }

  SourceLoc typeLoc(size_t i) const { return sub(i).type.loc.valid() ? sub(i).type.loc : sub(i).loc; }
  SourceLoc outputLoc(size_t i) const { return sub(i).output.loc.valid() ? sub(i).output.loc : sub(i).loc; }
  SourceLoc ublockLoc(size_t i) const { return sub(i).ublock.loc.valid() ? sub(i).ublock.loc : sub(i).loc; }
  SourceLoc mblockLoc(size_t i) const { return sub(i).mblock.loc.valid() ? sub(i).mblock.loc : sub(i).loc; }
  static SourceLoc tmLoc(const Operand& in, const Tm* tm) {
    if (tm && tm->loc.valid()) return tm->loc;
    return in.tmsLoc.valid() ? in.tmsLoc : in.loc;
  }
  DiagNote producerNote(int p, const std::string& what) const {
    return {sub(p).loc, "sub-op " + quote(sub(p).name) + " (schedule " + std::to_string(subs_[p].sched) + ") " + what};
  }

  // ------------------------------------------------------------ structure

  // fused-input-range, fused-intermed-range, fused-output (names), fused-pop-list.
  void checkNames(size_t i) {
    const FusedSubOp& s = sub(i);
    auto checkIntermedIndex = [&](const BufName& b, SourceLoc loc, const std::string& name) {
      if (b.kind != BufKind::Intermed || !fused_.intermediates.present()) return;
      if (b.index >= fused_.intermediates.value)
        report("fused-intermed-range", i, loc,
               "intermediate buffer out of range: " + name + " but the fused op declares " +
                   std::to_string(fused_.intermediates.value) + " intermediate(s)",
               {{fused_.intermediates.loc, "intermediates declared here"}});
    };
    for (const Operand& in : s.inputs) {
      BufName b = parseBufName(in.name);
      if (b.kind == BufKind::Invalid || b.kind == BufKind::Output) {
        report("fused-input-range", i, in.loc,
               "invalid input name: " + quote(in.name) + " is not inputN, intermedN or dest");
      } else if (b.kind == BufKind::Input) {
        if (fused_.inputs.present() && b.index >= fused_.inputs.value)
          report("fused-input-range", i, in.loc,
                 "input out of range: " + in.name + " but the fused op declares " +
                     std::to_string(fused_.inputs.value) + " input(s)",
                 {{fused_.inputs.loc, "inputs declared here"}});
        else if (user_ && static_cast<size_t>(b.index) >= user_->inputs.size())
          report("fused-input-range", i, in.loc,
                 "input out of range: " + in.name + " but op " + quote(user_->name) + " has " +
                     std::to_string(user_->inputs.size()) + " input(s)",
                 {{user_->inputsLoc, "inputs of op " + quote(user_->name)}});
      }
      checkIntermedIndex(b, in.loc, in.name);
    }
    if (s.output.present()) {
      BufName b = parseBufName(s.output.value);
      if (b.kind != BufKind::Output && b.kind != BufKind::Dest && b.kind != BufKind::Intermed)
        report("fused-output", i, outputLoc(i),
               "invalid output name: " + quote(s.output.value) + " is not output, dest or intermedN");
      checkIntermedIndex(b, outputLoc(i), s.output.value);
    }
    // Pops release buffers the sub-op reads; anything else is a typo or a
    // misplaced pop. (An intermedN it reads is range-checked as an input.)
    auto reads = [&](const std::string& name) {
      for (const Operand& in : s.inputs)
        if (in.name == name) return true;
      return false;
    };
    for (const auto* list : {&s.pop, &s.popLast}) {
      const char* field = list == &s.pop ? "pop" : "pop_last";
      for (const Field<std::string>& p : *list)
        if (!reads(p.value))
          report("fused-pop-list", i, p.loc,
                 std::string(field) + " lists " + quote(p.value) + " which is not an input of this sub-op");
    }
    for (const Field<std::string>& p : s.popLast)
      for (const Field<std::string>& q : s.pop)
        if (p.value == q.value)
          report("fused-pop-list", i, p.loc, quote(p.value) + " is listed in both pop and pop_last");
  }

  // fused-output: exactly one sub-op writes `output`, and it is in the last schedule.
  void checkOutputWriters() {
    if (subs_.empty()) return;
    size_t lastSched = fused_.schedules.size() - 1;
    int first = -1;
    for (size_t i = 0; i < subs_.size(); ++i) {
      if (sub(i).output.value != "output") continue;
      if (subs_[i].sched != lastSched) {
        report("fused-output", i, outputLoc(i),
               "only the last schedule (" + std::to_string(lastSched) + ") may write the fused op's output");
      } else if (first >= 0) {
        report("fused-output", i, outputLoc(i), "the fused op's output is written more than once",
               {{outputLoc(first), "first written by sub-op " + quote(sub(first).name)}});
      } else {
        first = static_cast<int>(i);
      }
    }
    if (first < 0) {
      // Anchor at the last sub-op of the last schedule: that is where `output: output` is missing.
      for (size_t i = subs_.size(); i-- > 0;)
        if (subs_[i].sched == lastSched) {
          report("fused-output", i, outputLoc(i), "no sub-op of the last schedule writes the fused op's output");
          break;
        }
    }
  }

  // fused-unsupported-op, fused-reduce-max-rc-z, fused-schedule-split, fused-small-tile (sub-op).
  void checkOpKind(size_t i) {
    const FusedSubOp& s = sub(i);
    const std::string& t = s.type.value;
    if (t == "splice" || t == "embedding" || t == "depthwise" || t == "fused_op")
      report("fused-unsupported-op", i, typeLoc(i),
             "op type " + quote(t) + " cannot be fused (splice, embedding, depthwise, sparse matmul and "
             "nested fused ops are not supported)");
    else if (isMatmul(t) && s.attributes.identity.present() && s.attributes.identity.value)
      report("fused-unsupported-op", i, s.attributes.identity.loc,
             "sparse matmul (identity: true) cannot be fused");

    if (isReduce(t) && s.attributes.reduceType.value == "max" &&
        (s.attributes.reduceDim.value == "z" || s.attributes.reduceDim.value == "rc"))
      report("fused-reduce-max-rc-z", i, s.attributes.reduceDim.loc,
             "reduce max on dimension " + s.attributes.reduceDim.value + " is not supported in fused ops "
             "(only r and c)");

    // A matmul/reduce accumulates into dest over the whole mblock: nothing can
    // follow it in the same schedule. (The converse, a split that was not
    // needed, is tolerated: net2hlks accepts it and corpus netlists use it.)
    if (isMatmulOrReduce(t) && subs_[i].pos + 1 != fused_.schedules[subs_[i].sched].ops.size())
      report("fused-schedule-split", i, typeLoc(i),
             t + " must be the last sub-op of its schedule; start a new schedule after it");

    if (const ExtraField* td = findExtra(s, "tile_dim"); td && td->value != RawValue::array({32, 32}))
      report("fused-small-tile", i, td->loc, "tile_dim " + td->value.dump() + ": fused ops support only 32x32 tiles");
  }

  // fused-transpose, fused-tile-broadcast-input and the broadcast rules
  // (fused-bcast-*, fused-rc-broadcast, fused-matmul-col-bcast, fused-matmul-ublock-bcast).
  void checkTms(size_t i) {
    const FusedSubOp& s = sub(i);
    const std::string& t = s.type.value;
    for (size_t j = 0; j < s.inputs.size(); ++j) {
      const Operand& in = s.inputs[j];
      TmSummary tms = summarize(in);
      if (tms.transpose)
        report("fused-transpose", i, tmLoc(in, tms.transpose),
               "transpose TM on " + in.name + " is not supported inside a fused op");
      if (tms.tileBcast && (j != 1 || !isFpuBinary(t)))
        report("fused-tile-broadcast-input", i, tmLoc(in, tms.tileBcast),
               j != 1 ? "tile_broadcast on input " + std::to_string(j) + " (" + in.name +
                            "): the hardware tile-broadcasts only source B, i.e. input 1"
                      : "tile_broadcast on a " + quote(t) + " sub-op: only add, subtract and multiply support it");
      if (!tms.broadcasts()) continue;
      const Tm* first = tms.rBcast ? tms.rBcast : tms.cBcast;

      if (tms.rBcast && tms.cBcast) {
        report("fused-rc-broadcast", i, tmLoc(in, tms.cBcast),
               "broadcast of " + in.name + " in both r and c is a known unsupported feature of fused ops "
               "(tenstorrent/budabackend#1134); broadcast in one dimension only");
        continue;
      }
      if (parseBufName(in.name).kind != BufKind::Intermed) {
        report("fused-bcast-source", i, tmLoc(in, first),
               "broadcast of " + in.name + ": inside a fused op r/c broadcast is supported only on "
               "intermediate buffers; write the operand to an intermedN first");
        continue;
      }
      auto b = producerBlock(i, j);
      if (isMatmul(t)) {
        checkMatmulBroadcast(i, j, tms, b);
        continue;
      }
      if (!b) continue;
      std::vector<DiagNote> notes{producerNote(producer_[i][j], "writes " + in.name + " as " + b->str())};
      if (tms.rBcast) {
        if (b->mblock.r != 1)
          report("fused-bcast-mblock", i, tmLoc(in, tms.rBcast),
                 "row broadcast of " + in.name + " needs its mblock rows to be 1 (the intermediate buffer holds "
                 "only two ublocks), got mblock " + dimText(b->mblock), notes);
        else if (b->ublock.r != 1)
          report("fused-bcast-ublock", i, tmLoc(in, tms.rBcast),
                 "row broadcast of " + in.name + " needs its ublock rows to be 1 (tenstorrent/budabackend#1064), "
                 "got ublock " + dimText(b->ublock), notes);
        else if (s.mblock.present() && s.mblock.value.r != 1 && b->mblock.c != 1)
          report("fused-bcast-mblock-row", i, tmLoc(in, tms.rBcast),
                 "row broadcast of " + in.name + " into " + std::to_string(s.mblock.value.r) +
                     " mblock rows needs its mblock columns to be 1 (the intermediate buffer holds only two "
                     "ublocks), got mblock " + dimText(b->mblock), notes);
      } else {
        if (b->mblock.c != 1)
          report("fused-bcast-mblock", i, tmLoc(in, tms.cBcast),
                 "column broadcast of " + in.name + " needs its mblock columns to be 1 (the intermediate buffer "
                 "holds only two ublocks), got mblock " + dimText(b->mblock), notes);
        else if (b->ublock.c != 1)
          report("fused-bcast-ublock", i, tmLoc(in, tms.cBcast),
                 "column broadcast of " + in.name + " needs its ublock columns to be 1 "
                 "(tenstorrent/budabackend#1064), got ublock " + dimText(b->ublock), notes);
      }
    }
  }

  // Broadcast into a matmul operand (constraint 24 and issue 1135).
  void checkMatmulBroadcast(size_t i, size_t j, const TmSummary& tms, const std::optional<Block>& b) {
    const FusedSubOp& s = sub(i);
    const Operand& in = s.inputs[j];
    if (j != 0 || tms.rBcast) {
      report("fused-matmul-col-bcast", i, tmLoc(in, tms.rBcast ? tms.rBcast : tms.cBcast),
             "matmul supports only column broadcast of input 0 inside a fused op, not " +
                 std::string(tms.rBcast ? "row" : "column") + " broadcast of input " + std::to_string(j));
      return;
    }
    if (!b) return;
    const Field<int64_t>& mK = s.attributes.mK;
    const Field<int64_t>& uKt = s.attributes.uKt;
    std::vector<DiagNote> notes{producerNote(producer_[i][j], "writes " + in.name + " as " + b->str())};
    // Supported: (m, 1)(r, c) -> (m, n)(r, k) and (m, n)(r, c) -> (m, n)(r, k),
    // i.e. the broadcast replicates whole ublocks along the inner dimension.
    if (mK.present() && b->mblock.c != 1 && b->mblock.c != mK.value)
      report("fused-matmul-col-bcast", i, tmLoc(in, tms.cBcast),
             "column broadcast of matmul input 0 needs its mblock columns to be 1 or m_k (" +
                 std::to_string(mK.value) + "), got " + b->str(),
             notes);
    else if (uKt.present() && b->ublock.c != uKt.value)
      report("fused-matmul-ublock-bcast", i, tmLoc(in, tms.cBcast),
             "column broadcast of matmul input 0 inside its ublock (ublock columns " + std::to_string(b->ublock.c) +
                 " -> u_kt " + std::to_string(uKt.value) + ") is a known unsupported feature of fused ops "
                 "(tenstorrent/budabackend#1135)",
             notes);
  }

  // fused-dest-* rules.
  void checkDest(size_t i) {
    const FusedSubOp& s = sub(i);
    const std::string& t = s.type.value;
    for (size_t j = 0; j < s.inputs.size(); ++j) {
      const Operand& in = s.inputs[j];
      if (in.name != "dest") continue;
      if (j == 1 && !archParams(target_.arch).destAsFusedInput1)
        report("fused-dest-input1-grayskull", i, in.loc,
               "dest cannot be input 1 on " + std::string(archName(target_.arch)) +
                   ": the hardware cannot move dest into source B; swap the operands or use an intermediate");
      if (isMatmulOrReduce(t))
        report("fused-dest-into-matmul-reduce", i, in.loc,
               "dest cannot be an input of " + t + ": it accumulates its partial results in dest");
      if (t == "maximum") report("fused-dest-into-maximum", i, in.loc, "dest cannot be an input of maximum");
      int p = producer_[i][j];
      if (p < 0)
        report("fused-dest-outside-schedule", i, in.loc, "dest is read but no earlier sub-op of this schedule writes it");
      else if (subs_[p].sched != subs_[i].sched)
        report("fused-dest-outside-schedule", i, in.loc,
               "dest cannot be used outside the schedule that wrote it (schedule " + std::to_string(subs_[p].sched) +
                   "); pass the value through an intermediate buffer",
               {producerNote(p, "writes dest")});
    }
    if (s.output.value == "dest" && isMatmulOrReduce(t))
      report("fused-dest-outside-schedule", i, outputLoc(i),
             t + " cannot write dest: it ends its schedule, and dest cannot be used outside the schedule; "
             "write an intermediate buffer");
    // Each value written to dest is consumed by exactly one sub-op.
    if (s.output.value == "dest" && readers_[i].size() > 1) {
      size_t second = readers_[i][1];
      SourceLoc loc = sub(second).loc;
      for (const Operand& in : sub(second).inputs)
        if (in.name == "dest") { loc = in.loc; break; }
      report("fused-dest-fork", second, loc,
             "dest written by sub-op " + quote(s.name) + " is read by more than one sub-op; dest cannot be "
             "forked, write an intermediate buffer instead",
             {{sub(readers_[i][0]).loc, "also read by sub-op " + quote(sub(readers_[i][0]).name)}});
    }
  }

  // fused-intermed-lifetime and fused-intermed-not-popped: simulate the
  // intermediate buffers (written -> read -> popped) through the schedules.
  void checkIntermedLifetimes() {
    struct State {
      bool active = false;
      int producer = -1;
      int lastReader = -1;
    };
    std::map<std::string, State> buffers;
    for (size_t i = 0; i < subs_.size(); ++i) {
      const FusedSubOp& s = sub(i);
      for (size_t j = 0; j < s.inputs.size(); ++j) {
        const Operand& in = s.inputs[j];
        if (parseBufName(in.name).kind != BufKind::Intermed) continue;
        State& st = buffers[in.name];
        if (!st.active) {
          report("fused-intermed-lifetime", i, in.loc,
                 in.name + " is read but holds no data: it is not written before, or was already popped");
          continue;
        }
        st.lastReader = static_cast<int>(i);
        size_t ps = subs_[st.producer].sched;
        if (ps == subs_[i].sched) continue;
        // Across schedules an intermediate keeps only what fits in its two
        // ublocks, unless the producer is a matmul/reduce (which fills its
        // output buffer completely) or the value is a single-ublock mblock.
        // A schedule that does not end in matmul/reduce runs as one with the
        // next, so its values live on like values of the same schedule.
        const FusedSchedule& producing = fused_.schedules[ps];
        bool scheduleFlowsOn = producing.ops.empty() || !isMatmulOrReduce(producing.ops.back().type.value);
        auto pb = blockOf(sub(st.producer));
        bool singleMblock = pb && pb->mblock == Dim2{1, 1};
        if (!scheduleFlowsOn && !singleMblock && !producedByMatmulOrReduce(st.producer))
          report("fused-intermed-lifetime", i, in.loc,
                 in.name + " is used outside the schedule that wrote it (schedule " + std::to_string(ps) +
                     "); that is allowed only when it is written by matmul/reduce or its mblock is [1, 1]",
                 {producerNote(st.producer, "writes " + in.name + (pb ? " with mblock " + dimText(pb->mblock) : ""))});
      }
      for (const auto* list : {&s.pop, &s.popLast})
        for (const Field<std::string>& p : *list)
          if (parseBufName(p.value).kind == BufKind::Intermed) buffers[p.value].active = false;
      if (parseBufName(s.output.value).kind == BufKind::Intermed) {
        State& st = buffers[s.output.value];
        if (st.active)
          report("fused-intermed-not-popped", i, outputLoc(i),
                 "writes " + s.output.value + " while it still holds the data written by sub-op " +
                     quote(sub(st.producer).name) + "; pop it first",
                 {st.lastReader >= 0 ? producerNote(st.lastReader, "is the last sub-op reading it")
                                     : producerNote(st.producer, "writes it")});
        st = {true, static_cast<int>(i), -1};
      }
    }
    for (const auto& [name, st] : buffers) {
      if (!st.active) continue;
      size_t at = st.lastReader >= 0 ? st.lastReader : st.producer;
      SourceLoc loc = sub(at).loc;
      for (const Operand& in : sub(at).inputs)
        if (in.name == name) { loc = in.loc; break; }
      if (st.lastReader < 0) loc = outputLoc(at);
      report("fused-intermed-not-popped", at, loc,
             name + " written by sub-op " + quote(sub(st.producer).name) +
                 " is never popped; its last reader must list it in pop or pop_last");
    }
  }

  // fused-intermed-ublock-reuse: net2hlks sizes an intermediate buffer for
  // two of the biggest ublocks written to it, and L1 buffers hold whole
  // ublocks. Reusing the buffer for ublocks of another size works only when
  // that size divides the capacity (corpus layernorm netlists reuse a buffer
  // for 4- and 2-tile ublocks); otherwise a ublock would wrap around the end
  // of the buffer.
  void checkIntermedUblockReuse() {
    std::map<std::string, std::vector<size_t>> writers;
    for (size_t i = 0; i < subs_.size(); ++i)
      if (parseBufName(sub(i).output.value).kind == BufKind::Intermed && blockOf(sub(i)))
        writers[sub(i).output.value].push_back(i);
    for (const auto& [name, list] : writers) {
      auto tiles = [&](size_t i) { return mul(sub(i).ublock.value.r, sub(i).ublock.value.c); };
      size_t biggest = list.front();
      for (size_t i : list)
        if (tiles(i) > tiles(biggest)) biggest = i;
      int64_t capacity = mul(2, tiles(biggest));
      for (size_t i : list) {
        if (capacity % tiles(i) == 0) continue;
        report("fused-intermed-ublock-reuse", i, ublockLoc(i),
               name + " is reused for a ublock of a different size: " + dimText(sub(i).ublock.value) + " (" +
                   std::to_string(tiles(i)) + " tiles) does not divide its " + std::to_string(capacity) +
                   "-tile buffer (two " + dimText(sub(biggest).ublock.value) + " ublocks); use another "
                   "intermediate buffer",
               {producerNote(static_cast<int>(biggest), "writes " + name + " with ublock " +
                                                            dimText(sub(biggest).ublock.value))});
        break;
      }
    }
  }

  // Matmul-specific rules (constraints 12-18 and 25).
  void checkMatmul(size_t i) {
    const FusedSubOp& s = sub(i);
    const std::string& t = s.type.value;
    const Field<int64_t>& mK = s.attributes.mK;
    const Field<int64_t>& uKt = s.attributes.uKt;

    // 18: with m_k > 1 partial results are spilled to and reloaded from the output buffer.
    if (isMatmulOrReduce(t) && mK.present() && mK.value > 1 && s.output.value == "output")
      report("fused-matmul-output-mk", i, outputLoc(i),
             t + " with m_k " + std::to_string(mK.value) + " cannot write the fused op's output directly: it "
             "reloads partial results from its output buffer; write an intermediate buffer",
             {{mK.loc, "m_k set here"}});

    if (!isMatmul(t) || s.inputs.size() < 2) return;
    const Operand& in0 = s.inputs[0];
    const Operand& in1 = s.inputs[1];
    auto out = blockOf(s);
    if (!out) return;
    bool input1IsColumn = out->mblock.c == 1; // input 1 is m_k x n ublocks, n = output mblock columns

    // 14: input 1 is read m (output mblock rows) times; an intermediate holds only two ublocks.
    if (parseBufName(in1.name).kind == BufKind::Intermed) {
      if (auto b = producerBlock(i, 1); b && b->mblock != Dim2{1, 1})
        report("fused-matmul-input1-intermed", i, in1.loc,
               "matmul input 1 can come from an intermediate buffer only if its mblock is [1, 1], got " +
                   operandDesc(i, 1) + "; feed it from a fused op input",
               {producerNote(producer_[i][1], "writes " + in1.name)});
    }

    // 13: when input 1 is not a column of ublocks, input 0 is re-read for
    // every column of ublocks. net2hlks then grows the intermediate holding
    // input 0 to m_k ublocks, which it can do only for a buffer written in
    // the matmul's own schedule.
    if (!input1IsColumn && parseBufName(in0.name).kind == BufKind::Intermed) {
      int p = producer_[i][0];
      if (p >= 0 && subs_[p].sched != subs_[i].sched)
        report("fused-matmul-input0-intermed", i, in0.loc,
               "matmul input 0 comes from " + in0.name + " of an earlier schedule while input 1 is not a column "
               "of ublocks (output mblock " + dimText(out->mblock) + ")",
               {producerNote(p, "writes " + in0.name)});
    }

    // 12: a forked input 1 that is not a column of ublocks.
    if (!input1IsColumn && in1.name != "dest") {
      std::vector<size_t> readers;
      BufName b1 = parseBufName(in1.name);
      if (b1.kind == BufKind::Input) {
        auto it = inputReaders_.find(in1.name);
        if (it != inputReaders_.end()) readers = it->second;
      } else if (b1.kind == BufKind::Intermed && producer_[i][1] >= 0) {
        readers = readers_[producer_[i][1]];
      }
      for (size_t r : readers) {
        if (r == i) continue;
        const FusedSubOp& other = sub(r);
        bool otherMatmulInput1 = isMatmul(other.type.value) && other.inputs.size() > 1 &&
                                 other.inputs[1].name == in1.name && other.inputs[0].name != in1.name;
        if (otherMatmulInput1) continue;
        report("fused-matmul-input1-fork", i, in1.loc,
               "matmul input 1 (" + in1.name + ") is forked to sub-op " + quote(other.name) +
                   " but is not a column of ublocks (output mblock " + dimText(out->mblock) +
                   "); it may only be forked to the input 1 of other matmuls",
               {{other.loc, "sub-op " + quote(other.name) + " also reads " + in1.name}});
        break;
      }
    }

    // 25: an intermediate input must be blocked as the matmul consumes it.
    if (mK.present() && uKt.present()) {
      TmSummary tms0 = summarize(in0);
      if (parseBufName(in0.name).kind == BufKind::Intermed && !tms0.cBcast) {
        if (auto b = producerBlock(i, 0); b && (b->mblock.c != mK.value || b->ublock.c != uKt.value))
          report("fused-matmul-intermed-dims", i, in0.loc,
                 "matmul input 0 from an intermediate buffer must have mblock columns == m_k (" +
                     std::to_string(mK.value) + ") and ublock columns == u_kt (" + std::to_string(uKt.value) +
                     "), got " + operandDesc(i, 0),
                 {producerNote(producer_[i][0], "writes " + in0.name), {mK.loc, "m_k set here"}});
      }
      if (parseBufName(in1.name).kind == BufKind::Intermed) {
        if (auto b = producerBlock(i, 1); b && (b->mblock.r != mK.value || b->ublock.r != uKt.value))
          report("fused-matmul-intermed-dims", i, in1.loc,
                 "matmul input 1 from an intermediate buffer must have mblock rows == m_k (" +
                     std::to_string(mK.value) + ") and ublock rows == u_kt (" + std::to_string(uKt.value) +
                     "), got " + operandDesc(i, 1),
                 {producerNote(producer_[i][1], "writes " + in1.name), {mK.loc, "m_k set here"}});
      }
    }
  }

  // fused-dims and fused-reblock: what a sub-op writes must follow from what it
  // reads (operands of known shape only: intermediates and dest).
  void checkDims(size_t i) {
    const FusedSubOp& s = sub(i);
    const std::string& t = s.type.value;
    auto out = blockOf(s);
    if (!out || t == "splice" || t == "embedding" || t == "depthwise" || t == "fused_op") return;
    const Field<int64_t>& mK = s.attributes.mK;
    const Field<int64_t>& uKt = s.attributes.uKt;
    std::optional<int64_t> inner;
    if (mK.present() && uKt.present()) inner = mul(mK.value, uKt.value);

    auto dimsError = [&](size_t j, const std::string& what) {
      report("fused-dims", i, s.inputs[j].loc, "dimension mismatch: " + what,
             {producerNote(producer_[i][j], "writes " + s.inputs[j].name + " as " + producerBlock(i, j)->str())});
    };
    auto reblockError = [&](size_t j, const std::string& what) {
      report("fused-reblock", i, s.inputs[j].loc, "reblocking is not supported inside a fused op "
             "(tenstorrent/budabackend#1300): " + what,
             {producerNote(producer_[i][j], "writes " + s.inputs[j].name + " as " + producerBlock(i, j)->str())});
    };

    if (isReduce(t)) {
      const std::string& dim = s.attributes.reduceDim.value;
      if (dim != "r" && dim != "c") return;
      bool rowReduce = dim == "r";
      // The reduced dimension collapses to one tile.
      if (rowReduce ? (out->mblock.r != 1 || out->ublock.r != 1) : (out->mblock.c != 1 || out->ublock.c != 1)) {
        report("fused-dims", i, mblockLoc(i),
               "dimension mismatch: reduce over " + dim + " must write a single tile " +
                   (rowReduce ? "row" : "column") + ", got " + out->str());
        return;
      }
      if (s.inputs.empty()) return;
      // fused-reduce-mk: reading a buffer of known blocking, the reduce states
      // it: m_k and u_kt are the reduced mblock and ublock dimension (BUDA
      // rejects a reduce without them: "Dimension mismatch").
      if (auto p = producerBlock(i, 0); p && (!mK.present() || !uKt.present())) {
        int64_t wantMk = rowReduce ? p->mblock.r : p->mblock.c, wantUkt = rowReduce ? p->ublock.r : p->ublock.c;
        report("fused-reduce-mk", i, s.attributes.loc.valid() ? s.attributes.loc : typeLoc(i),
               "reduce over " + dim + " reads " + operandDesc(i, 0) + " but does not give m_k and u_kt; it needs m_k " +
                   std::to_string(wantMk) + " and u_kt " + std::to_string(wantUkt) + " (the reduced mblock and ublock " +
                   (rowReduce ? "rows" : "columns") + ")");
        return;
      }
      auto b = inputView(i, 0);
      if (!b) return;
      int64_t keptIn = rowReduce ? b->colTiles() : b->rowTiles();
      int64_t keptOut = rowReduce ? out->colTiles() : out->rowTiles();
      int64_t reducedIn = rowReduce ? b->rowTiles() : b->colTiles();
      if (keptIn != keptOut || (inner && reducedIn != *inner)) {
        dimsError(0, "reduce over " + dim + " reads " + operandDesc(i, 0) + " (" + b->tilesStr() + ") but writes " +
                         out->tilesStr() + (inner ? " with m_k*u_kt = " + std::to_string(*inner) : ""));
        return;
      }
      bool sameKept = rowReduce ? (b->mblock.c == out->mblock.c && b->ublock.c == out->ublock.c)
                                : (b->mblock.r == out->mblock.r && b->ublock.r == out->ublock.r);
      bool reducedAsMk = !mK.present() || !uKt.present() ||
                         (rowReduce ? (b->mblock.r == mK.value && b->ublock.r == uKt.value)
                                    : (b->mblock.c == mK.value && b->ublock.c == uKt.value));
      if (!sameKept || !reducedAsMk)
        reblockError(0, "reduce reads " + operandDesc(i, 0) + " but writes " + out->str() +
                            (mK.present() && uKt.present()
                                 ? " with m_k " + std::to_string(mK.value) + ", u_kt " + std::to_string(uKt.value)
                                 : ""));
      return;
    }

    if (isMatmul(t)) {
      if (s.inputs.size() < 2) return;
      // input 0 is M x K tiles, input 1 is K x N, the output M x N (K = m_k * u_kt).
      std::string k = inner ? std::to_string(*inner) : "K";
      if (auto b = inputView(i, 0)) {
        bool broadcast = summarize(s.inputs[0]).cBcast != nullptr;
        if (b->rowTiles() != out->rowTiles() || (inner && b->colTiles() != *inner))
          dimsError(0, "matmul input 0 " + operandDesc(i, 0) + " is " + b->tilesStr() +
                           (broadcast ? " after broadcast" : "") + " but the matmul needs " +
                           std::to_string(out->rowTiles()) + "x" + k + " tiles (output rows x m_k*u_kt)");
        else if (b->mblock.r != out->mblock.r || b->ublock.r != out->ublock.r)
          reblockError(0, "matmul input 0 " + operandDesc(i, 0) + " is blocked differently from the output rows (" +
                              out->str() + ")");
      }
      if (auto b = inputView(i, 1)) {
        if (b->colTiles() != out->colTiles() || (inner && b->rowTiles() != *inner))
          dimsError(1, "matmul input 1 " + operandDesc(i, 1) + " is " + b->tilesStr() + " but the matmul needs " +
                           k + "x" + std::to_string(out->colTiles()) + " tiles (m_k*u_kt x output columns)");
        else if (b->mblock.c != out->mblock.c || b->ublock.c != out->ublock.c)
          reblockError(1, "matmul input 1 " + operandDesc(i, 1) + " is blocked differently from the output "
                              "columns (" + out->str() + ")");
      }
      return;
    }

    // Element-wise sub-ops (unary, binary, SFPU, quantization): each operand,
    // after its broadcasts, covers exactly the output, with the same blocking
    // except where a broadcast grows the mblock or ublock.
    for (size_t j = 0; j < s.inputs.size(); ++j) {
      auto b = inputView(i, j);
      if (!b) continue;
      TmSummary tms = summarize(s.inputs[j]);
      auto pb = *producerBlock(i, j);
      if (b->rowTiles() != out->rowTiles() || b->colTiles() != out->colTiles()) {
        dimsError(j, s.inputs[j].name + " is " + pb.tilesStr() + (tms.broadcasts() ? " (" + b->tilesStr() +
                                                                                         " after broadcast)"
                                                                                   : "") +
                         " but the sub-op writes " + out->str() + " (" + out->tilesStr() + ")");
      } else if (out->mblock.r < pb.mblock.r || out->ublock.r < pb.ublock.r || out->mblock.c < pb.mblock.c ||
                 out->ublock.c < pb.ublock.c) {
        // Same tile counts: without a broadcast this means mblock and ublock
        // are equal; a broadcast may only grow the mblock and/or the ublock.
        reblockError(j, "reads " + operandDesc(i, j) + " but writes " + out->str());
      }
    }
  }

  // The block an operand presents to sub-op i after its broadcasts; nullopt
  // when unknown (op input, nothing written, shape-changing TMs).
  std::optional<Block> inputView(size_t i, size_t j) const {
    auto b = producerBlock(i, j);
    if (!b) return std::nullopt;
    TmSummary tms = summarize(sub(i).inputs[j]);
    if (tms.reshapes) return std::nullopt;
    // Broadcast factors scale the tile count of a dimension; split them as
    // mblock x ublock only for the tile totals (blocking is judged separately).
    Block v = *b;
    v.mblock.r = mul(v.mblock.r, tms.rFactor);
    v.mblock.c = mul(v.mblock.c, tms.cFactor);
    return v;
  }

  // fused-ublock-fits-dest: dest is double-buffered between math and pack.
  void checkDestCapacity(size_t i) {
    const FusedSubOp& s = sub(i);
    if (!s.ublock.present() || !positive(s.ublock.value)) return;
    if (isIntFusedOp()) return; // integer fused ops have their own, tighter limit (fused-int-ublock-size)
    bool fp32 = user_ && user_->accDf.present() && user_->accDf.value == DataFormat::Float32;
    int limit = maxUblockTiles(target_.arch, fp32);
    int64_t tiles = mul(s.ublock.value.r, s.ublock.value.c);
    if (tiles > limit)
      report("fused-ublock-fits-dest", i, ublockLoc(i),
             "ublock " + dimText(s.ublock.value) + " is " + std::to_string(tiles) + " tiles but at most " +
                 std::to_string(limit) + " fit in half of dest on " + std::string(archName(target_.arch)) +
                 (fp32 ? " with Float32 accumulation" : ""),
             user_ && fp32 ? std::vector<DiagNote>{{user_->accDf.loc, "acc_df of op " + quote(user_->name)}}
                           : std::vector<DiagNote>{});
  }

  // fused-binary-sfpu: binary ops executed on the SFPU read both operands
  // from dest, so they cannot broadcast and cannot leave their result in dest.
  void checkBinarySfpu(size_t i) {
    const FusedSubOp& s = sub(i);
    const std::string& t = s.type.value;
    bool sfpu = t == "maximum" || isQuantFamily(t);
    if (t == "add")
      for (const Operand& in : s.inputs)
        if (formatOf(in.name) == DataFormat::Int32) sfpu = true;
    if (!sfpu) return;
    std::string what = t == "add" ? "add with Int32 inputs" : t;
    for (const Operand& in : s.inputs) {
      TmSummary tms = summarize(in);
      if (tms.broadcasts())
        report("fused-binary-sfpu", i, tmLoc(in, tms.rBcast ? tms.rBcast : tms.cBcast),
               what + " runs on the SFPU and does not support broadcast inside a fused op");
    }
    if (s.output.value == "dest")
      report("fused-binary-sfpu", i, outputLoc(i), what + " runs on the SFPU and cannot write dest");
  }

  // fused-ublock-order, fused-math-fidelity, fused-small-tile: sub-ops cannot
  // differ from the graph op in what the op sets for all of them. Without a
  // user the sub-ops must agree with each other.
  void checkPerOpFields(size_t i) {
    const FusedSubOp& s = sub(i);
    if (const ExtraField* e = findExtra(s, "ublock_order"); e && e->value.is_string()) {
      std::string want;
      if (user_) want = std::string(ublockOrderName(user_->order()));
      else
        for (size_t k = 0; k < i && want.empty(); ++k)
          if (const ExtraField* f = findExtra(sub(k), "ublock_order"); f && f->value.is_string())
            want = f->value.get<std::string>();
      if (!want.empty() && e->value.get<std::string>() != want)
        report("fused-ublock-order", i, e->loc,
               "ublock_order " + e->value.get<std::string>() + " differs from " + want +
                   ": all sub-ops of a fused op use the op's ublock order");
    }
    if (const ExtraField* e = findExtra(s, "math_fidelity"); e && e->value.is_string()) {
      std::string want;
      if (user_ && user_->mathFidelity.present()) want = std::string(mathFidelityName(user_->mathFidelity.value));
      else if (!user_)
        for (size_t k = 0; k < i && want.empty(); ++k)
          if (const ExtraField* f = findExtra(sub(k), "math_fidelity"); f && f->value.is_string())
            want = f->value.get<std::string>();
      if (!want.empty() && e->value.get<std::string>() != want)
        report("fused-math-fidelity", i, e->loc,
               "math_fidelity " + e->value.get<std::string>() + " differs from " + want +
                   ": all sub-ops of a fused op run at the op's math fidelity");
    }
  }

  // fused-reduce-row-order / fused-reduce-col-order: a reduce reading an
  // intermediate gets ublocks in the op's ublock order; over r it needs them
  // column by column, over c row by row. Orders differ only when the mblock
  // has more than one row and more than one column.
  void checkReduceOrder(size_t i) {
    const FusedSubOp& s = sub(i);
    if (!user_ || !isReduce(s.type.value) || s.inputs.empty()) return;
    if (parseBufName(s.inputs[0].name).kind != BufKind::Intermed) return;
    auto b = producerBlock(i, 0);
    if (!b || b->mblock.r == 1 || b->mblock.c == 1) return;
    const std::string& dim = s.attributes.reduceDim.value;
    UblockOrder order = user_->order();
    SourceLoc loc = s.inputs[0].loc;
    std::vector<DiagNote> notes{{user_->ublockOrder.present() ? user_->ublockOrder.loc : user_->loc,
                                 "op " + quote(user_->name) + " has ublock_order " +
                                     std::string(ublockOrderName(order))},
                                producerNote(producer_[i][0], "writes " + s.inputs[0].name + " as " + b->str())};
    if (dim == "r" && order == UblockOrder::R)
      report("fused-reduce-row-order", i, loc,
             "reduce over r reading an intermediate buffer needs the fused op to use ublock_order c", notes);
    else if (dim == "c" && order == UblockOrder::C)
      report("fused-reduce-col-order", i, loc,
             "reduce over c reading an intermediate buffer needs the fused op to use ublock_order r", notes);
  }

  // ------------------------------------------------------------ op-dependent

  // fused-grid-matmul, fused-grid-broadcast, fused-matmul-count, fused-small-tile (op).
  void checkGrid() {
    if (!user_ || !user_->gridSize.present()) return;
    // The tensor is split by the logical grid; grid_transpose only changes placement.
    Dim2 grid = user_->gridSize.value;
    DiagNote gridNote{user_->gridSize.loc, "op " + quote(user_->name) + " has grid_size " + dimText(grid)};
    int matmuls = 0;
    for (size_t i = 0; i < subs_.size(); ++i) {
      const FusedSubOp& s = sub(i);
      if (isMatmul(s.type.value)) {
        ++matmuls;
        // Input 1 is multicast whole to every core, so the cores may split
        // only the output rows. A matmul whose inner dimension is one tile
        // (m_k = u_kt = 1, e.g. the broadcast-by-matmul pybuda emits) is an
        // outer product and splits along columns like an element-wise op.
        bool outerProduct = s.attributes.mK.present() && s.attributes.uKt.present() && s.attributes.mK.value == 1 &&
                            s.attributes.uKt.value == 1;
        if (grid.c != 1 && !outerProduct)
          report("fused-grid-matmul", i, user_->gridSize.loc,
                 "a fused op with a matmul needs a grid of one column [m, 1], got " + dimText(grid),
                 {{typeLoc(i), "matmul sub-op " + quote(s.name)}});
        if (matmuls == archParams(target_.arch).nocCount + 1 && grid != Dim2{1, 1})
          report("fused-matmul-count", i, typeLoc(i),
                 "more than " + std::to_string(archParams(target_.arch).nocCount) + " matmuls in a fused op on a " +
                     dimText(grid) + " grid: each matmul multicasts its input 1 and there are only " +
                     std::to_string(archParams(target_.arch).nocCount) + " NOCs",
                 {gridNote});
      }
      for (const Operand& in : s.inputs) {
        TmSummary tms = summarize(in);
        // A broadcast must see the whole input: the broadcast dimension is not split over cores.
        if (tms.rBcast && grid.r != 1)
          report("fused-grid-broadcast", i, user_->gridSize.loc,
                 "row broadcast of " + in.name + " needs a grid of one row [1, n], got " + dimText(grid),
                 {{tmLoc(in, tms.rBcast), "row broadcast here"}});
        if (tms.cBcast && grid.c != 1)
          report("fused-grid-broadcast", i, user_->gridSize.loc,
                 "column broadcast of " + in.name + " needs a grid of one column [m, 1], got " + dimText(grid),
                 {{tmLoc(in, tms.cBcast), "column broadcast here"}});
      }
    }
    if (user_->tileDim.present() && user_->tileDim.value != Dim2{32, 32})
      if (int w = outputWriter(); w >= 0)
        report("fused-small-tile", w, user_->tileDim.loc,
               "op " + quote(user_->name) + " uses tile_dim " + dimText(user_->tileDim.value) +
                   ": fused ops support only 32x32 tiles",
               {{outputLoc(w), "sub-op " + quote(sub(w).name) + " writes the op's output"}});
  }

  // The sub-op writing `output` in the last schedule, or -1.
  int outputWriter() const {
    for (size_t i = subs_.size(); i-- > 0;)
      if (sub(i).output.value == "output") return static_cast<int>(i);
    return -1;
  }

  // fused-output-shape: the sub-op writing `output` produces the op's block.
  void checkOutputShape() {
    if (!user_) return;
    int w = outputWriter();
    auto opBlock = blockOf(*user_);
    if (w < 0 || !opBlock) return;
    auto b = blockOf(sub(w));
    if (!b) return;
    if (b->rowTiles() != opBlock->rowTiles() || b->colTiles() != opBlock->colTiles())
      report("fused-output-shape", w, mblockLoc(w),
             "writes the fused op's output as " + b->str() + " (" + b->tilesStr() + ") but op " +
                 quote(user_->name) + " produces " + opBlock->str() + " (" + opBlock->tilesStr() + ")",
             {{user_->mblock.loc, "mblock of op " + quote(user_->name)}});
  }

  // The integer fused-op constraints (fused-int-*).
  void checkIntOps() {
    if (!user_) return;
    bool intOp = isIntFusedOp();
    SourceLoc accLoc = user_->accDf.present() ? user_->accDf.loc : user_->loc;
    std::string accName = user_->accDf.present() ? std::string(dataFormatName(user_->accDf.value)) : "unset";
    DiagNote accNote{accLoc, "op " + quote(user_->name) + " has acc_df " + accName};

    bool hasRequantOrDequant = false;
    for (size_t i = 0; i < subs_.size(); ++i) hasRequantOrDequant |= isRequantOrDequant(type(i));

    for (size_t i = 0; i < subs_.size(); ++i) {
      const FusedSubOp& s = sub(i);
      const std::string& t = s.type.value;
      if (!intOp) {
        // 4 (accumulation) and 2: quantization needs the integer path, and
        // integer data cannot go through the float FPU path.
        if (isQuantFamily(t)) {
          report("fused-int-formats", i, typeLoc(i),
                 t + " needs an integer fused op: acc_df has to be Int32, got " + accName, {accNote});
          continue;
        }
        for (const Operand& in : s.inputs)
          if (auto df = formatOf(in.name); df && isIntFormat(*df) && parseBufName(in.name).kind != BufKind::Dest) {
            report("fused-int-float-mix", i, in.loc,
                   in.name + " is " + std::string(dataFormatName(*df)) + " but the fused op accumulates in " +
                       accName + ": integer and float operations cannot be fused together",
                   {accNote});
            break;
          }
        continue;
      }
      // 1: the integer FPU path implements only these.
      static const std::set<std::string> kIntOps = {"nop", "datacopy", "add", "subtract", "multiply",
                                                    "quantization", "dequantization", "requantization"};
      if (!kIntOps.count(t))
        report("fused-int-op-type", i, typeLoc(i),
               quote(t) + " is not supported in an integer fused op (only nop, add, subtract, multiply, "
               "quantization, dequantization and requantization)",
               {accNote});
      // 3
      if (!isRequantOrDequant(t))
        for (const Operand& in : s.inputs)
          if (in.name == "dest")
            report("fused-int-dest-input", i, in.loc,
                   "in an integer fused op only requantization and dequantization can read dest", {accNote});
      // 5: integer inputs, except the float operands of the quantization family.
      if (!isQuantFamily(t))
        for (const Operand& in : s.inputs)
          if (auto df = formatOf(in.name); df && parseBufName(in.name).kind == BufKind::Input && !isIntFormat(*df))
            report("fused-int-input-df", i, in.loc,
                   in.name + " is " + std::string(dataFormatName(*df)) + ": inputs of " + t +
                       " in an integer fused op have to be Int8 or Int32",
                   {{user_->inDfLoc, "in_df of op " + quote(user_->name)}});
      // 7: requantization/dequantization keep two operands in dest.
      int64_t limit = hasRequantOrDequant ? 2 : 4;
      if (s.ublock.present() && mul(s.ublock.value.r, s.ublock.value.c) > limit)
        report("fused-int-ublock-size", i, ublockLoc(i),
               "ublock " + dimText(s.ublock.value) + " is more than " + std::to_string(limit) +
                   " tiles, the limit of an integer fused op" +
                   (hasRequantOrDequant ? " with requantization or dequantization" : ""));
      // 8
      if (t == "quantization")
        for (size_t j = 0; j < s.inputs.size() && j < 2; ++j) {
          const Operand& in = s.inputs[j];
          auto df = formatOf(in.name);
          if (parseBufName(in.name).kind != BufKind::Input || (df && *df != DataFormat::Float32))
            report("fused-int-quantization-inputs", i, in.loc,
                   "quantization operands have to be Float32 fused op inputs, got " + in.name +
                       (df ? " (" + std::string(dataFormatName(*df)) + ")" : ""));
        }
      // 9: requantization/dequantization: input 0 is the scalar; with dest as
      // input 1 it must be a Float32 op input, otherwise an integer tensor
      // scaled by a Float32 input 1.
      if (isRequantOrDequant(t) && s.inputs.size() >= 2) {
        const Operand& in0 = s.inputs[0];
        const Operand& in1 = s.inputs[1];
        auto df0 = formatOf(in0.name);
        auto df1 = formatOf(in1.name);
        auto dfStr = [](std::optional<DataFormat> df) {
          return df ? " (" + std::string(dataFormatName(*df)) + ")" : std::string();
        };
        if (in0.name == "dest")
          report("fused-int-requant-inputs", i, in0.loc, t + " cannot read dest as input 0; dest goes to input 1");
        else if (in1.name == "dest") {
          if (parseBufName(in0.name).kind != BufKind::Input || (df0 && *df0 != DataFormat::Float32))
            report("fused-int-requant-inputs", i, in0.loc,
                   t + " with dest as input 1 needs input 0 to be a Float32 fused op input, got " + in0.name +
                       dfStr(df0));
        } else {
          if (df0 && !isIntFormat(*df0))
            report("fused-int-requant-inputs", i, in0.loc,
                   t + " needs input 0 to be Int8 or Int32, got " + in0.name + dfStr(df0));
          if (df1 && *df1 != DataFormat::Float32)
            report("fused-int-requant-inputs", i, in1.loc,
                   t + " needs input 1 to be Float32 (or dest), got " + in1.name + dfStr(df1));
        }
      }
    }
    if (!intOp) return;
    // 4: intermediates hold integer data.
    if (user_->intermedDf.present() && !isIntFormat(user_->intermedDf.value))
      for (size_t i = 0; i < subs_.size(); ++i)
        if (parseBufName(sub(i).output.value).kind == BufKind::Intermed) {
          report("fused-int-formats", i, user_->intermedDf.loc,
                 "intermed_df of an integer fused op has to be Int8 or Int32, got " +
                     std::string(dataFormatName(user_->intermedDf.value)) + " (op " + quote(user_->name) + ")",
                 {{outputLoc(i), "writes " + sub(i).output.value}});
          break;
        }
    // 6: the output is integer unless a dequantization produces it.
    if (int w = outputWriter(); w >= 0 && user_->outDf.present()) {
      DataFormat out = user_->outDf.value;
      bool dequantLast = type(w) == "dequantization";
      if (dequantLast ? out != DataFormat::Float32 : !isIntFormat(out))
        report("fused-int-output-df", w, user_->outDf.loc,
               std::string("out_df of op ") + quote(user_->name) + " is " + std::string(dataFormatName(out)) +
                   (dequantLast ? " but a fused op ending in dequantization outputs Float32"
                                : " but an integer fused op outputs Int8 or Int32 (Float32 only after dequantization)"),
               {{outputLoc(w), "sub-op " + quote(sub(w).name) + " writes the op's output"}});
    }
  }

  const FusedOp& fused_;
  const ValidationTarget& target_;
  const Op* user_; // the graph op using the fused op, or null
  Reporter& reporter_;
  std::vector<SubRef> subs_; // every sub-op in execution order
  std::vector<std::vector<int>> producer_;
  std::vector<std::vector<size_t>> readers_;
  std::map<std::string, std::vector<size_t>> inputReaders_;
};

} // namespace

void validateFusedOps(const Netlist& netlist, const ValidationTarget& target, DiagnosticEngine& diags) {
  Reporter reporter(diags);
  for (const FusedOp& fused : netlist.fusedOps) {
    std::vector<const Op*> users;
    for (const Graph& g : netlist.graphs)
      for (const Op& op : g.ops)
        if (op.type.value == "fused_op" && op.attributes.fusedOpId.present() &&
            op.attributes.fusedOpId.value == fused.id)
          users.push_back(&op);
    if (users.empty()) {
      FusedOpChecker(fused, target, nullptr, reporter).run();
      continue;
    }
    for (const Op* user : users) FusedOpChecker(fused, target, user, reporter).run();
  }
}

} // namespace tessera::netlist
