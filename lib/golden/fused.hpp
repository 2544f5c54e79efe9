// Fused ops executed from their schedules: sub-ops in order, each reading op
// inputs (input<N>), intermediates (intermed<N>) or the dest register ("dest"),
// writing to output/intermed<N>/dest, with pops and tile_broadcast as written.
#pragma once
#include "golden/ops.hpp"

namespace tessera::golden {

// `spec` is the fused op itself (its output blocking/formats); `fused` its
// definition from the netlist's fused_ops section.
Tensor evalFusedOp(const OpSpec& spec, const netlist::FusedOp& fused, std::span<const Tensor> inputs);

} // namespace tessera::golden
