// Fused-op rules that need shapes, the graph op or formats: matmul and
// broadcast rules, dims, dest capacity, binary SFPU, per-op fields, reduce
// order, grid, output shape and the integer rules. The rule table is in
// fused_op_validator.cpp.
#include "netlist/fused_op_checker.hpp"

namespace tessera::netlist::fused_check {

void FusedOpChecker::checkMatmul(size_t i) {
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

void FusedOpChecker::checkDims(size_t i) {
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

std::optional<Block> FusedOpChecker::inputView(size_t i, size_t j) const {
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

void FusedOpChecker::checkDestCapacity(size_t i) {
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

void FusedOpChecker::checkBinarySfpu(size_t i) {
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

void FusedOpChecker::checkPerOpFields(size_t i) {
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

void FusedOpChecker::checkReduceOrder(size_t i) {
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

void FusedOpChecker::checkGrid() {
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

int FusedOpChecker::outputWriter() const {
  for (size_t i = subs_.size(); i-- > 0;)
    if (sub(i).output.value == "output") return static_cast<int>(i);
  return -1;
}

void FusedOpChecker::checkOutputShape() {
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

void FusedOpChecker::checkIntOps() {
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

} // namespace tessera::netlist::fused_check
