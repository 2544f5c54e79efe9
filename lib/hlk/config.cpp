// Op -> kernel configuration: which template, the args header's values, and
// the operands the kernel uses with their tile orders (docs/net2hlks.md).
#include "hlk/config.hpp"

#include "device/arch_params.hpp"
#include "device/soc_descriptor.hpp"
#include "hlk/fused.hpp"
#include "hlk/internal.hpp"
#include "hlk/sparse_matmul.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

namespace tessera::hlk {

using namespace netlist;

// ---------------------------------------------------------------- small helpers

std::string_view familyName(Family f) {
  switch (f) {
  case Family::Unary: return "unary";
  case Family::Binary: return "binary";
  case Family::Matmul: return "matmul";
  case Family::Reduce: return "reduce";
  case Family::Splice: return "splice";
  case Family::Fused: return "fused";
  case Family::Depthwise: return "depthwise";
  case Family::Quant: return "quant";
  case Family::Tilizer: return "tilizer";
  case Family::Embedding: return "embedding";
  case Family::Topk: return "topk";
  }
  return "unary";
}

std::string_view roleName(OperandRole r) {
  switch (r) {
  case OperandRole::Input: return "input";
  case OperandRole::Output: return "output";
  case OperandRole::Intermediate: return "intermediate";
  case OperandRole::Spill: return "spill";
  }
  return "input";
}

int64_t Layout::index(int64_t row, int64_t col) const {
  const int64_t ubR = row / ublock.r, ubC = col / ublock.c;
  const int64_t ub = order == UblockOrder::R ? ubR * mblock.c + ubC : ubC * mblock.r + ubR;
  return ub * ublockTiles() + (row % ublock.r) * ublock.c + (col % ublock.c);
}

uint32_t floatBits(double v) { return std::bit_cast<uint32_t>(static_cast<float>(v)); }

std::optional<contract::SfpuFunc> sfpuFuncOf(const std::string& type) {
  static const std::map<std::string, contract::SfpuFunc> kFuncs = {
      {"exp", contract::kSfpuExp},
      {"log", contract::kSfpuLog},
      {"sqrt", contract::kSfpuSqrt},
      {"reciprocal", contract::kSfpuReciprocal},
      {"gelu", contract::kSfpuGelu},
      {"gelu_derivative", contract::kSfpuGeluDerivative},
      {"sigmoid", contract::kSfpuSigmoid},
      {"tanh", contract::kSfpuTanh},
      {"abs", contract::kSfpuAbs},
      {"sine", contract::kSfpuSine},
      {"cosine", contract::kSfpuCosine},
      {"square", contract::kSfpuSquare},
      {"power", contract::kSfpuPower},
      {"lrelu", contract::kSfpuLrelu},
      {"relu", contract::kSfpuRelu},
  };
  auto it = kFuncs.find(type);
  if (it == kFuncs.end()) return std::nullopt;
  return it->second;
}

bool isCopyType(const std::string& type) { return type == "datacopy" || type == "nop" || type == "ethernet_datacopy"; }

std::optional<contract::EltwiseOp> eltwiseOpOf(const std::string& type) {
  if (type == "add") return contract::kEltAdd;
  if (type == "subtract") return contract::kEltSub;
  if (type == "multiply") return contract::kEltMul;
  if (type == "maximum") return contract::kEltMax;
  return std::nullopt;
}

std::optional<uint32_t> sfpuParam(contract::SfpuFunc f, const OpAttributes& attrs, std::string& why) {
  if (f == contract::kSfpuPower) {
    const Attribute* a = attrs.find("exp");
    if (!a || !a->value.is_number()) {
      why = "power needs the attribute 'exp' (an integer >= 0)";
      return std::nullopt;
    }
    double e = a->value.get<double>();
    if (e < 0 || e != std::floor(e) || e > 1e9) {
      why = "power needs the attribute 'exp' to be an integer >= 0";
      return std::nullopt;
    }
    return static_cast<uint32_t>(e);
  }
  if (f == contract::kSfpuLrelu) {
    const Attribute* a = attrs.find("slope");
    if (!a || !a->value.is_number()) {
      why = "lrelu needs the attribute 'slope'";
      return std::nullopt;
    }
    return floatBits(a->value.get<double>());
  }
  return 0u;
}

void reluOf(const OpAttributes& attrs, uint32_t& mode, uint32_t& thresholdBits) {
  mode = 0;
  thresholdBits = 0;
  if (!attrs.relu.value) return;
  if (attrs.reluMode.present() && attrs.reluMode.value == "none") return;
  mode = attrs.reluMode.present() && attrs.reluMode.value == "max" ? 2 : 1;
  thresholdBits = floatBits(attrs.reluThreshold.present() ? attrs.reluThreshold.value : 0.0);
}

std::optional<TensorShape> inputShape(const Netlist& nl, const Op& op, size_t i) {
  if (i >= op.inputs.size()) return std::nullopt;
  const Operand& in = op.inputs[i];
  std::optional<TensorShape> src;
  for (const Queue& q : nl.queues)
    if (q.name == in.name) src = queueShape(q);
  if (!src)
    for (const Graph& g : nl.graphs)
      for (const Op& o : g.ops)
        if (o.name == in.name) src = opOutputShape(o);
  if (!src) return std::nullopt;
  TensorShape shape = *src;
  if (in.unpad) {
    shape.r -= in.unpad->rt;
    shape.c -= in.unpad->ct;
  }
  const Tm* failed = nullptr;
  std::string why;
  auto after = applyTms(shape, in.tms, &failed, &why);
  if (!after) return std::nullopt;
  if (in.pad) {
    after->r += in.pad->rt;
    after->c += in.pad->ct;
  }
  return after;
}

DataFormat destFormatOf(DataFormat accDf) {
  if (accDf == DataFormat::Float32) return DataFormat::Float32;
  if (isIntegerFormat(accDf)) return DataFormat::Int32;
  if (accDf == DataFormat::Float16) return DataFormat::Float16;
  // Block formats (BUDA accepts acc_df Bfp8_b and the like) accumulate in the
  // 16-bit float of their exponent family.
  return isExponentBFormat(accDf) || isRawFormat(accDf) ? DataFormat::Float16_b : DataFormat::Float16;
}

std::string opText(const Op& op) { return "op " + quote(op.name) + " in graph " + quote(op.graph); }

std::string formatCode(DataFormat f) { return "k" + std::string(dataFormatName(f)); }
std::string fidelityCode(MathFidelity f) { return "k" + std::string(mathFidelityName(f)); }

std::string sfpuCode(contract::SfpuFunc f, bool approximate) {
  static const char* const kNames[] = {"kSfpuExp",     "kSfpuLog",    "kSfpuSqrt",          "kSfpuReciprocal",
                                       "kSfpuGelu",    "kSfpuGeluDerivative", "kSfpuSigmoid", "kSfpuTanh",
                                       "kSfpuAbs",     "kSfpuSine",   "kSfpuCosine",        "kSfpuSquare",
                                       "kSfpuPower",   "kSfpuLrelu",  "kSfpuRelu",          "kSfpuReluMin",
                                       "kSfpuReluMax", "kSfpuAddScalar", "kSfpuQuantInt8"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == contract::kSfpuFuncCount);
  if (approximate) return std::string("SfpuFunc(") + kNames[f] + " | kSfpuApproximate)";
  return kNames[f];
}

std::string eltwiseCode(contract::EltwiseOp op) {
  static const char* const kNames[] = {"kEltAdd", "kEltSub", "kEltMul", "kEltMax"};
  return kNames[op];
}

std::string bcastCode(contract::Broadcast b) {
  static const char* const kNames[] = {"kBcastNone", "kBcastRow", "kBcastCol", "kBcastScalar"};
  return kNames[b];
}

std::string hex32(uint32_t v) {
  static const char* const kDigits = "0123456789ABCDEF";
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += kDigits[(v >> shift) & 0xF];
  return s + "u";
}

// ---------------------------------------------------------------- op analysis

OperandInfo inputOperand(const netlist::Op& op, size_t i, Layout layout, int64_t minTiles) {
  OperandInfo o;
  o.operand = static_cast<int>(i);
  o.role = OperandRole::Input;
  o.index = static_cast<int>(i);
  o.source = op.inputs[i].name;
  o.df = i < op.inDf.size() ? op.inDf[i].value : op.outDf.value;
  o.layout = layout;
  o.minTiles = minTiles;
  return o;
}

int KernelConfig::outputOperand() const {
  for (const OperandInfo& o : operands)
    if (o.role == OperandRole::Output) return o.operand;
  return static_cast<int>(contract::kFirstOutputOperand);
}

int KernelConfig::spillOperand() const {
  for (const OperandInfo& o : operands)
    if (o.role == OperandRole::Spill) return o.operand;
  return -1;
}

OperandInfo outputOperand(const netlist::Op& op) {
  OperandInfo o;
  o.operand = contract::kFirstOutputOperand;
  o.role = OperandRole::Output;
  o.df = op.outDf.value;
  o.layout = Layout{op.t.value, op.mblock.value, op.ublock.value, op.order()};
  o.untilized = op.untilizeOutput.value;
  o.minTiles = o.untilized ? o.layout->untilizeStripeTiles() : o.layout->ublockTiles();
  return o;
}

namespace {

static_assert(static_cast<int>(DataFormat::RawUInt32) == contract::kRawUInt32, "format codes follow netlist::DataFormat");
static_assert(static_cast<int>(MathFidelity::HiFi4) == contract::kHiFi4, "fidelity codes follow netlist::MathFidelity");

// What the TMs of one graph-op input ask of the kernel (the pipe does the rest).
struct InputTms {
  bool transpose = false;            // odd number of transposes: the unpacker transposes each tile
  const Tm* transposeTm = nullptr;
  const Tm* tileBcast = nullptr;     // last tile_broadcast
};

InputTms inputTms(const Operand& in) {
  InputTms r;
  for (const Tm& tm : in.tms) {
    if (tm.kind == TmKind::Transpose) {
      r.transpose = !r.transpose;
      r.transposeTm = &tm;
    } else if (tm.kind == TmKind::TileBroadcast) {
      r.tileBcast = &tm;
    }
  }
  return r;
}

class OpConfigurer {
public:
  OpConfigurer(const Netlist& nl, const Op& op, const ValidationTarget& target, DiagnosticEngine& diags)
      : nl_(nl), op_(op), target_(target), diags_(diags) {}

