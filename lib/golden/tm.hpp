// Tensor manipulations (TMs) of the reference model, applied to whole tensors
// in value space: broadcast, hslice/hstack/vslice/vstack, transpose, pad and
// unpad, tile_broadcast. Shapes follow netlist::applyTms.
#pragma once
#include "formats/tensor.hpp"
#include "netlist/model.hpp"

#include <optional>
#include <vector>

namespace tessera::golden {

using formats::Tensor;

Tensor applyTm(const Tensor& in, const netlist::Tm& tm);        // throws GoldenError on shape mismatch
Tensor applyTms(Tensor in, const std::vector<netlist::Tm>& tms);
Tensor padTiles(const Tensor& in, const netlist::Pad& pad);      // adds rt/ct tiles filled with padValue
Tensor unpadTiles(const Tensor& in, const netlist::Pad& unpad);  // removes rt/ct tiles from bottom/right

// An op's operand as its unpacker delivers it: unpad, the TMs, pad. With a
// Bfp in_df and a transpose among the TMs, the values are rounded to in_df
// before the TMs (pad values on their own) and `rounded` is set: the unpacker
// decodes each tile as stored in L1, one exponent per 16 values of a row, and
// transposes the decoded values, so rounding after the transpose would group
// the blocks along the former columns. The caller then sets
// OpSpec::inputRounded for it. Otherwise rounding is left to the op's model.
Tensor unpackedOperand(Tensor in, const netlist::Operand& operand, std::optional<netlist::DataFormat> inDf,
                       bool& rounded);

} // namespace tessera::golden
