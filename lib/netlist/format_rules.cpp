#include "netlist/format_rules.hpp"

#include "netlist/text.hpp"

#include <string>

namespace tessera::netlist {
namespace {

std::string name(DataFormat f) { return std::string(dataFormatName(f)); }
bool isInt(DataFormat f) { return isIntegerFormat(f); }
bool isBfp4or2(DataFormat f) {
  return f == DataFormat::Bfp4 || f == DataFormat::Bfp4_b || f == DataFormat::Bfp2 || f == DataFormat::Bfp2_b;
}
// Exponent width family: `a` = 5-bit (Float16, Bfp*), `b` = 8-bit (Float16_b, Bfp*_b).
bool sameExponentWidth(DataFormat out, DataFormat intermed) {
  auto isA = [](DataFormat f) {
    return f == DataFormat::Float16 || f == DataFormat::Bfp8 || f == DataFormat::Bfp4 || f == DataFormat::Bfp2;
  };
  if (isA(out) && isA(intermed)) return true;
  if (isExponentBFormat(out) && isExponentBFormat(intermed)) return true;
  return out == DataFormat::Float32 && isExponentBFormat(intermed);
}

bool isMatmul(const Op& op) { return op.type.value == "matmul"; }

class FormatRules {
public:
  FormatRules(const Op& op, Arch arch, DiagnosticEngine& d) : op_(op), arch_(arch), d_(d), element_("op " + quote(op.name)) {}

  void run() {
    if (!op_.outDf.present() || !op_.intermedDf.present() || !op_.accDf.present()) return; // missing-field reported
    destFormats();
    intermediates();
    gradient();
    integerMath();
    perOpType();
    l1Accumulation();
  }

private:
  const Op& op_;
  Arch arch_;
  DiagnosticEngine& d_;
  std::string element_;

  DataFormat acc() const { return op_.accDf.value; }
  DataFormat intermed() const { return op_.intermedDf.value; }
  DataFormat out() const { return op_.outDf.value; }
  bool accumulates() const {
    // Matmul partial sums spill to the intermediate buffer between m_k blocks,
    // or accumulate in L1 (l1_acc) on wormhole_b0.
    if (!isMatmul(op_)) return false;
    return arch_ == Arch::WormholeB0 ? op_.attributes.l1Acc.value : op_.attributes.mK.value > 1;
  }

  void destFormats() {
    // (Int32 on grayskull is already a format-arch error: no integer formats at all.)
    if (arch_ == Arch::Grayskull && acc() == DataFormat::Float32)
      d_.error("acc-df-arch", op_.accDf.loc,
               element_ + ": acc_df " + name(acc()) + " needs a 32-bit dest register, which grayskull does not have");
    if (arch_ == Arch::Grayskull) {
      const Attribute* thread = op_.attributes.find("sfpu_execution_thread");
      if (thread && thread->value.is_string() && thread->value != "math")
        d_.error("sfpu-thread-arch", thread->loc,
                 element_ + ": grayskull runs SFPU functions on the math thread only, not " + quote(thread->value.get<std::string>()));
    }
  }

  void intermediates() {
    // (A gradient op with out_df != intermed_df is already a gradient-op error.)
    bool reconfigures = !op_.gradientOp.value && op_.attributes.mK.value > 1;
    if (arch_ == Arch::Grayskull && reconfigures && out() != intermed() && !sameExponentWidth(out(), intermed()))
      d_.error("intermed-df-exponent", op_.intermedDf.loc,
               element_ + ": on grayskull the packer switches between out_df " + name(out()) + " and intermed_df " +
                   name(intermed()) + " only within one exponent width (5-bit: Float16, Bfp8/4/2; 8-bit: Float16_b, "
                   "Bfp8/4/2_b; or Float32 out with an 8-bit intermediate)")
          .note(op_.outDf.loc, "out_df here");
    bool spills = op_.gradientOp.value || (isMatmul(op_) && (op_.attributes.mK.value > 1 || op_.attributes.bias.value));
    if (spills && isBfp4or2(intermed()))
      d_.error("intermed-df-accumulate", op_.intermedDf.loc,
               element_ + ": partial results are re-read from the intermediate buffer, which cannot be " + name(intermed()) +
                   " (accumulating in Bfp4/Bfp2 saturates to -inf)");
    // (Float32 accumulation on grayskull is already an acc-df-arch error.)
    bool wideAcc = (acc() == DataFormat::Float32 && arch_ != Arch::Grayskull) || acc() == DataFormat::Int32;
    if (wideAcc && accumulates() && intermed() != acc())
      d_.error("intermed-df-accumulate", op_.intermedDf.loc,
               element_ + ": matmul accumulation with acc_df " + name(acc()) + " needs intermed_df " + name(acc()) +
                   ", got " + name(intermed()));
  }

