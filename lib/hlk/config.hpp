// What net2hlks knows about one op's kernel: the template family, the values
// of its args header, and the contract with the data path (which operands the
// kernel uses, the tile order each carries, how many tiles each must hold).
// docs/net2hlks.md describes every field; docs/artifacts.md the files.
#pragma once
#include "device/device_contract.h"
#include "netlist/model.hpp"
#include "netlist/validator.hpp"
#include "support/diagnostics.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessera::hlk {

using netlist::DataFormat;
using netlist::Dim2;
using netlist::MathFidelity;
using netlist::UblockOrder;

// The template an op's kernel is instantiated from.
enum class Family { Unary, Binary, Matmul, Reduce, Splice, Fused, Depthwise, Quant, Tilizer, Embedding, Topk };
// unary, binary, matmul, reduce, splice, fused, depthwise, quant, tilizer, embedding, topk
std::string_view familyName(Family f);

// The tile order of one operand: per t, the ublocks of the mblock in
// `order`, each ublock row-major (lib/formats/blocking.hpp coreTileOrder for
// one core). `t` counts the t slices one output t consumes times the op's t.
struct Layout {
  int64_t t = 1;
  Dim2 mblock{1, 1};
  Dim2 ublock{1, 1};
  UblockOrder order = UblockOrder::R;

  int64_t ublockTiles() const { return ublock.r * ublock.c; }
  int64_t blockTiles() const { return mblock.r * mblock.c * ublockTiles(); } // one t
  // Tiles an untilizing packer writes and publishes at a time: a row of
  // ublocks (a contiguous row-major stripe of the block) in ublock order r;
  // the whole block in order c (its ublock columns are not contiguous).
  int64_t untilizeStripeTiles() const { return order == UblockOrder::R ? mblock.c * ublockTiles() : blockTiles(); }
  int64_t rowTiles() const { return mblock.r * ublock.r; }
  int64_t colTiles() const { return mblock.c * ublock.c; }
  // Position in the stream of one t of the tile at (row, col) of the block.
  int64_t index(int64_t row, int64_t col) const;
  friend bool operator==(const Layout&, const Layout&) = default;
};

enum class OperandRole { Input, Output, Intermediate, Spill };
std::string_view roleName(OperandRole r); // input, output, intermediate, spill

// One operand (BUDA numbering: 0-7 inputs, 16 output, 24-31 intermediates)
// as the kernel uses it.
struct OperandInfo {
  int operand = 0;
  OperandRole role = OperandRole::Input;
  int index = -1;        // input index or intermediate index; -1 for output and spill
  std::string source;    // inputs: the queue or op feeding it
  DataFormat df = DataFormat::Float16_b;
  std::optional<Layout> layout; // inputs and output: the tile order; kernel-internal buffers: none
  int64_t minTiles = 0;         // the capacity the kernel needs to make progress
  bool untilized = false;       // output written row-major (untilize_output)
  Dim2 tile{32, 32};            // tile_dim of its tiles: inputs the producer's, the rest the op's
};

// Values common to every family.
struct CommonArgs {
  int64_t t = 1;                 // output t slices per input
  Dim2 mblock{1, 1}, ublock{1, 1};
  UblockOrder order = UblockOrder::R;
  MathFidelity fidelity = MathFidelity::HiFi4;
  DataFormat destFormat = DataFormat::Float16_b; // acc_df: the dest register's format
  std::vector<DataFormat> inFormats;
  DataFormat outFormat = DataFormat::Float16_b;
  DataFormat intermedFormat = DataFormat::Float16_b;
  uint32_t reluMode = 0;          // 0 off, 1 min, 2 max (contract kCfgReluMode)
  uint32_t reluThresholdBits = 0; // float32 bits
  bool untilize = false;
  // gradient_op: every input's output block is added into one fixed block in
  // L1 (the ram cell the firmware loads and stores), tile k at slot k.
  bool gradient = false;
  int destTiles16 = 16; // the arch's dest size in 16-bit tiles (wormhole A0: 64)
};

struct UnaryArgs {
  bool sfpu = false; // false: datacopy
  contract::SfpuFunc func = contract::kSfpuExp;
  uint32_t param = 0;
  bool approximate = false; // approximate_mode: a cheaper SFPU cost, same results
  bool transposeIn0 = false;
};

struct BinaryArgs {
  contract::EltwiseOp op = contract::kEltAdd;
  contract::Broadcast bcastIn1 = contract::kBcastNone; // tile_broadcast of input 1
  bool transposeIn0 = false; // transpose TM on input 0: copied to dest transposed, then dest op input 1
};

