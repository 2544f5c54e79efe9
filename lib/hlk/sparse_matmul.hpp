// Sparse matmul (matmul with identity: true): the kernel configuration and
// its template. The kernel walks the strip encoding (input 2) tile by tile
// on all three threads (lib/kernels/include/hlk_sparse.h), multiplies the
// named sparse tiles (input 0) with the activation strips (input 1) into
// dest, and spills partial sums between the strips of an output t.
// docs/net2hlks.md "Sparse matmul"; the numerics are lib/golden's
// (docs/golden-special-ops.md "sparse matmul").
#pragma once
#include "hlk/config.hpp"

#include <optional>
#include <string>

namespace tessera::hlk {

struct SparseMatmulPlan {
  int64_t uKt = 1;
  int ptrBits = 0;         // sparse_tile_ptr_bits (absent: 0, as BUDA)
  int ublockIdxBits = 0;   // sparse_ublock_idx_bits (absent or <= 0: ptrBits)
  int innerDBits = 1;      // bits of u_kt - 1, at least 1
  int64_t sparseTiles = 1; // input 0 tiles per core and entry (waited whole)
  int64_t indexTiles = 1;  // input 2 tiles per core and entry
  int64_t strips = 1;      // activation strips per core and entry: input 1 t x tile rows / u_kt
  bool transposeIn1 = false;
};

// `k` carries the common args of the op. Reports what cannot be generated
// (hlk-unsupported-feature, hlk-attribute) and gives nullopt.
std::optional<KernelConfig> configureSparseMatmul(const netlist::Netlist& nl, const netlist::Op& op, KernelConfig k,
                                                  DiagnosticEngine& diags);

// The sparse matmul section of hlk_args.h, and the body of hlks.cpp.
std::string renderSparseMatmulArgs(const KernelConfig& k);
std::string renderSparseMatmulBody();

} // namespace tessera::hlk