  std::optional<KernelConfig> run() {
    const std::string& type = op_.type.value;
    fillCommon();
    if (op_.inputs.size() > 16)
      return unsupported(op_.inputsLoc, std::to_string(op_.inputs.size()) +
                                            " inputs: kernels have operands for at most 16 inputs");
    for (size_t i = 0; i < op_.inputs.size(); ++i) tms_.push_back(inputTms(op_.inputs[i]));

    std::optional<KernelConfig> result;
    if (isCopyType(type) || sfpuFuncOf(type)) result = unary();
    else if (eltwiseOpOf(type)) result = binary();
    else if (type == "matmul") result = matmul();
    else if (type == "reduce") result = reduce();
    else if (type == "splice") result = splice();
    else if (type == "fused_op") result = fusedOp();
    else if (type == "depthwise") result = depthwise();
    else if (type == "dropout") result = dropout();
    else if (type == "tilizer") result = tilizer();
    else if (type == "quantization" || type == "requantization" || type == "dequantization") result = quant();
    else if (type == "topk") result = topk();
    else if (type == "embedding") result = embedding();
    else {
      diags_.error("hlk-unsupported-op", locOr(op_.type, op_.loc),
                   opText(op_) + ": op type " + quote(type) + " is not supported by net2hlks yet");
      return std::nullopt;
    }
    if (!result) return std::nullopt;
    // The gradient block is accumulated tile by tile in place; a row-major
    // (untilized) block has no tiles to add into.
    if (op_.gradientOp.value && op_.untilizeOutput.value)
      return unsupported(op_.untilizeOutput.loc, "untilize_output on a gradient op (accumulated in place, tile by tile)");
    // The packer's relu would act on the accumulated sum, not on each input's output.
    if (op_.gradientOp.value && k_.common.reluMode != 0)
      return unsupported(op_.attributes.loc, "relu on a gradient op (the packer would apply it to the accumulated sum)");
    if (op_.gradientOp.value && result->family != Family::Fused && !gradientOnAccumulatorOperand(*result))
      return std::nullopt;
    std::sort(result->operands.begin(), result->operands.end(),
              [](const OperandInfo& a, const OperandInfo& b) { return a.operand < b.operand; });
    if (!tileShapes(*result)) return std::nullopt;
    return result;
  }

private:
  // BUDA's gradient accumulator is operand 24 (an intermediate: its pipegen2
  // rejects a gradient_op buffer on an output operand), so a gradient op's
  // output moves there and its kernel-internal buffers one up. A fused op's
  // intermediates are numbered from 24 by the fused op itself: it keeps 16.
  bool gradientOnAccumulatorOperand(KernelConfig& k) {
    for (OperandInfo& o : k.operands)
      if (o.operand >= static_cast<int>(contract::kFirstIntermediateOperand)) ++o.operand;
    for (OperandInfo& o : k.operands) {
      if (o.role == OperandRole::Output) o.operand = static_cast<int>(contract::kFirstIntermediateOperand);
      if (o.operand >= static_cast<int>(contract::kOperandCount)) {
        unsupported(op_.gradientOp.loc, "a gradient op whose kernel uses every intermediate operand (the "
                                        "accumulator takes operand 24)");
        return false;
      }
    }
    return true;
  }

