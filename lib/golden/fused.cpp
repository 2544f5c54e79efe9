// The reference model of a fused op (docs/golden-fused-ops.md): its schedules
// are run in order, each sub-op evaluated with evalOp on whole tensors.
//
// Why whole tensors: a sub-op's mblock x ublock is the block one core writes
// for one t, so each core runs the schedule exactly once per t (and per input
// entry). Element-wise sub-ops give the same values whichever way the tensor is
// cut; a matmul sees whole rows of input 0 and whole columns of input 1 as the
// grid's multicasts deliver them. Only a sub-op that mixes values along a
// dimension the op's grid splits sees one core's slice: a reduce over r/c and
// an r/c broadcast. Those are evaluated slice by slice (per core) below; the
// net2hlks constraints keep the broadcast case out of valid netlists, so for
// them whole-tensor and per-core evaluation agree, as in BUDA's golden model.
//
// Rounding points: every sub-op's result is rounded to the dest register's
// format (destFormatOf(acc_df)) where the kernel computes it, before its relu;
// what it writes is then stored in its buffer's format: intermedN in
// intermed_df, output in out_df (dest stays in the dest format).
#include "golden/fused.hpp"
#include "netlist/fused_buffer.hpp"

#include "formats/formats.hpp"
#include "golden/product.hpp"
#include "golden/tm.hpp"
#include "netlist/text.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::golden {

namespace {

using netlist::FusedOp;
using netlist::FusedSubOp;
using netlist::OpAttributes;
using netlist::Operand;
using netlist::quote;
using netlist::TmKind;
using netlist::BufKind;
using netlist::BufName;
using netlist::parseBufName;


// Copies the [rows r0.., cols c0..] window of every (w, z) matrix.
Tensor window(const Tensor& in, int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
  Tensor out(in.w, in.z, rows, cols);
  for (int64_t w = 0; w < in.w; ++w)
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t r = 0; r < rows; ++r) {
        const float* src = in.matrix(w, z) + (r0 + r) * in.c + c0;
        std::copy(src, src + cols, out.matrix(w, z) + r * cols);
      }
  return out;
}

void paste(Tensor& out, const Tensor& part, int64_t r0, int64_t c0) {
  for (int64_t w = 0; w < part.w; ++w)
    for (int64_t z = 0; z < part.z; ++z)
      for (int64_t r = 0; r < part.r; ++r) {
        const float* src = part.matrix(w, z) + r * part.c;
        std::copy(src, src + part.c, out.matrix(w, z) + (r0 + r) * out.c + c0);
      }
}

// Applies `fn` to each of the rows x cols slices one core of the op's grid
// holds, and puts the results back together in grid order.
template <class Fn>
Tensor perCore(const Tensor& in, int64_t rows, int64_t cols, const std::string& what, Fn&& fn) {
  if (rows == 1 && cols == 1) return fn(in);
  const int64_t tile = formats::kTileDim;
  if (in.r % (rows * tile) != 0 || in.c % (cols * tile) != 0)
    throw GoldenError(what + ": " + std::to_string(in.r / tile) + "x" + std::to_string(in.c / tile) +
                      " tiles cannot be split over a grid of " + std::to_string(rows) + "x" +
                      std::to_string(cols) + " cores");
  const int64_t sliceR = in.r / rows, sliceC = in.c / cols;
  Tensor out, first; // `first`: the shape every slice result must have
  for (int64_t gr = 0; gr < rows; ++gr)
    for (int64_t gc = 0; gc < cols; ++gc) {
      Tensor part = fn(window(in, gr * sliceR, sliceR, gc * sliceC, sliceC));
      if (gr == 0 && gc == 0) {
        first = part;
        first.data.clear();
        out = Tensor(part.w, part.z, part.r * rows, part.c * cols);
      } else if (part.w != first.w || part.z != first.z || part.r != first.r || part.c != first.c) {
        throw GoldenError(what + ": cores produced slices of different shapes");
      }
      paste(out, part, gr * part.r, gc * part.c);
    }
  return out;
}

// formats::quantize reports misuse with std::invalid_argument; callers of the
// model expect GoldenError only.
void roundTo(DataFormat df, Tensor& t) {
  try {
    formats::quantize(df, t);
  } catch (const std::invalid_argument& e) {
    throw GoldenError(e.what());
  }
}

std::string shapeText(const Tensor& t) {
  return "[w " + std::to_string(t.w) + ", t " + std::to_string(t.z) + ", " + std::to_string(t.r / formats::kTileDim) +
         "x" + std::to_string(t.c / formats::kTileDim) + " tiles]";
}

