// Tensor manipulations (TMs) of the reference model, applied to whole tensors
// in value space: broadcast, hslice/hstack/vslice/vstack, transpose, pad and
// unpad, tile_broadcast. Shapes follow netlist::applyTms.
#pragma once
#include "formats/tensor.hpp"
#include "netlist/model.hpp"

#include <vector>

namespace tessera::golden {

using formats::Tensor;

Tensor applyTm(const Tensor& in, const netlist::Tm& tm);        // throws GoldenError on shape mismatch
Tensor applyTms(Tensor in, const std::vector<netlist::Tm>& tms);
Tensor padTiles(const Tensor& in, const netlist::Pad& pad);      // adds rt/ct tiles filled with padValue
Tensor unpadTiles(const Tensor& in, const netlist::Pad& unpad);  // removes rt/ct tiles from bottom/right

} // namespace tessera::golden
