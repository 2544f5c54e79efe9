// The host reference model of one op: given the op's (already TM'd and
// unpacked) input tensors, compute its output as the device would, including
// the rounding to the op's data formats. Independent of any device code.
//
// Numerical model (docs/golden-model.md):
//  * inputs are rounded to their in_df (the unpacker's source format);
//  * math runs in float32; multiplications see operands reduced by the math
//    fidelity (LoFi/HiFi2/HiFi3 drop low mantissa bits, HiFi4 keeps them);
//  * every result the device holds in its dest register is rounded to the
//    dest format (destFormatOf(acc_df)) before relu and the out_df rounding:
//    eltwise, unary (its input too: the datacopy into dest), matmul, reduce,
//    splice; matmul partial sums over m_k are rounded to intermed_df between
//    blocks.
#pragma once
#include "formats/tensor.hpp"
#include "netlist/model.hpp"

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::golden {

using formats::Tensor;
using netlist::DataFormat;
using netlist::MathFidelity;

// A reference-model failure on valid-looking input (an op type or attribute the
// model does not implement, a shape that cannot be computed). The loader turns
// it into a diagnostic naming the op.
struct GoldenError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Everything evalOp needs about one op (or one fused sub-op).
struct OpSpec {
  std::string name;                   // for messages
  std::string type;                   // netlist op type: matmul, add, exp, ...
  const netlist::OpAttributes* attrs = nullptr; // never null when called
  // Output blocking in tiles; output tensor is [w][t][rows*32][cols*32].
  int64_t t = 1;
  netlist::Dim2 grid{1, 1}, mblock{1, 1}, ublock{1, 1};
  netlist::UblockOrder ublockOrder = netlist::UblockOrder::R; // splice walks ublocks in this order
  std::vector<DataFormat> inDf;       // one per input (may be empty: no input rounding)
  DataFormat outDf = DataFormat::Float16_b;
  DataFormat accDf = DataFormat::Float16_b;
  DataFormat intermedDf = DataFormat::Float16_b;
  MathFidelity fidelity = MathFidelity::HiFi4;
  netlist::Arch arch = netlist::Arch::Grayskull;
  // false: return the math result unrounded (no dest, no out_df rounding);
  // for callers that round it themselves (matmul parts of depthwise/sparse).
  bool roundOutput = true;
  // matmul gradient_op whose kernel adds each partial sum (m_k block,
  // accumulated t slice) into the gradient block in place (net2hlks'
  // MatmulArgs::partialsInPlace): every partial sum starts from a zeroed
  // dest and is returned as an entry of its own, in the order the device
  // adds them (input by input, then block by block; bias in the last), so
  // accumulateGradient rounds the cell after each, as the packer does.
  bool partialsInPlace = false;
  // Inputs the caller already rounded to their in_df before a TM that moves
  // values inside a tile (unpackedOperand, tm.hpp): not rounded again.
  // Empty: every input with an in_df is rounded.
  std::vector<bool> inputRounded;
  // Per input: true when the caller knows every value is already in that
  // input's in_df (a queue entry checked once, a producer's out_df), so
  // evalOp skips its pass over it. Missing entries: checked.
  std::vector<bool> inputsInDf;
  // matmul (not sparse, not in place): input 1 is one entry (w = 1) that
  // every entry of input 0 reads, a ram or prologue weight. Read as is,
  // not stacked w times: the stacked copies cost more in copying and page
  // faults than the product (ub48 training netlists).
  bool sharedWeights = false;

  // Whether the model rounds (or checks) input i to inDf[i].
  bool roundsInput(size_t i) const {
    return i < inDf.size() && !(i < inputRounded.size() && inputRounded[i]) &&
           !(i < inputsInDf.size() && inputsInDf[i]);
  }

  int64_t rowTiles() const { return grid.r * mblock.r * ublock.r; }
  int64_t colTiles() const { return grid.c * mblock.c * ublock.c; }
};

// The spec of netlist op `op` on `arch`: its blocking, formats (acc_df and
// intermed_df default to out_df) and fidelity (HiFi4 when absent).
OpSpec specOf(const netlist::Op& op, netlist::Arch arch);

// The format of the dest register for an op's acc_df (net2hlks' kDestFormat,
// docs/net2hlks.md): Float16, Float16_b and Float32 as given, Int32 for an
// integer acc_df, and for a block format the 16-bit float of its exponent
// family (Float16_b for the _b formats and RawUInt*, else Float16).
DataFormat destFormatOf(DataFormat accDf);

// Computes one op. All inputs have the same w (number of entries). Throws
// GoldenError for unsupported types/attributes.
Tensor evalOp(const OpSpec& spec, std::span<const Tensor> inputs);

// True when evalOp implements `type` (fused_op is handled by fused.hpp).
bool isSupportedOpType(const std::string& type);

// A gradient op's ram cell after an execute: each entry of `results` (the
// op's result per input, as it stands in dest) is added to `cell` in order,
// and the cell rounded to `cellDf` after every add, as the device packs it.
// Entries must have the cell's shape (GoldenError otherwise).
void accumulateGradient(Tensor& cell, const Tensor& results, DataFormat cellDf);

// Element-wise pieces the fused-op executor reuses.
float unaryScalar(const std::string& type, const netlist::OpAttributes& attrs, float x); // throws GoldenError
float binaryScalar(const std::string& type, float a, float b);                            // add, subtract, multiply, maximum
// Reduces a multiplication operand to what the math fidelity keeps.
float fidelityOperandA(MathFidelity f, float x);
float fidelityOperandB(MathFidelity f, float x);
// a*b as the multiplier computes it at fidelity `f` (a in srcA, b in srcB):
// exact for HiFi3, where the phases do not factor into reduced operands.
float fidelityMultiply(MathFidelity f, float a, float b);

} // namespace tessera::golden
