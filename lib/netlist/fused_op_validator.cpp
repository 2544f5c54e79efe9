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
#include "netlist/fused_op_checker.hpp"

namespace tessera::netlist::fused_check {

void FusedOpChecker::run() {
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

void FusedOpChecker::analyseDataflow() {
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

std::optional<Block> FusedOpChecker::producerBlock(size_t i, size_t j) const {
  int p = producer_[i][j];
  return p < 0 ? std::nullopt : blockOf(sub(p));
}

std::string FusedOpChecker::operandDesc(size_t i, size_t j) const {
  const Operand& in = sub(i).inputs[j];
  int p = producer_[i][j];
  auto b = producerBlock(i, j);
  if (p < 0 || !b) return in.name;
  return in.name + " (" + b->str() + " from sub-op " + quote(sub(p).name) + ")";
}

std::optional<DataFormat> FusedOpChecker::formatOf(const std::string& name) const {
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

SourceLoc FusedOpChecker::tmLoc(const Operand& in, const Tm* tm) {
  if (tm && tm->loc.valid()) return tm->loc;
  return in.tmsLoc.valid() ? in.tmsLoc : in.loc;
}

DiagNote FusedOpChecker::producerNote(int p, const std::string& what) const {
  return {sub(p).loc, "sub-op " + quote(sub(p).name) + " (schedule " + std::to_string(subs_[p].sched) + ") " + what};
}

void FusedOpChecker::checkNames(size_t i) {
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

void FusedOpChecker::checkOutputWriters() {
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

void FusedOpChecker::checkOpKind(size_t i) {
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

void FusedOpChecker::checkTms(size_t i) {
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

void FusedOpChecker::checkMatmulBroadcast(size_t i, size_t j, const TmSummary& tms, const std::optional<Block>& b) {
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

void FusedOpChecker::checkDest(size_t i) {
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

void FusedOpChecker::checkIntermedLifetimes() {
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

void FusedOpChecker::checkIntermedUblockReuse() {
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

} // namespace tessera::netlist::fused_check

namespace tessera::netlist {

using fused_check::FusedOpChecker;
using fused_check::Reporter;

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