// The state of one intermediate buffer.
struct Intermed {
  std::optional<Tensor> value; // empty: free (never written or popped)
  std::string writer;          // sub-op that wrote the current or last value
  std::string popper;          // sub-op that popped it, when free after a pop
};

class FusedExecutor {
public:
  FusedExecutor(const OpSpec& spec, const FusedOp& fused, std::span<const Tensor> inputs)
      : spec_(spec), fused_(fused) {
    // The unpacker reads each input from L1 in its in_df, before any sub-op
    // TM: round once here so a broadcast copies stored values.
    // Inputs are read in place; only one that needs rounding is copied.
    rounded_.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      inputs_.push_back(&inputs[i]);
      if (spec.inDf.size() != inputs.size() || !spec.roundsInput(i)) continue;
      rounded_[i] = inputs[i];
      inputs_[i] = &*rounded_[i];
      try {
        roundTo(spec.inDf[i], *rounded_[i]);
      } catch (const GoldenError& e) {
        throw GoldenError(where() + "input" + std::to_string(i) + ": " + e.what());
      }
    }
    if (fused.intermediates.present() && fused.intermediates.value > 0)
      intermeds_.resize(static_cast<size_t>(fused.intermediates.value));
  }

  Tensor run() {
    if (fused_.schedules.empty()) throw GoldenError(where() + "has no schedules");
    for (size_t s = 0; s < fused_.schedules.size(); ++s) {
      // dest lives within one schedule (net2hlks fused-op constraint General 6).
      dest_.reset();
      for (const FusedSubOp& sub : fused_.schedules[s].ops) {
        try {
          runSubOp(sub);
        } catch (const GoldenError& e) {
          throw GoldenError(where() + "sub-op " + quote(sub.name) + ": " + e.what());
        }
      }
    }
    for (size_t i = 0; i < intermeds_.size(); ++i)
      if (intermeds_[i].value)
        throw GoldenError(where() + "intermed" + std::to_string(i) + " written by sub-op " +
                          quote(intermeds_[i].writer) + " is never popped");
    if (!output_) throw GoldenError(where() + "no sub-op writes the fused op's output");
    Tensor out = std::move(*output_);
    const int64_t tile = formats::kTileDim;
    if (out.z != spec_.t || out.r != spec_.rowTiles() * tile || out.c != spec_.colTiles() * tile)
      throw GoldenError(where() + "sub-op " + quote(outputWriter_) + " writes the output as " + shapeText(out) +
                        " but the op produces t " + std::to_string(spec_.t) + ", " +
                        std::to_string(spec_.rowTiles()) + "x" + std::to_string(spec_.colTiles()) + " tiles");
    return out;
  }

