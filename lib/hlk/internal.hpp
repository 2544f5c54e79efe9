// Helpers shared by the files of lib/hlk (not part of its interface).
#pragma once
#include "hlk/config.hpp"
#include "netlist/shape.hpp"
#include "netlist/text.hpp"

#include <optional>
#include <string>

namespace tessera::hlk {

using netlist::quote;
using netlist::dimText;

// Unary types the SFPU computes, with their function; nullopt for others.
std::optional<contract::SfpuFunc> sfpuFuncOf(const std::string& type);
bool isCopyType(const std::string& type);   // datacopy, nop, ethernet_datacopy
std::optional<contract::EltwiseOp> eltwiseOpOf(const std::string& type); // add, subtract, multiply, maximum

// The SFPU parameter of a unary from the attributes (power: exp, lrelu:
// slope). On a missing/bad attribute returns nullopt and sets `why`.
std::optional<uint32_t> sfpuParam(contract::SfpuFunc f, const netlist::OpAttributes& attrs, std::string& why);

// relu_en/relu_mode/relu_threshold: mode (0 off, 1 min, 2 max) and threshold bits.
void reluOf(const netlist::OpAttributes& attrs, uint32_t& mode, uint32_t& thresholdBits);

// The shape of input `i` of `op` after its unpad, TMs and pad (as the op sees it).
std::optional<netlist::TensorShape> inputShape(const netlist::Netlist& nl, const netlist::Op& op, size_t i);

// The dest register format for an acc_df: Float32, Int32 (integer formats),
// else the 16-bit float of the format's exponent family (Bfp8_b -> Float16_b,
// Bfp8 -> Float16).
DataFormat destFormatOf(DataFormat accDf);

// The operands every family declares the same way: input i of `op` in its
// in_df (out_df when absent), and the output operand in the op's own
// layout, needing a ublock (a whole block when untilized: published whole,
// one row-major region per t).
OperandInfo inputOperand(const netlist::Op& op, size_t i, Layout layout, int64_t minTiles);
OperandInfo outputOperand(const netlist::Op& op);

// "op 'x' in graph 'g'"
std::string opText(const netlist::Op& op);

// Position of a field, or of the op when the field is absent.
template <class F> SourceLoc locOr(const F& field, SourceLoc fallback) {
  return field.loc.valid() ? field.loc : fallback;
}

// C++ spelling of contract enum values in the generated files.
std::string formatCode(DataFormat f);        // kFloat16_b
std::string fidelityCode(MathFidelity f);    // kHiFi4
std::string sfpuCode(contract::SfpuFunc f, bool approximate = false);  // kSfpuExp
std::string eltwiseCode(contract::EltwiseOp op);
std::string bcastCode(contract::Broadcast b);
std::string hex32(uint32_t v);               // 0x3F800000u

} // namespace tessera::hlk