  // tile_dim (docs/net2hlks.md "Tiny tiles"): each operand's tiles take the
  // shape of the producer (inputs) or the op (the rest). The kernel families
  // that walk tiles one by one through UNPACK and PACK support any shape
  // (untilized outputs too); the others only 32x32.
  bool tileShapes(KernelConfig& k) {
    const Dim2 full{32, 32};
    const Dim2 opTile = op_.tileDim.present() ? op_.tileDim.value : full;
    bool tiny = opTile != full;
    for (OperandInfo& o : k.operands) {
      o.tile = opTile;
      if (o.role == OperandRole::Input) {
        o.tile = full;
        for (const Queue& q : nl_.queues)
          if (q.name == o.source && q.tileDim.present()) o.tile = q.tileDim.value;
        for (const Graph& g : nl_.graphs)
          for (const Op& p : g.ops)
            if (p.name == o.source && p.tileDim.present()) o.tile = p.tileDim.value;
      }
      tiny |= o.tile != full;
    }
    if (!tiny) return true;
    const SourceLoc at = op_.tileDim.present() ? op_.tileDim.loc : op_.loc;
    const bool family = k.family == Family::Unary || k.family == Family::Binary ||
                        k.family == Family::Matmul || k.family == Family::Reduce || k.family == Family::Tilizer;
    if (!family) {
      unsupported(at, std::string(familyName(k.family)) + " kernel with tiles other than 32x32 (tile_dim " +
                          dimText(opTile) + " or an input's)");
      return false;
    }
    return true;
  }

  std::nullopt_t unsupported(SourceLoc loc, const std::string& what) {
    diags_.error("hlk-unsupported-feature", loc.valid() ? loc : op_.loc,
                 opText(op_) + " (" + op_.type.value + "): " + what + " is not supported by net2hlks yet");
    return std::nullopt;
  }

  void fillCommon() {
    CommonArgs& c = k_.common;
    c.t = op_.t.value;
    c.mblock = op_.mblock.value;
    c.ublock = op_.ublock.value;
    c.order = op_.order();
    c.fidelity = op_.mathFidelity.value;
    c.destFormat = destFormatOf(op_.accDf.value);
    for (const auto& f : op_.inDf) c.inFormats.push_back(f.value);
    c.outFormat = op_.outDf.value;
    c.intermedFormat = op_.intermedDf.value;
    reluOf(op_.attributes, c.reluMode, c.reluThresholdBits);
    c.untilize = op_.untilizeOutput.value;
    c.destTiles16 = destTiles(target_.arch, false);
    c.gradient = op_.gradientOp.value;
  }

  Layout outLayout() const { return Layout{op_.t.value, op_.mblock.value, op_.ublock.value, op_.order()}; }

  void addInput(size_t i, Layout layout, int64_t minTiles) { k_.operands.push_back(inputOperand(op_, i, layout, minTiles)); }

  void addOutput() { k_.operands.push_back(outputOperand(op_)); }

  void addSpill(int64_t tiles) {
    OperandInfo o;
    o.operand = contract::kFirstIntermediateOperand;
    o.role = OperandRole::Spill;
    o.df = op_.intermedDf.value;
    o.minTiles = tiles;
    k_.operands.push_back(std::move(o));
  }

  // TMs the kernel cannot apply on input i: a transpose where the HLK call
  // has no transpose, a tile_broadcast anywhere but input 1 of a binary op.
  bool checkInputTms(bool transposeOk0, bool transposeOk1, bool tileBcastOk1) {
    bool ok = true;
    for (size_t i = 0; i < tms_.size(); ++i) {
      const InputTms& t = tms_[i];
      bool transposeOk = (i == 0 && transposeOk0) || (i == 1 && transposeOk1);
      if (t.transpose && !transposeOk) {
        unsupported(t.transposeTm->loc.valid() ? t.transposeTm->loc : op_.inputs[i].tmsLoc,
                    "a transpose TM on input " + std::to_string(i));
        ok = false;
      }
      bool bcastOk = i == 1 && tileBcastOk1;
      if (t.tileBcast && !bcastOk) {
        unsupported(t.tileBcast->loc.valid() ? t.tileBcast->loc : op_.inputs[i].tmsLoc,
                    "tile_broadcast on input " + std::to_string(i));
        ok = false;
      }
      if (t.tileBcast && t.transpose && bcastOk) {
        unsupported(t.tileBcast->loc, "tile_broadcast together with transpose on input " + std::to_string(i));
        ok = false;
      }
    }
    return ok;
  }

