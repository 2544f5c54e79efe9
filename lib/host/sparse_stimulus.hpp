// Inputs of sparse matmuls (matmul with identity: true): the sparse tiles
// (input 0) and their strip encoding (input 2). Random floats are no valid
// encoding, so these queues are generated from the op's attributes, as BUDA's
// test harness does with its `sparse` and `sparse_encoding` stimulus types.
// The encoding format is the one lib/golden's sparse matmul reads
// (docs/golden-special-ops.md); docs/stimulus.md describes the generator.
#pragma once
#include "formats/tensor.hpp"
#include "netlist/model.hpp"

#include <cstdint>
#include <random>
#include <string>

namespace tessera::host {

// What the generators need from the matmul_ident op.
struct SparseOpShape {
  std::string opName;
  int64_t gridRows = 1;        // grid_size[0] as written (before grid_transpose)
  int64_t numSparseTiles = 0;  // distinct sparse tiles per grid row
  int64_t numIndexTiles = 0;   // encoding tiles per grid row
  int64_t mK = 1, uKt = 1;
  int64_t mblockM = 1, ublockRt = 1;
  int64_t outputT = 1, actT = 1;
  // Strips (u_kt activation tile rows each) one t of the activations holds,
  // when known from input 1's producer; 0 means m_k. Strips are drawn below
  // min(m_k, actStrips): an encoding must not read past the activations.
  int64_t actStrips = 0;
  // sparse_tile_ptr_bits (absent: 0, BUDA's default) and sparse_ublock_idx_bits
  // (absent: the tile pointer bits). Tile entries can name only the first
  // 2^tilePtrBits sparse tiles.
  int tilePtrBits = 0, ublockIdxBits = 0;
};

// The shape of `op` (an identity matmul). Throws std::invalid_argument naming
// the op and the attribute when one the encoding needs is missing or out of
// range, or when the bit fields cannot hold the op's blocking.
SparseOpShape sparseOpShape(const netlist::Netlist& nl, const netlist::Op& op);

// The identity matmul reading `queue` as input `inputIndex` (0 = sparse
// tiles, 2 = encoding), or null.
const netlist::Op* sparseConsumer(const netlist::Netlist& nl, const std::string& queue, size_t inputIndex);
const netlist::Op* findOp(const netlist::Netlist& nl, const std::string& name);

struct EncodingFrequencies {
  double zeroStrip = 0.5, zeroUblock = 0.5, zeroTile = 0.5;
  int64_t tileBytes = 4096;  // enc_tile_byte_size: bytes of one encoding tile (1024 values)
};

// One entry [1][t][rows][cols] of sparse tiles: tile k (in [t][row tile][col
// tile] order) is sparse tile k % numSparseTiles of grid row k / numSparseTiles;
// each has exactly one 1 per row, and a row's tiles are distinct.
formats::Tensor generateSparseTiles(const SparseOpShape& op, int64_t t, int64_t rows, int64_t cols,
                                    std::mt19937_64& gen);

// One entry of the encoding: tile k belongs to grid row k / numIndexTiles.
// The values are returned exactly in `rawBits` (RawUInt32 words use all 32
// bits; `data` holds them as floats, exact only below 2^24). When `adaptive`,
// an encoding that does not fit numIndexTiles is drawn again with more zeros;
// otherwise that is an std::invalid_argument naming the op.
formats::Tensor generateSparseEncoding(const SparseOpShape& op, const EncodingFrequencies& freq, bool adaptive,
                                       int64_t t, int64_t rows, int64_t cols, std::mt19937_64& gen);

} // namespace tessera::host