struct MatmulArgs {
  int64_t mK = 1, uKt = 1;
  int64_t accumulateZ = 1; // t slices summed into one output t (accumulate: true)
  bool bias = false;
  contract::Broadcast biasBcast = contract::kBcastRow; // float matmuls: row 0 of each bias tile
  bool transposeIn1 = false;
  bool sfpu = false;
  contract::SfpuFunc func = contract::kSfpuGelu;
  uint32_t param = 0;
  bool approximate = false; // approximate_mode
  bool spill = false; // partial sums leave dest between m_k blocks / accumulated slices
  // gradient_op whose partial-sums buffer does not fit L1: each partial sum
  // is added into the gradient block in place (no spill; docs/net2hlks.md).
  bool partialsInPlace = false;
  // requant: result x scale + zero_point, to Int8; dequant: (result +
  // zero_point) x scale. The scale is the input after the bias. Both run in a
  // Float32 dest (plain float32 products, as lib/golden computes them).
  int quant = 0;              // 0 none, 1 requant, 2 dequant
  uint32_t zeroPointBits = 0; // float32 bits
};

struct ReduceArgs {
  bool overZ = false;
  contract::ReduceDim dim = contract::kReduceRows; // r/c
  contract::ReduceType type = contract::kReduceSum;
  uint32_t scaleBits = 0x3F800000u;  // 1.0, or 1/extent for avg
  int64_t mK = 1, uKt = 1;           // r/c: the reduced extent as m_k blocks of u_kt tiles
  int64_t z = 1;                     // z: slices per output t
};

// splice: per round, input i drops `index` units, copies `length` units to
// the output and drops `stride - length` more. A unit is one ublock of the
// op's ublock shape (granularity ublock) or one t slice (granularity t).
struct SpliceArgs {
  struct Range {
    int64_t index = 0, length = 1, stride = 1;
  };
  std::vector<Range> inputs;
  bool tGranularity = false;
  int64_t unitUblocks = 1;   // ublocks per unit
  int64_t passes = 1;        // per entry: the op's t (granularity ublock) or 1 (t)
  int64_t rounds = 1;        // per pass
};

// depthwise: m_k blocks; block b multiplies in0's b-th output-shaped block
// tile by tile with row b of in1 (lib/golden special_ops).
struct DepthwiseArgs {
  int64_t mK = 1;
  bool bias = false;  // input 2, row 0 of each tile added to every row
  bool spill = false; // partial sums leave dest between blocks (m_k > 1)
};

// quantization/requantization (x * scale + zero_point, to Int8) and
// dequantization ((x - zero_point) * scale), in a Float32 dest.
struct QuantArgs {
  bool dequant = false;
  uint32_t zeroPointBits = 0; // float32 bits of zero_point (dequantization: of -zero_point)
};

// topk (lib/golden special_ops): per tile row, the core's n = 32 * tiles
// values of every row go through the device's sort network; see topk.cpp.
struct TopkArgs {
  int64_t k = 1;
  bool values = true;   // sort max: output the values; argmax: the indices
  bool kreduce = false; // inputs are already sorted k-runs
  int64_t tiles = 1;    // input tiles per row per core (m_k * u_kt)
  int64_t outTiles = 1; // ceil(k / 32)
};

// embedding (lib/golden special_ops): output rows gathered from the table
// (input 0, resident) by index words (input 1, one tile per core row).
struct EmbeddingArgs {
  int64_t numIndices = 32;
  int64_t tableRows = 1; // table tile rows (all of them on every core)
  int64_t tableCols = 1; // table tile columns per core (the output's)
};

struct FusedPlan; // fused.hpp
struct SparseMatmulPlan; // sparse_matmul.hpp

struct KernelConfig {
  Family family = Family::Unary;
  CommonArgs common;
  UnaryArgs unary;
  BinaryArgs binary;
  MatmulArgs matmul;
  ReduceArgs reduce;
  SpliceArgs splice;
  DepthwiseArgs depthwise;
  QuantArgs quant;
  TopkArgs topk;
  EmbeddingArgs embedding;
  std::shared_ptr<const FusedPlan> fused; // Family::Fused
  std::shared_ptr<const SparseMatmulPlan> sparse; // Family::Matmul with identity: true
  std::vector<OperandInfo> operands;      // sorted by operand number

  // The operand the kernel packs its output into: 16, or 24 for a gradient
  // op (BUDA's accumulator operand; docs/net2hlks.md "Operands and tile orders").
  int outputOperand() const;
  // The partial-sums operand (role Spill): 24, 25 for a gradient op; -1 when none.
  int spillOperand() const;
};

// Computes the kernel configuration of one op of a valid netlist. Problems
// (unsupported op types, attributes, fused-op features) are reported on
// `diags` (rules `hlk-*`, docs/net2hlks.md) and give nullopt.
std::optional<KernelConfig> configureOp(const netlist::Netlist& nl, const netlist::Op& op,
                                        const netlist::ValidationTarget& target, DiagnosticEngine& diags);

// The gradient matmuls of `nl` whose kernels add their partial sums into the
// gradient block in place (MatmulArgs::partialsInPlace): what the reference
// model needs to round as those kernels do (the loader's golden target).
std::set<std::string> gradientPartialsInPlace(const netlist::Netlist& nl, const netlist::ValidationTarget& target);

// The generated files of one kernel.
struct KernelText {
  std::string argsHeader; // hlk_args.h
  std::string source;     // hlks.cpp
};
KernelText renderKernel(const KernelConfig& config);

// Float32 bit pattern of a double, as the args header carries floats.
uint32_t floatBits(double v);

} // namespace tessera::hlk