  std::optional<KernelConfig> unary() {
    k_.family = Family::Unary;
    const std::string& type = op_.type.value;
    if (op_.inputs.size() != 1) return unsupported(op_.inputsLoc, "a unary op with " + std::to_string(op_.inputs.size()) + " inputs");
    if (!checkInputTms(true, false, false)) return std::nullopt;
    if (auto f = sfpuFuncOf(type)) {
      std::string why;
      auto p = sfpuParam(*f, op_.attributes, why);
      if (!p) {
        diags_.error("hlk-attribute", op_.attributes.loc.valid() ? op_.attributes.loc : op_.type.loc, opText(op_) + ": " + why);
        return std::nullopt;
      }
      k_.unary.sfpu = true;
      k_.unary.func = *f;
      k_.unary.param = *p;
      k_.unary.approximate = op_.attributes.approximateMode.present() && op_.attributes.approximateMode.value;
    }
    k_.unary.transposeIn0 = tms_[0].transpose;
    addInput(0, outLayout(), outLayout().ublockTiles());
    addOutput();
    return k_;
  }

  // dropout: the reference model only models p = 0 (the identity): a datacopy.
  std::optional<KernelConfig> dropout() {
    if (const Attribute* p = op_.attributes.find("p"); p && p->value.is_number() && p->value.get<double>() != 0.0)
      return unsupported(p->loc, "dropout with p = " + p->value.dump() +
                                     " (random; only p = 0, the identity, is modelled)");
    return unary();
  }

  // tilizer: BUDA's unpacker reads a `layout: flat` input row by row; the
  // values do not change (lib/golden evalTilizer). The kernel receives the
  // entry as tiles in the op's blocking (the data path reads the flat rows
  // as tiles) and copies them.
  std::optional<KernelConfig> tilizer() {
    if (op_.inputs.size() != 1) return unsupported(op_.inputsLoc, "a tilizer with " + std::to_string(op_.inputs.size()) + " inputs");
    if (!checkInputTms(false, false, false)) return std::nullopt;
    auto result = unary();
    if (result) result->family = Family::Tilizer;
    return result;
  }

  std::optional<KernelConfig> binary() {
    k_.family = Family::Binary;
    if (op_.inputs.size() != 2) return unsupported(op_.inputsLoc, "a binary op with " + std::to_string(op_.inputs.size()) + " inputs");
    if (!checkInputTms(true, false, true)) return std::nullopt;
    k_.binary.op = *eltwiseOpOf(op_.type.value);
    k_.binary.transposeIn0 = tms_[0].transpose;
    if (const Tm* tb = tms_[1].tileBcast) k_.binary.bcastIn1 = tb->dim == 'c' ? contract::kBcastCol : contract::kBcastRow;
    addInput(0, outLayout(), outLayout().ublockTiles());
    addInput(1, outLayout(), outLayout().ublockTiles());
    addOutput();
    return k_;
  }

  std::optional<KernelConfig> matmul() {
    k_.family = Family::Matmul;
    const OpAttributes& a = op_.attributes;
    MatmulArgs& m = k_.matmul;
    if (a.identity.value) return configureSparseMatmul(nl_, op_, k_, diags_); // sparse_matmul.cpp
    for (const char* key : {"requant", "dequant"})
      if (const Attribute* q = a.find(key); q && q->value.is_boolean() && q->value.get<bool>()) {
        if (m.quant != 0) return unsupported(q->loc, "requant and dequant together");
        m.quant = std::string(key) == "requant" ? 1 : 2;
      }
    if (m.quant != 0) {
      m.zeroPointBits = floatBits(a.zeroPoint.present() ? a.zeroPoint.value : 0.0);
      // Integer products and sums are exact in float32 below 2^24, which is
      // what the reference model computes in.
      k_.common.destFormat = DataFormat::Float32;
      k_.common.fidelity = MathFidelity::HiFi4;
    }
    if (!a.mK.present() || !a.uKt.present() || a.mK.value < 1 || a.uKt.value < 1)
      return unsupported(op_.type.loc, "a matmul without m_k and u_kt");
    m.mK = a.mK.value;
    m.uKt = a.uKt.value;
    m.bias = a.bias.value;
    size_t wantInputs = (m.bias ? 3 : 2) + (m.quant != 0 ? 1 : 0);
    if (op_.inputs.size() != wantInputs)
      return unsupported(op_.inputsLoc, "a matmul with " + std::to_string(op_.inputs.size()) + " inputs (expected " +
                                            std::to_string(wantInputs) + ": in0, in1" + (m.bias ? ", bias" : "") +
                                            (m.quant != 0 ? ", scale)" : ")"));
    if (!checkInputTms(false, true, false)) return std::nullopt;
    m.transposeIn1 = tms_[1].transpose;
    if (a.accumulate.value) {
      if (a.z.present() && a.z.value > 0) m.accumulateZ = a.z.value;
      else if (auto s = inputShape(nl_, op_, 0)) m.accumulateZ = s->t;
      else return unsupported(a.accumulate.loc, "accumulate without attribute z on an input of unknown shape");
      if (m.accumulateZ < 1) m.accumulateZ = 1;
    }
    bool integer = isIntegerFormat(op_.intermedDf.value);
    for (const auto& f : op_.inDf) integer |= isIntegerFormat(f.value);
    m.biasBcast = integer ? contract::kBcastNone : contract::kBcastRow;
    if (const Attribute* s = a.find("sfpu_op"); s && s->value.is_string() && s->value.get<std::string>() != "invalid") {
      auto f = sfpuFuncOf(s->value.get<std::string>());
      if (!f) return unsupported(s->loc, "sfpu_op " + quote(s->value.get<std::string>()));
      std::string why;
      auto p = sfpuParam(*f, a, why);
      if (!p) {
        diags_.error("hlk-attribute", s->loc, opText(op_) + ": sfpu_op: " + why);
        return std::nullopt;
      }
      m.sfpu = true;
      m.func = *f;
      m.param = *p;
      m.approximate = a.approximateMode.present() && a.approximateMode.value;
    }
    m.spill = m.mK > 1 || m.accumulateZ > 1;
    const Dim2 mb = op_.mblock.value, ub = op_.ublock.value;
    const int64_t tIn = op_.t.value * m.accumulateZ;
    // in0: per m_k block, the mblock's rows of ublocks [ublock rows x u_kt];
    // in1: per m_k block, a row of ublocks [u_kt x ublock cols].
    Layout in0{tIn, {mb.r, m.mK}, {ub.r, m.uKt}, UblockOrder::C};
    Layout in1{tIn, {m.mK, mb.c}, {m.uKt, ub.c}, UblockOrder::R};
    addInput(0, in0, mb.r * ub.r * m.uKt);
    addInput(1, in1, m.uKt * mb.c * ub.c);
    if (m.bias) addInput(2, outLayout(), outLayout().ublockTiles());
    if (m.quant != 0) addInput(m.bias ? 3 : 2, outLayout(), outLayout().ublockTiles());
    addOutput();
    // A gradient op whose buffers at their smallest do not fit L1 beside a
    // partial-sums buffer adds each partial sum into its gradient block in
    // place (pack l1 accumulate; BUDA shares the gradient buffer with the
    // partial sums). Not with sfpu_op or quantization: they need the whole
    // sum in dest. Only where L1 requires it: in place the cell is rounded
    // after every block, through the spill once per input.
    if (m.spill && op_.gradientOp.value && !m.sfpu && m.quant == 0 &&
        minL1Bytes() + outLayout().blockTiles() * netlist::tileSizeBytes(op_.intermedDf.value) > l1DataBytes()) {
      m.spill = false;
      m.partialsInPlace = true;
    }
    if (m.spill) addSpill(outLayout().blockTiles());
    return k_;
  }

