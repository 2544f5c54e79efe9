// The fused-op checker shared by fused_op_validator.cpp (dataflow and
// structure rules) and fused_op_shape_rules.cpp (matmul, dims, broadcast,
// per-op fields, grid and integer rules). Private to lib/netlist.
#pragma once

#include "netlist/fused_buffer.hpp"
#include "netlist/validator.hpp"

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


namespace tessera::netlist::fused_check {

// ---------------------------------------------------------------- vocabulary


inline bool isMatmul(const std::string& t) { return t == "matmul"; }
inline bool isReduce(const std::string& t) { return t == "reduce"; }
inline bool isMatmulOrReduce(const std::string& t) { return isMatmul(t) || isReduce(t); }
inline bool isQuantFamily(const std::string& t) {
  return t == "quantization" || t == "dequantization" || t == "requantization";
}
inline bool isRequantOrDequant(const std::string& t) { return t == "dequantization" || t == "requantization"; }
// Ops the hardware can tile-broadcast into: the FPU binary ops (source B).
inline bool isFpuBinary(const std::string& t) { return t == "add" || t == "subtract" || t == "multiply"; }
inline bool isIntFormat(DataFormat f) { return f == DataFormat::Int8 || f == DataFormat::Int32; }


// Product that saturates instead of overflowing (dimensions come from user input).
inline int64_t mul(int64_t a, int64_t b) {
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

inline bool positive(Dim2 d) { return d.r > 0 && d.c > 0; }

inline std::optional<Block> blockOf(const FusedSubOp& s) {
  if (!s.mblock.present() || !s.ublock.present() || !positive(s.mblock.value) || !positive(s.ublock.value))
    return std::nullopt;
  return Block{s.mblock.value, s.ublock.value};
}

inline std::optional<Block> blockOf(const Op& op) {
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

inline TmSummary summarize(const Operand& in) {
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

inline const ExtraField* findExtra(const FusedSubOp& s, std::string_view key) {
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

  void run();

private:
  // ------------------------------------------------------------ dataflow
  // producer_[i][j]: index in subs_ of the sub-op that last wrote the
  // intermedN/dest buffer read as input j of sub-op i before i runs; -1 when
  // the operand is an op input or nothing wrote the buffer.
  // readers_[p]: the sub-ops (in order, each once) reading what sub-op p wrote.
  // inputReaders_[name]: the sub-ops (each once) reading op input `name`.
  void analyseDataflow();

  const FusedSubOp& sub(size_t i) const { return *subs_[i].op; }
  const std::string& type(size_t i) const { return subs_[i].op->type.value; }

  // The block written by the producer of operand j of sub-op i, if known.
  std::optional<Block> producerBlock(size_t i, size_t j) const;

  // "intermed0 (mblock [..] x ublock [..] from sub-op 'x')"
  std::string operandDesc(size_t i, size_t j) const;

  bool producedByMatmulOrReduce(int p) const { return p >= 0 && isMatmulOrReduce(type(p)); }

  // Format of a buffer as seen by the graph op; nullopt without a user or format.
  std::optional<DataFormat> formatOf(const std::string& name) const;

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
  static SourceLoc tmLoc(const Operand& in, const Tm* tm);
  DiagNote producerNote(int p, const std::string& what) const;

  // ------------------------------------------------------------ structure

  // fused-input-range, fused-intermed-range, fused-output (names), fused-pop-list.
  void checkNames(size_t i);

  // fused-output: exactly one sub-op writes `output`, and it is in the last schedule.
  void checkOutputWriters();

  // fused-unsupported-op, fused-reduce-max-rc-z, fused-schedule-split, fused-small-tile (sub-op).
  void checkOpKind(size_t i);

  // fused-transpose, fused-tile-broadcast-input and the broadcast rules
  // (fused-bcast-*, fused-rc-broadcast, fused-matmul-col-bcast, fused-matmul-ublock-bcast).
  void checkTms(size_t i);

  // Broadcast into a matmul operand (constraint 24 and issue 1135).
  void checkMatmulBroadcast(size_t i, size_t j, const TmSummary& tms, const std::optional<Block>& b);

  // fused-dest-* rules.
  void checkDest(size_t i);

  // fused-intermed-lifetime and fused-intermed-not-popped: simulate the
  // intermediate buffers (written -> read -> popped) through the schedules.
  void checkIntermedLifetimes();

  // fused-intermed-ublock-reuse: net2hlks sizes an intermediate buffer for
  // two of the biggest ublocks written to it, and L1 buffers hold whole
  // ublocks. Reusing the buffer for ublocks of another size works only when
  // that size divides the capacity (corpus layernorm netlists reuse a buffer
  // for 4- and 2-tile ublocks); otherwise a ublock would wrap around the end
  // of the buffer.
  void checkIntermedUblockReuse();

  // Matmul-specific rules (constraints 12-18 and 25).
  void checkMatmul(size_t i);

  // fused-dims and fused-reblock: what a sub-op writes must follow from what it
  // reads (operands of known shape only: intermediates and dest).
  void checkDims(size_t i);

  // The block an operand presents to sub-op i after its broadcasts; nullopt
  // when unknown (op input, nothing written, shape-changing TMs).
  std::optional<Block> inputView(size_t i, size_t j) const;

  // fused-ublock-fits-dest: dest is double-buffered between math and pack.
  void checkDestCapacity(size_t i);

  // fused-binary-sfpu: binary ops executed on the SFPU read both operands
  // from dest, so they cannot broadcast and cannot leave their result in dest.
  void checkBinarySfpu(size_t i);

  // fused-ublock-order, fused-math-fidelity, fused-small-tile: sub-ops cannot
  // differ from the graph op in what the op sets for all of them. Without a
  // user the sub-ops must agree with each other.
  void checkPerOpFields(size_t i);

  // fused-reduce-row-order / fused-reduce-col-order: a reduce reading an
  // intermediate gets ublocks in the op's ublock order; over r it needs them
  // column by column, over c row by row. Orders differ only when the mblock
  // has more than one row and more than one column.
  void checkReduceOrder(size_t i);

  // ------------------------------------------------------------ op-dependent

  // fused-grid-matmul, fused-grid-broadcast, fused-matmul-count, fused-small-tile (op).
  void checkGrid();

  // The sub-op writing `output` in the last schedule, or -1.
  int outputWriter() const;

  // fused-output-shape: the sub-op writing `output` produces the op's block.
  void checkOutputShape();

  // The integer fused-op constraints (fused-int-*).
  void checkIntOps();

  const FusedOp& fused_;
  const ValidationTarget& target_;
  const Op* user_; // the graph op using the fused op, or null
  Reporter& reporter_;
  std::vector<SubRef> subs_; // every sub-op in execution order
  std::vector<std::vector<int>> producer_;
  std::vector<std::vector<size_t>> readers_;
  std::map<std::string, std::vector<size_t>> inputReaders_;
};

} // namespace tessera::netlist::fused_check