private:
  // Where dest's value came from: the sub-op just before the reader.
  struct Dest {
    Tensor value;
    std::string writer;
    size_t writtenAt = 0; // sub-op counter of the writer
  };

  std::string where() const {
    return "fused op " + quote(spec_.name) + " (fused_op_id " + fused_.id + "): ";
  }

  static bool hasBroadcast(const Operand& in, char dim) {
    return std::any_of(in.tms.begin(), in.tms.end(),
                       [&](const netlist::Tm& tm) { return tm.kind == TmKind::Broadcast && tm.dim == dim; });
  }

  // The value operand `in` presents to the sub-op, after its TMs. `take`:
  // the buffer is not read again (dest, or an intermediate this sub-op pops),
  // so its value is moved out instead of copied.
  Tensor readOperand(const Operand& in, size_t counter, bool take) {
    BufName b = parseBufName(in.name);
    const Tensor* src = nullptr;
    switch (b.kind) {
    case BufKind::Input:
      if (static_cast<size_t>(b.index) >= inputs_.size())
        throw GoldenError("reads " + in.name + " but the op has " + std::to_string(inputs_.size()) + " input(s)");
      src = inputs_[b.index];
      take = false; // every input stays readable
      break;
    case BufKind::Intermed: {
      if (static_cast<size_t>(b.index) >= intermeds_.size())
        throw GoldenError("reads " + in.name + " but the fused op declares " + std::to_string(intermeds_.size()) +
                          " intermediate(s)");
      const Intermed& buf = intermeds_[b.index];
      if (!buf.value)
        throw GoldenError("reads " + in.name + (buf.popper.empty()
                                                    ? std::string(", which no earlier sub-op writes")
                                                    : ", which sub-op " + quote(buf.popper) + " popped"));
      src = &*buf.value;
      break;
    }
    case BufKind::Dest:
      if (!dest_)
        throw GoldenError("reads dest, but the sub-op before it in this schedule did not write dest");
      if (dest_->writtenAt + 1 != counter)
        throw GoldenError("reads dest, but dest was written by sub-op " + quote(dest_->writer) +
                          ", not by the sub-op just before (each value in dest is read by the next sub-op only)");
      if (!in.tms.empty()) throw GoldenError("TMs on dest are not supported (dest is read in place)");
      src = &dest_->value;
      break;
    default: throw GoldenError("invalid input name " + quote(in.name) + " (expected inputN, intermedN or dest)");
    }
    if (in.tms.empty()) return take ? std::move(*const_cast<Tensor*>(src)) : *src;
    for (const netlist::Tm& tm : in.tms)
      if (tm.kind != TmKind::Broadcast && tm.kind != TmKind::TileBroadcast)
        throw GoldenError(std::string(netlist::tmKindName(tm.kind)) + " on " + in.name +
                          " is not supported inside a fused op (only broadcast and tile_broadcast)");
    // A core broadcasts the slice it holds: along a dimension the grid
    // splits, that is not the whole operand.
    int64_t rows = hasBroadcast(in, 'r') ? spec_.grid.r : 1;
    int64_t cols = hasBroadcast(in, 'c') ? spec_.grid.c : 1;
    return perCore(*src, rows, cols, "broadcast of " + in.name,
                   [&](const Tensor& slice) { return applyTms(slice, in.tms); });
  }

  // The format a buffer stores its values in.
  std::optional<DataFormat> formatOf(const std::string& name) const {
    BufName b = parseBufName(name);
    switch (b.kind) {
    case BufKind::Input:
      if (static_cast<size_t>(b.index) < spec_.inDf.size()) return spec_.inDf[b.index];
      return std::nullopt;
    case BufKind::Intermed: return spec_.intermedDf;
    case BufKind::Dest: return destFormatOf(spec_.accDf);
    case BufKind::Output: return spec_.outDf;
    default: return std::nullopt;
    }
  }

  // The sub-op's attributes plus what it inherits from the fused op.
  OpAttributes attributesOf(const FusedSubOp& sub) const {
    OpAttributes a = sub.attributes;
    // approximate_mode is set on the graph op and holds for every sub-op.
    if (!a.approximateMode.present() && spec_.attrs && spec_.attrs->approximateMode.present()) {
      a.approximateMode = spec_.attrs->approximateMode;
      a.all.push_back({"approximate_mode", spec_.attrs->approximateMode.loc, spec_.attrs->approximateMode.value, true});
    }
    // Corpus quantization sub-ops write zero_point next to type, not under attributes.
    if (!a.zeroPoint.present())
      for (const netlist::ExtraField& e : sub.extra)
        if (e.key == "zero_point" && e.value.is_number()) {
          a.zeroPoint.set(e.value.get<double>(), e.loc);
          a.all.push_back({"zero_point", e.loc, e.value, true});
        }
    return a;
  }

  void runSubOp(const FusedSubOp& sub) {
    const size_t counter = ++counter_;
    const std::string& type = sub.type.value;
    if (!sub.type.present() || type.empty()) throw GoldenError("has no type");
    if (type == "fused_op" || type == "splice" || type == "embedding" || type == "depthwise")
      throw GoldenError("op type " + quote(type) + " cannot be fused");
    if (type == "matmul" && sub.attributes.identity.present() && sub.attributes.identity.value)
      throw GoldenError("sparse matmul (identity: true) cannot be fused");

    BufName target = parseBufName(sub.output.value);
    if (target.kind == BufKind::Input || target.kind == BufKind::Invalid)
      throw GoldenError("invalid output " + quote(sub.output.value) + " (expected output, dest or intermedN)");
    if (target.kind == BufKind::Intermed && static_cast<size_t>(target.index) >= intermeds_.size())
      throw GoldenError("writes " + sub.output.value + " but the fused op declares " +
                        std::to_string(intermeds_.size()) + " intermediate(s)");
    if (target.kind == BufKind::Output && output_)
      throw GoldenError("writes the output, which sub-op " + quote(outputWriter_) + " already wrote");

    std::vector<Tensor> operands;
    operands.reserve(sub.inputs.size());
    for (size_t j = 0; j < sub.inputs.size(); ++j) {
      // Moved out only when no other operand of this sub-op reads the same
      // buffer and nothing reads its value later: dest (read by the next
      // sub-op only) or an intermediate this sub-op pops.
      const std::string& name = sub.inputs[j].name;
      bool take = std::count_if(sub.inputs.begin(), sub.inputs.end(), [&](const Operand& o) { return o.name == name; }) == 1;
      if (take && parseBufName(name).kind == BufKind::Intermed)
        take = std::any_of(sub.pop.begin(), sub.pop.end(), [&](const auto& p) { return p.value == name; }) ||
               std::any_of(sub.popLast.begin(), sub.popLast.end(), [&](const auto& p) { return p.value == name; });
      operands.push_back(readOperand(sub.inputs[j], counter, take));
    }

    OpAttributes attrs = attributesOf(sub);
    std::vector<DataFormat> inDf;
    for (const Operand& in : sub.inputs)
      if (auto df = formatOf(in.name)) inDf.push_back(*df);
    if (inDf.size() != sub.inputs.size()) inDf.clear();
    // A dequantization reading dest as input 1 lists the scale first; BUDA's
    // golden swaps them back, so evalOp sees the standalone order (value, scale).
    if (type == "dequantization" && sub.inputs.size() == 2 && sub.inputs[1].name == "dest") {
      std::swap(operands[0], operands[1]);
      if (!inDf.empty()) std::swap(inDf[0], inDf[1]);
    }

    OpSpec s;
    s.name = spec_.name + "." + sub.name;
    s.type = type;
    s.attrs = &attrs;
    s.t = sub.t.present() ? sub.t.value : spec_.t;
    s.grid = spec_.grid;
    s.mblock = sub.mblock.present() ? sub.mblock.value : spec_.mblock;
    s.ublock = sub.ublock.present() ? sub.ublock.value : spec_.ublock;
    s.inDf = std::move(inDf);
    s.outDf = *formatOf(sub.output.value);
    s.accDf = spec_.accDf;
    s.intermedDf = spec_.intermedDf;
    s.fidelity = spec_.fidelity;
    s.arch = spec_.arch;
    // Every sub-op computes in dest (evalOp rounds there, then applies
    // relu); L1 buffers then store their format, dest keeps its own.
    s.roundOutput = target.kind != BufKind::Output || spec_.roundOutput;

    Tensor result = evaluate(s, operands);
    // The packer stores quantization results as Int8 whatever the buffer.
    if (type == "quantization" || type == "requantization") roundTo(DataFormat::Int8, result);
    // Stored in the buffer's format (a no-op when evalOp already rounded).
    if (s.roundOutput) roundTo(s.outDf, result);

    // Pops free intermediates after the sub-op read them; inputs are not
    // modelled as buffers (every input stays readable).
    for (const auto* list : {&sub.pop, &sub.popLast})
      for (const netlist::Field<std::string>& p : *list) {
        BufName b = parseBufName(p.value);
        if (b.kind != BufKind::Intermed || static_cast<size_t>(b.index) >= intermeds_.size()) continue;
        Intermed& buf = intermeds_[b.index];
        buf.value.reset();
        buf.popper = sub.name;
      }

    switch (target.kind) {
    case BufKind::Intermed: {
      Intermed& buf = intermeds_[target.index];
      if (buf.value)
        throw GoldenError("writes " + sub.output.value + " while it still holds the data written by sub-op " +
                          quote(buf.writer) + " (pop it first)");
      buf.value = std::move(result);
      buf.writer = sub.name;
      buf.popper.clear();
      break;
    }
    case BufKind::Dest: dest_ = Dest{std::move(result), sub.name, counter}; break;
    case BufKind::Output:
      output_ = std::move(result);
      outputWriter_ = sub.name;
      break;
    default: break;
    }
  }

  // evalOp, except that a reduce over a dimension the grid splits reduces
  // each core's slice only (one partial result per core).
  Tensor evaluate(const OpSpec& s, std::vector<Tensor>& operands) const {
    if (s.type == "reduce" && operands.size() == 1 && s.attrs->reduceDim.present()) {
      const std::string& dim = s.attrs->reduceDim.value;
      int64_t rows = dim == "r" ? s.grid.r : 1;
      int64_t cols = dim == "c" ? s.grid.c : 1;
      if (rows > 1 || cols > 1) {
        OpSpec core = s;
        core.grid = {rows > 1 ? 1 : s.grid.r, cols > 1 ? 1 : s.grid.c};
        return perCore(operands[0], rows, cols, "reduce over " + dim, [&](const Tensor& slice) {
          return evalOp(core, std::span<const Tensor>(&slice, 1));
        });
      }
    }
    return evalOp(s, operands);
  }

  const OpSpec& spec_;
  const FusedOp& fused_;
  std::vector<const Tensor*> inputs_;           // the op's inputs, or their rounded copies
  std::vector<std::optional<Tensor>> rounded_;  // inputs rounded to in_df here
  std::vector<Intermed> intermeds_;
  std::optional<Dest> dest_;
  std::optional<Tensor> output_;
  std::string outputWriter_;
  size_t counter_ = 0; // sub-ops run so far
};

} // namespace

Tensor evalFusedOp(const OpSpec& spec, const netlist::FusedOp& fused, std::span<const Tensor> inputs) {
  detail::preferHeapForLargeTensors();
  return FusedExecutor(spec, fused, inputs).run();
}

} // namespace tessera::golden