  // L1 for data of one worker core (what net2pipe's buffers share).
  uint64_t l1DataBytes() const {
    const uint64_t l1 = target_.device && target_.device->workerL1Size ? target_.device->workerL1Size
                                                                       : archParams(target_.arch).defaultWorkerL1Size;
    return l1 > contract::kDataBufferBase ? l1 - contract::kDataBufferBase : 0;
  }

  // The op's operand buffers so far at the smallest sizes net2pipe gives
  // them: inputs their kernel minimum (or input_buf_min_size_tiles), a
  // gradient output its whole block (t slices), other outputs one ublock.
  uint64_t minL1Bytes() const {
    uint64_t bytes = 0;
    for (const OperandInfo& o : k_.operands) {
      int64_t tiles = o.minTiles;
      if (o.role == OperandRole::Input && static_cast<size_t>(o.index) < op_.inputBufMinSizeTiles.size())
        tiles = std::max(tiles, op_.inputBufMinSizeTiles[static_cast<size_t>(o.index)]);
      if (o.role == OperandRole::Output && op_.gradientOp.value && o.layout) tiles = o.layout->t * o.layout->blockTiles();
      bytes += static_cast<uint64_t>(tiles) * netlist::tileSizeBytes(o.df);
    }
    return bytes;
  }

  std::optional<KernelConfig> reduce() {
    k_.family = Family::Reduce;
    const OpAttributes& a = op_.attributes;
    ReduceArgs& r = k_.reduce;
    const std::string& dim = a.reduceDim.value;
    const std::string& type = a.reduceType.value;
    if (op_.inputs.size() != 1) return unsupported(op_.inputsLoc, "a reduce with " + std::to_string(op_.inputs.size()) + " inputs");
    if (!checkInputTms(false, false, false)) return std::nullopt;
    r.type = type == "max" ? contract::kReduceMax : contract::kReduceSum;
    const Dim2 mb = op_.mblock.value, ub = op_.ublock.value;
    if (dim == "z") {
      if (type == "avg")
        return unsupported(a.reduceType.loc, "reduce avg over z (the HLK API has no scalar multiply)");
      r.overZ = true;
      r.z = a.z.present() && a.z.value > 0 ? a.z.value : 1;
      Layout in = outLayout();
      in.t = op_.t.value * r.z;
      addInput(0, in, in.ublockTiles());
      addOutput();
      if (r.z > 1) addSpill(outLayout().blockTiles());
      return k_;
    }
    if (dim != "r" && dim != "c") return unsupported(a.reduceDim.loc, "reduce over " + quote(dim));
    const bool rows = dim == "r";
    r.dim = rows ? contract::kReduceRows : contract::kReduceCols;
    // The reduced extent K (tiles per core): m_k blocks of u_kt tiles.
    if (a.mK.present() && a.uKt.present() && a.mK.value > 0 && a.uKt.value > 0) {
      r.mK = a.mK.value;
      r.uKt = a.uKt.value;
    } else if (auto s = inputShape(nl_, op_, 0)) {
      r.mK = rows ? s->r : s->c;
      r.uKt = 1;
    } else {
      return unsupported(a.loc, "a reduce without m_k/u_kt on an input of unknown shape");
    }
    if (rows ? (mb.r != 1 || ub.r != 1) : (mb.c != 1 || ub.c != 1))
      return unsupported(op_.mblock.loc, "reduce over " + dim + " with output mblock " + dimText(mb) + " x ublock " +
                                             dimText(ub) + " (the reduced dimension must be one tile)");
    const int64_t extent = r.mK * r.uKt;
    r.scaleBits = type == "avg" ? floatBits(1.0 / (static_cast<double>(extent) * 32.0)) : floatBits(1.0);
    // r: per output ublock column, m_k ublocks [u_kt x ublock cols] down the column;
    // c: per output ublock row, m_k ublocks [ublock rows x u_kt] along the row.
    Layout in = rows ? Layout{op_.t.value, {r.mK, mb.c}, {r.uKt, ub.c}, UblockOrder::C}
                     : Layout{op_.t.value, {mb.r, r.mK}, {ub.r, r.uKt}, UblockOrder::R};
    addInput(0, in, in.ublockTiles());
    addOutput();
    return k_;
  }