  void gradient() {
    if (!op_.gradientOp.value) return;
    if (intermed() != out())
      d_.error("gradient-op", op_.intermedDf.loc,
               element_ + ": a gradient op accumulates in its output buffer: intermed_df " + name(intermed()) +
                   " must equal out_df " + name(out()));
    if (op_.type.value == "maximum")
      d_.error("gradient-op", op_.gradientOp.loc, element_ + ": maximum cannot accumulate gradients");
    if (acc() == DataFormat::Int32)
      d_.error("gradient-op", op_.gradientOp.loc, element_ + ": gradient accumulation with acc_df Int32 is not supported");
    // (grayskull: acc-df-arch; intermed != out: reported above.)
    if (arch_ != Arch::WormholeB0 && arch_ != Arch::Grayskull && acc() == DataFormat::Float32 && intermed() != acc() &&
        intermed() == out())
      d_.error("gradient-op", op_.intermedDf.loc,
               element_ + ": gradient accumulation with acc_df Float32 on " + std::string(archName(arch_)) +
                   " needs intermed_df Float32, got " + name(intermed()));
    if ((isMatmul(op_) && op_.attributes.identity.value) || op_.type.value == "sparse_matmul")
      d_.error("gradient-op", op_.gradientOp.loc, element_ + ": sparse (identity) matmul cannot accumulate gradients");
  }

  void integerMath() {
    const std::string& type = op_.type.value;
    bool quant = type == "quantization", requant = type == "requantization", dequant = type == "dequantization";
    bool intInput = false;
    for (const auto& f : op_.inDf) intInput |= isInt(f.value);
    // topk carries integer indices but computes in floating point.
    if (intInput && type != "topk") {
      const Attribute* dequantAttr = op_.attributes.find("dequant");
      bool dequantizes = dequantAttr && dequantAttr->value == true;
      if (!isInt(out()) && !dequantizes && !dequant && type != "fused_op")
        d_.error("int-formats", op_.outDf.loc,
                 element_ + ": with integer inputs the output must be integer (Int8, UInt8, Int32, UInt16) unless "
                            "dequantizing, got out_df " + name(out()));
      if (!isInt(intermed()) || intermed() == DataFormat::UInt16)
        d_.error("int-formats", op_.intermedDf.loc,
                 element_ + ": with integer inputs intermed_df must be Int8, UInt8 or Int32, got " + name(intermed()));
      if (acc() != DataFormat::Int32)
        d_.error("int-formats", op_.accDf.loc,
                 element_ + ": with integer inputs acc_df must be Int32, got " + name(acc()));
      if (op_.mathFidelity.present() && op_.mathFidelity.value != MathFidelity::HiFi4)
        d_.error("int-math-fidelity", op_.mathFidelity.loc,
                 element_ + ": integer math needs math_fidelity HiFi4 to multiply all bits, got " +
                     std::string(mathFidelityName(op_.mathFidelity.value)));
      if (isMatmul(op_) && op_.attributes.l1Acc.value)
        d_.error("int-formats", op_.attributes.l1Acc.loc, element_ + ": a matmul with integer inputs cannot use l1_acc");
    } else if (acc() == DataFormat::Int32 && !quant && type != "fused_op") {
      // topk carries integer indices but accumulates in floating point.
      d_.error("int-formats", op_.accDf.loc,
               element_ + ": acc_df Int32 needs integer inputs (or a quantization or fused op)" +
                   (type == "topk" ? std::string("; topk computes in floating point") : std::string()));
    }
    if (dequant && out() != DataFormat::Float32)
      d_.error("int-formats", op_.outDf.loc, element_ + ": dequantization produces Float32, not out_df " + name(out()));
    if ((quant || requant || dequant || type == "reduce")) {
      bool uint8 = out() == DataFormat::UInt8;
      for (const auto& f : op_.inDf) uint8 |= f.value == DataFormat::UInt8;
      if (uint8)
        d_.error("int-formats", op_.type.loc, element_ + ": " + type + " cannot use the UInt8 format");
    }
  }

  void perOpType() {
    const std::string& type = op_.type.value;
    if (type == "reduce" && op_.attributes.reduceDim.value == "z" && !op_.inDf.empty() &&
        (op_.inDf[0].value != intermed() || out() != intermed()))
      d_.error("reduce-z-df", op_.intermedDf.loc,
               element_ + ": reduce over z converts no formats: in_df[0], intermed_df and out_df must be equal (" +
                   name(op_.inDf[0].value) + ", " + name(intermed()) + ", " + name(out()) + ")");
    if (type == "splice")
      for (size_t i = 1; i < op_.inDf.size(); ++i)
        if (op_.inDf[i].value != op_.inDf[0].value) {
          d_.error("splice-df", op_.inDf[i].loc,
                   element_ + ": splice converts no formats: in_df[" + std::to_string(i) + "] " + name(op_.inDf[i].value) +
                       " differs from in_df[0] " + name(op_.inDf[0].value));
          break;
        }
  }

  void l1Accumulation() {
    if (!op_.attributes.l1Acc.value) return;
    if (arch_ != Arch::WormholeB0 && arch_ != Arch::Blackhole)
      d_.error("l1-acc", op_.attributes.l1Acc.loc,
               element_ + ": l1_acc (accumulation in L1) exists on wormhole_b0 and blackhole only, not " +
                   std::string(archName(arch_)));
    else if (!isMatmul(op_) && op_.type.value != "depthwise")
      d_.error("l1-acc", op_.attributes.l1Acc.loc, element_ + ": l1_acc applies to matmul and depthwise only");
    else if (intermed() != DataFormat::Float32 && intermed() != DataFormat::Int32 && intermed() != DataFormat::Float16_b)
      d_.error("l1-acc", op_.intermedDf.loc,
               element_ + ": l1_acc accumulates in Float32, Int32 or Float16_b, not intermed_df " + name(intermed()));
  }
};

} // namespace

void checkOpFormats(const Op& op, Arch arch, DiagnosticEngine& diags) { FormatRules(op, arch, diags).run(); }

} // namespace tessera::netlist
