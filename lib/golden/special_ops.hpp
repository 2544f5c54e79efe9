// Ops with their own data movement or integer semantics: splice, depthwise,
// embedding, tilizer, topk, quantization family. evalOp dispatches here.
// docs/golden-special-ops.md states the BUDA semantics each one follows.
#pragma once
#include "golden/ops.hpp"

#include <cstdint>

namespace tessera::golden {

Tensor evalSplice(const OpSpec& spec, std::span<const Tensor> inputs);
Tensor evalDepthwise(const OpSpec& spec, std::span<const Tensor> inputs);
Tensor evalEmbedding(const OpSpec& spec, std::span<const Tensor> inputs);
Tensor evalTilizer(const OpSpec& spec, std::span<const Tensor> inputs);
Tensor evalTopk(const OpSpec& spec, std::span<const Tensor> inputs);
Tensor evalQuantization(const OpSpec& spec, std::span<const Tensor> inputs);
Tensor evalDequantization(const OpSpec& spec, std::span<const Tensor> inputs);
Tensor evalRequantization(const OpSpec& spec, std::span<const Tensor> inputs);
// matmul with identity: true (sparse matmul: input0 sparse tiles, input1
// activations, input2 the encoding), when implemented.
// The encoding words come from inputs[2].rawBits when present (exact), else
// from its float values (exact only below 2^24).
Tensor evalSparseMatmul(const OpSpec& spec, std::span<const Tensor> inputs);

// Splice at ublock granularity walks ublocks in the op's ublock_order, which
// OpSpec does not carry: pass it here. The two-argument form throws when the
// order would change the result (some mblock with more than one row and column).
Tensor evalSplice(const OpSpec& spec, std::span<const Tensor> inputs, netlist::UblockOrder order);

// Dequantization reading its value from input `valueInput` and the scale from
// the other one: fused ops whose input 1 is dest pass 1 (BUDA swaps them there).
Tensor evalDequantization(const OpSpec& spec, std::span<const Tensor> inputs, int valueInput);

// Sparse matmul with the encoding given as exact 32-bit codes, one per value of
// the (post-TM) encoding tensor inputs[2], in the same row-major order. Needed
// because formats::Tensor holds RawUInt32 values as floats (exact below 2^24)
// while the encoding's flag bits are bits 30 and 31 of its words.
Tensor evalSparseMatmulCodes(const OpSpec& spec, std::span<const Tensor> inputs, std::span<const uint32_t> encodingCodes);

} // namespace tessera::golden