  std::optional<KernelConfig> splice() {
    k_.family = Family::Splice;
    const OpAttributes& a = op_.attributes;
    SpliceArgs& sp = k_.splice;
    if (!checkInputTms(false, false, false)) return std::nullopt;
    if (a.granularity.present() && a.granularity.value != "ublock" && a.granularity.value != "t")
      return unsupported(a.granularity.loc, "splice granularity " + quote(a.granularity.value));
    sp.tGranularity = a.granularity.present() && a.granularity.value == "t";
    const Dim2 mb = op_.mblock.value, ub = op_.ublock.value, grid = op_.gridSize.value;
    const SourceLoc where = a.loc.valid() ? a.loc : op_.type.loc;
    auto bad = [&](const std::string& what) {
      diags_.error("hlk-attribute", where, opText(op_) + " (splice): " + what);
      return std::nullopt;
    };
    // Units per pass of the output, and each input's units and tile order.
    const int64_t outUnits = sp.tGranularity ? op_.t.value : mb.r * mb.c;
    sp.unitUblocks = sp.tGranularity ? mb.r * mb.c : 1;
    sp.passes = sp.tGranularity ? 1 : op_.t.value;
    int64_t sumLength = 0;
    std::vector<std::pair<Layout, int64_t>> layouts; // layout, units per pass
    for (size_t i = 0; i < op_.inputs.size(); ++i) {
      auto it = a.spliceInputs.find(static_cast<int>(i));
      if (it == a.spliceInputs.end() || it->second.size() != 3)
        return bad("needs attribute input" + std::to_string(i) + ": [index, length, stride]");
      SpliceArgs::Range r{it->second[0], it->second[1], it->second[2]};
      auto shape = inputShape(nl_, op_, i);
      if (!shape) return bad("input " + std::to_string(i) + " has no known shape");
      Layout l;
      int64_t units = 0;
      if (sp.tGranularity) {
        if (shape->r != op_.gridSize.value.r * mb.r * ub.r || shape->c != op_.gridSize.value.c * mb.c * ub.c)
          return bad("granularity t needs every input to have the output's rows and columns, input " +
                     std::to_string(i) + " is " + shape->str());
        l = Layout{shape->t, mb, ub, op_.order()};
        units = shape->t;
      } else {
        if (shape->t != op_.t.value) return bad("granularity ublock keeps t, input " + std::to_string(i) + " is " + shape->str());
        if (shape->r % grid.r || shape->c % grid.c || (shape->r / grid.r) % ub.r || (shape->c / grid.c) % ub.c)
          return bad("input " + std::to_string(i) + " " + shape->str() + " is not whole " + dimText(ub) +
                     " ublocks on every core of the " + dimText(grid) + " grid");
        l = Layout{shape->t, {shape->r / grid.r / ub.r, shape->c / grid.c / ub.c}, ub, op_.order()};
        units = l.mblock.r * l.mblock.c;
      }
      const std::string range = "input" + std::to_string(i) + " [" + std::to_string(r.index) + ", " +
                                std::to_string(r.length) + ", " + std::to_string(r.stride) + "] over " +
                                std::to_string(units) + " units";
      if (r.index < 0 || r.length < 1 || r.stride < r.length || r.index + r.stride > units ||
          units % (r.index + r.stride) != 0)
        return bad(range + ": needs index >= 0, 1 <= length <= stride, and index + stride dividing the count");
      sumLength += r.length;
      sp.inputs.push_back(r);
      layouts.push_back({l, units});
    }
    if (sumLength == 0 || outUnits % sumLength != 0)
      return bad("the rounds (" + std::to_string(sumLength) + " units each) do not fill the output's " +
                 std::to_string(outUnits) + " units");
    sp.rounds = outUnits / sumLength;
    for (size_t i = 0; i < sp.inputs.size(); ++i) {
      const auto& r = sp.inputs[i];
      if (sp.rounds * (r.index + r.stride) != layouts[i].second)
        return bad("input" + std::to_string(i) + ": " + std::to_string(sp.rounds) + " rounds consume " +
                   std::to_string(sp.rounds * (r.index + r.stride)) + " of its " +
                   std::to_string(layouts[i].second) + " units; all must be consumed");
      addInput(i, layouts[i].first, outLayout().ublockTiles());
    }
    addOutput();
    return k_;
  }

  // depthwise (lib/golden evalDepthwise): out tile (r, c) = sum over b < m_k
  // of in0 tile (r, c + b*C) x in1 tile (b, c). Per block b the kernel needs
  // in0's b-th output-shaped block and in1's row b.
  std::optional<KernelConfig> depthwise() {
    k_.family = Family::Depthwise;
    const OpAttributes& a = op_.attributes;
    DepthwiseArgs& dw = k_.depthwise;
    dw.bias = a.bias.value;
    const size_t wantInputs = dw.bias ? 3 : 2;
    if (op_.inputs.size() != wantInputs)
      return unsupported(op_.inputsLoc, "a depthwise with " + std::to_string(op_.inputs.size()) + " inputs (expected " +
                                            std::to_string(wantInputs) + ")");
    if (!a.mK.present() || a.mK.value < 1) {
      diags_.error("hlk-attribute", locOr(a, op_.type.loc), opText(op_) + ": depthwise needs the attribute 'm_k' >= 1");
      return std::nullopt;
    }
    if (a.uKt.present() && a.uKt.value != 1) {
      diags_.error("hlk-attribute", locOr(a.uKt, op_.type.loc),
                   opText(op_) + ": depthwise needs u_kt = 1 (each block is one tile deep), got " + std::to_string(a.uKt.value));
      return std::nullopt;
    }
    // Block b of input 0 is tile columns [b*C, (b+1)*C) of the whole tensor
    // (C: the output's columns); a core of a multi-column grid would need
    // strided columns, not the even share the data path delivers.
    if (op_.gridSize.value.c != 1)
      return unsupported(op_.gridSize.loc, "depthwise on a grid of " + std::to_string(op_.gridSize.value.c) +
                                               " columns (input 0's blocks span the whole width)");
    if (!checkInputTms(false, false, false)) return std::nullopt;
    dw.mK = a.mK.value;
    dw.spill = dw.mK > 1;
    const Dim2 mb = op_.mblock.value, ub = op_.ublock.value;
    // in0: the m_k output-shaped blocks one after the other (ublocks column
    // by column, so a block's ublocks are consecutive); in1: per block, one
    // row of the output's tile columns.
    Layout in0{op_.t.value, {mb.r, dw.mK * mb.c}, ub, UblockOrder::C};
    Layout in1{op_.t.value, {dw.mK, mb.c}, {1, ub.c}, UblockOrder::R};
    addInput(0, in0, outLayout().blockTiles());
    addInput(1, in1, mb.c * ub.c);
    if (dw.bias) addInput(2, outLayout(), outLayout().ublockTiles());
    addOutput();
    if (dw.spill) addSpill(outLayout().blockTiles());
    return k_;
  }

  // quantization, requantization, dequantization (lib/golden scaleAndShift,
  // evalDequantization): plain float32 products and sums, so the kernel
  // computes in a Float32 dest with HiFi4 whatever acc_df/math_fidelity say.
  std::optional<KernelConfig> quant() {
    k_.family = Family::Quant;
    if (op_.inputs.size() != 2)
      return unsupported(op_.inputsLoc, "a " + op_.type.value + " with " + std::to_string(op_.inputs.size()) +
                                            " inputs (expected 2: value, scale)");
    if (!checkInputTms(false, false, false)) return std::nullopt;
    const OpAttributes& a = op_.attributes;
    const double zp = a.zeroPoint.present() ? a.zeroPoint.value : 0.0;
    k_.quant.dequant = op_.type.value == "dequantization";
    k_.quant.zeroPointBits = floatBits(k_.quant.dequant ? -zp : zp);
    k_.common.destFormat = DataFormat::Float32;
    k_.common.fidelity = MathFidelity::HiFi4;
    addInput(0, outLayout(), outLayout().ublockTiles());
    addInput(1, outLayout(), outLayout().ublockTiles());
    addOutput();
    return k_;
  }

  // topk (lib/golden evalTopk): inputs 0 values and 1 indices, each core
  // row's tiles along the row; the kernel sorts them through two scratch
  // intermediates (values in in_df[0], indices in in_df[1]) in a Float32
  // dest, which holds every UInt16 index exactly.
  std::optional<KernelConfig> topk() {
    k_.family = Family::Topk;
    TopkArgs& tk = k_.topk;
    const OpAttributes& a = op_.attributes;
    if (op_.inputs.size() != 2)
      return unsupported(op_.inputsLoc, "a topk with " + std::to_string(op_.inputs.size()) + " inputs (expected 2: values, indices)");
    if (!checkInputTms(false, false, false)) return std::nullopt;
    if (!a.k.present() || a.k.value < 1 || a.k.value > 64 || (a.k.value & (a.k.value - 1)) != 0)
      return unsupported(locOr(a.k, a.loc), "topk k other than a power of two from 1 to 64");
    if (!a.sort.present() || (a.sort.value != "max" && a.sort.value != "argmax"))
      return unsupported(locOr(a.sort, a.loc), "topk without sort: max or argmax");
    if (!a.mK.present() || !a.uKt.present() || a.mK.value < 1 || a.uKt.value < 1)
      return unsupported(a.loc, "a topk without m_k and u_kt");
    tk.k = a.k.value;
    tk.values = a.sort.value == "max";
    tk.kreduce = a.kreduce.value;
    tk.tiles = a.mK.value * a.uKt.value;
    tk.outTiles = (tk.k + 31) / 32;
    const int64_t n = tk.tiles * 32;
    if (n % tk.k != 0 || ((n / tk.k) & (n / tk.k - 1)) != 0 || n / tk.k == 0)
      return unsupported(a.loc, "topk rows of " + std::to_string(n) + " values (m_k x u_kt tiles): not k=" +
                                    std::to_string(tk.k) + " times a power of two");
    if (n > 0xFFFF) return unsupported(a.loc, "topk rows of more than 65535 values");
    const Dim2 mb = op_.mblock.value, ub = op_.ublock.value;
    if (ub.r != 1 || mb.c * ub.c != tk.outTiles)
      return unsupported(op_.mblock.loc, "topk with output mblock " + dimText(mb) + " x ublock " + dimText(ub) +
                                             " (one tile row per ublock, ceil(k/32) = " + std::to_string(tk.outTiles) +
                                             " tile columns)");
    if (mb.r > 1 && mb.c > 1 && op_.order() == UblockOrder::C)
      return unsupported(op_.ublockOrder.loc, "topk with ublock_order c over a " + dimText(mb) +
                                                  " mblock (the kernel writes whole rows)");
    k_.common.destFormat = DataFormat::Float32;
    const int64_t window = tk.tiles >= 2 ? 2 : 1;
    addInput(0, Layout{op_.t.value, {mb.r, a.mK.value}, {1, a.uKt.value}, UblockOrder::R}, std::max(a.uKt.value, window));
    addInput(1, Layout{op_.t.value, {mb.r, a.mK.value}, {1, a.uKt.value}, UblockOrder::R}, std::max(a.uKt.value, window));
    addOutput();
    for (int i = 0; i < 2; ++i) {
      OperandInfo o;
      o.operand = contract::kFirstIntermediateOperand + i;
      o.role = OperandRole::Intermediate;
      o.index = i;
      o.df = op_.inDf.size() > static_cast<size_t>(i) ? op_.inDf[static_cast<size_t>(i)].value : op_.outDf.value;
      // Sorting moves values between the 16-value blocks of a Bfp format.
      if (netlist::isBfpFormat(o.df)) o.df = DataFormat::Float32;
      o.minTiles = tk.tiles;
      k_.operands.push_back(std::move(o));
    }
    return k_;
  }

  // embedding (lib/golden evalEmbedding): the whole table resident in L1
  // (every tile row, the core's tile columns), one index tile per core row,
  // a Float32 dest so the gathered values move exactly.
  std::optional<KernelConfig> embedding() {
    k_.family = Family::Embedding;
    EmbeddingArgs& e = k_.embedding;
    const OpAttributes& a = op_.attributes;
    if (op_.inputs.size() != 2)
      return unsupported(op_.inputsLoc, "an embedding with " + std::to_string(op_.inputs.size()) + " inputs (expected 2: table, indices)");
    if (!checkInputTms(false, false, false)) return std::nullopt;
    if (op_.inDf.size() < 2 || op_.inDf[1].value != DataFormat::RawUInt32)
      return unsupported(op_.attributes.loc, "embedding indices other than RawUInt32");
    const auto table = inputShape(nl_, op_, 0);
    const auto idx = inputShape(nl_, op_, 1);
    if (!table || !idx) return unsupported(op_.inputsLoc, "an embedding with inputs of unknown shape");
    const Dim2 mb = op_.mblock.value, ub = op_.ublock.value;
    const int64_t grid = op_.gridSize.value.c;
    e.numIndices = a.numIndices.present() ? a.numIndices.value : 0;
    if (table->t != 1) return unsupported(op_.inputsLoc, "an embedding table with t > 1");
    e.tableRows = table->r;
    e.tableCols = mb.c * ub.c;
    if (table->c != e.tableCols * grid)
      return unsupported(op_.inputsLoc, "an embedding table of " + std::to_string(table->c) +
                                            " tile columns for an output of " + std::to_string(e.tableCols * grid));
    if (idx->t != 1 || idx->c != 1 || idx->r != op_.gridSize.value.r)
      return unsupported(op_.inputsLoc, "embedding indices other than one tile per core row");
    if (ub.r != 1 || e.numIndices < 1 || e.numIndices > mb.r * 32)
      return unsupported(op_.mblock.loc, "an embedding whose num_indices does not fit its mblock rows");
    k_.common.destFormat = DataFormat::Float32;
    const int64_t tableTiles = e.tableRows * e.tableCols;
    addInput(0, Layout{1, {e.tableRows, mb.c}, {1, ub.c}, UblockOrder::R}, tableTiles);
    addInput(1, Layout{1, {1, 1}, {1, 1}, UblockOrder::R}, 1);
    addOutput();
    return k_;
  }

  std::optional<KernelConfig> fusedOp() {
    k_.family = Family::Fused;
    const FusedOp* fused = nullptr;
    for (const FusedOp& f : nl_.fusedOps)
      if (op_.attributes.fusedOpId.present() && f.id == op_.attributes.fusedOpId.value) fused = &f;
    if (!fused) return unsupported(op_.attributes.loc, "a fused_op without a fused op definition");
    // Op-level TMs that act inside the tile would have to be applied at every
    // read by every sub-op; the tile moves are the pipe's.
    bool ok = true;
    for (size_t i = 0; i < tms_.size(); ++i) {
      if (tms_[i].transpose) {
        unsupported(tms_[i].transposeTm->loc, "a transpose TM on input " + std::to_string(i) + " of a fused op");
        ok = false;
      }
      if (tms_[i].tileBcast) {
        unsupported(tms_[i].tileBcast->loc, "an op-level tile_broadcast on input " + std::to_string(i) + " of a fused op");
        ok = false;
      }
    }
    if (!ok) return std::nullopt;
    // BUDA applies relu per sub-op; the op-level relu_en of a fused op is not applied (docs/golden-fused-ops.md).
    k_.common.reluMode = 0;
    k_.common.reluThresholdBits = 0;
    auto plan = planFusedOp(nl_, op_, *fused, target_, diags_, k_.operands);
    if (!plan) return std::nullopt;
    // Quantization-family sub-ops compute in plain float32 (lib/golden): a
    // Float32 dest, when every ublock fits its half (4 tiles, as Int32's).
    bool quant = false, fits = true;
    for (const SubOpPlan& s : plan->subs) {
      quant |= s.kind == SubOpPlan::Kind::Quant;
      fits &= s.ublock.r * s.ublock.c <= 4;
    }
    if (quant && !fits && k_.common.destFormat != DataFormat::Float32) {
      diags_.error("hlk-fused-unsupported", locOr(op_.ublock, op_.loc),
                   opText(op_) + ": a fused op with quantization-family sub-ops computes in a Float32 dest, whose "
                                 "half holds 4 tiles; a sub-op ublock is larger");
      return std::nullopt;
    }
    if (quant) k_.common.destFormat = DataFormat::Float32;
    k_.fused = plan;
    addOutput();
    return k_;
  }

  const Netlist& nl_;
  const Op& op_;
  const ValidationTarget& target_;
  DiagnosticEngine& diags_;
  KernelConfig k_;
  std::vector<InputTms> tms_;
};

} // namespace

std::optional<KernelConfig> configureOp(const Netlist& nl, const Op& op, const ValidationTarget& target,
                                        DiagnosticEngine& diags) {
  return OpConfigurer(nl, op, target, diags).run();
}

std::set<std::string> gradientPartialsInPlace(const Netlist& nl, const ValidationTarget& target) {
  std::set<std::string> ops;
  for (const Graph& g : nl.graphs)
    for (const Op& op : g.ops) {
      if (!op.gradientOp.value || op.type.value != "matmul") continue;
      DiagnosticEngine scratch; // an op net2hlks rejects is reported by net2hlks, not here
      if (auto c = configureOp(nl, op, target, scratch); c && c->matmul.partialsInPlace) ops.insert(op.name);
    }
  return ops;
}

} // namespace tessera::hlk
