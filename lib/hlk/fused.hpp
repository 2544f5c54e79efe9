// Fused ops: the plan net2hlks generates a fused op's kernel from.
//
// Execution model (docs/net2hlks.md, "Fused ops"): per input and per t, the
// schedules run in order and inside a schedule the sub-ops run in order. A
// run of sub-ops linked through `dest` (each reads the dest the previous one
// wrote) is a *chain*: it works on one ublock at a time, the whole chain on a
// ublock before the next. A *group* is a matmul, a reduce, or consecutive
// chains of one schedule that write the same block and run in lockstep
// (ublock u of every chain, then ublock u+1). Groups run one after the other.
// A value passed between chains of one group is *streamed*: its ublock is at
// the front of the buffer when read and popped in the same step. Any other
// intermediate value lies complete in its buffer, in the producer's blocking
// (mblock x ublock, the op's ublock order), when later groups read it; they
// index it freely, which is how broadcasts (whole tiles) and matmul/reduce
// operands are read. Inputs read by one group in its blocking are streamed;
// other inputs are held for the whole t. Each plan is checked tile by tile
// (verifyFusedPlan), which also gives the capacities the operands need
// (manifest `min_tiles`).
#pragma once
#include "hlk/config.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::hlk {

// How a sub-op reads one operand.
struct ReadPlan {
  enum class Kind { Dest, Stream, Random };
  Kind kind = Kind::Dest;
  int operand = -1;        // input i -> i, intermedN -> 24 + N
  std::string name;        // inputN / intermedN / dest
  Layout layout;           // Random: how the value lies in the buffer
  int64_t rowsMod = 0;     // r broadcast: view row -> row % rowsMod (0: none)
  int64_t colsMod = 0;     // c broadcast: view col -> col % colsMod (0: none)
  contract::Broadcast tileBcast = contract::kBcastNone; // tile_broadcast (input 1 of a binary sub-op)
  int value = -1;          // intermediates: index into FusedPlan::values
};

struct SubOpPlan {
  // Quant: quantization/requantization (value x scale, + zero point, Int8 in
  // dest) or dequantization ((value - zero point) x scale; `dequant`).
  enum class Kind { Copy, Sfpu, Binary, Matmul, Reduce, Quant };
  std::string name;
  std::string type;
  size_t sched = 0, pos = 0;
  Kind kind = Kind::Copy;
  contract::SfpuFunc func = contract::kSfpuExp;
  uint32_t param = 0;       // Sfpu: the function's; Quant: zero point bits (dequant: of -zero_point)
  bool approximate = false; // Sfpu: approximate_mode (cost only)
  bool dequant = false;     // Quant
  contract::EltwiseOp eltOp = contract::kEltAdd;
  std::vector<ReadPlan> inputs;
  enum class Out { Dest, Intermed, Output };
  Out out = Out::Dest;
  int outOperand = -1; // 24 + N or 16
  std::string outName;
  int outValue = -1;       // Out::Intermed: index into FusedPlan::values
  Dim2 mblock{1, 1}, ublock{1, 1}; // the block it writes
  // relu_en of the sub-op, applied in math (SFPU) to what it computes.
  uint32_t reluMode = 0;
  uint32_t reluThresholdBits = 0;
  // Matmul and reduce.
  int64_t mK = 1, uKt = 1;
  bool spill = false; // matmul: partial sums go through FusedPlan::spillOperand between m_k blocks
  contract::ReduceDim reduceDim = contract::kReduceRows;
  contract::ReduceType reduceType = contract::kReduceSum;
  uint32_t reduceScaleBits = 0x3F800000u;
};

// A count of tiles of one operand, with what it is (a comment in hlks.cpp).
struct TileCount {
  int operand;
  int64_t tiles;
  std::string what;
};

// Sub-ops run on one ublock in dest: a dest chain, or one matmul/reduce.
struct ChainPlan {
  std::vector<size_t> subs;       // indices into FusedPlan::subs
  std::vector<TileCount> waits;   // streamed operands, waited for before the chain (one ublock)
  std::vector<TileCount> pops;    // streamed operands this chain is the last to read in the ublock
};

// Chains that run together, ublock by ublock (lockstep); matmul and reduce
// are groups of their own.
struct GroupPlan {
  std::vector<ChainPlan> chains;
  Dim2 mblock{1, 1}, ublock{1, 1};  // the block every sub-op of the group writes (chains)
  std::vector<TileCount> waitAtStart; // values read whole (random access)
  std::vector<TileCount> popAtEnd;    // whole values whose last reader is in the group
  // A matmul group whose input 0 is a value the lockstep group just before it
  // writes, in the matmul's rows: the two run interleaved, and the value's
  // buffer holds one step of it (BUDA's fused-op intermediate sizes). Rows:
  // per row of output ublocks, the producer's ublocks of that row, then the
  // matmul's (the value holds m_k ublocks, one row). Ublocks (the matmul's
  // output is one ublock wide): per m_k block, the producer's ublock, then
  // the matmul's step on it, partial sums through the spill operand (the
  // value holds one ublock).
  enum class Feed { None, Rows, Ublocks };
  Feed feed = Feed::None;
  int feedOperand = -1;   // the value's operand
  int64_t feedTiles = 0;  // tiles of it per step (waited for, then popped)
};

// One write of an intermediate buffer: what the producer stores there.
struct ValuePlan {
  int operand = -1;
  size_t producer = 0;
  Layout layout;
};

struct FusedPlan {
  std::string id;          // fused_op_id
  std::vector<SubOpPlan> subs;
  std::vector<ValuePlan> values;
  std::vector<std::optional<Layout>> inputs; // the tile order of each op input
  Layout output;                             // the op's output blocking
  std::vector<GroupPlan> groups;
  int intermediates = 0;
  int spillOperand = -1;   // matmul partial sums between m_k blocks; -1 when unused
  UblockOrder order = UblockOrder::R;
};

// Plans the fused op `op` uses. Fills the fused-specific operands (inputs,
// intermediates, spill; the caller adds the output). Unsupported features
// are reported on `diags` and give null.
std::shared_ptr<const FusedPlan> planFusedOp(const netlist::Netlist& nl, const netlist::Op& op,
                                             const netlist::FusedOp& fused, const netlist::ValidationTarget& target,
                                             DiagnosticEngine& diags, std::vector<OperandInfo>& operands);

// Runs the plan on labelled tiles: every read must find the tile it means
// (the right value, row and column) at the index the kernel computes, every
// pop must release the tiles it means, the output must leave in the op's tile
// order and every buffer must end the t empty. `error` is empty when all
// holds; `peaks` gives the most tiles each intermediate/spill operand holds
// (the capacity the kernel needs). planFusedOp runs it on every plan.
struct PlanCheck {
  std::string error;
  std::map<int, int64_t> peaks;
};
PlanCheck verifyFusedPlan(const FusedPlan& plan);

// The body of hlks.cpp's hlk_main for a fused plan (emit.cpp wraps it).
std::string renderFusedBody(const FusedPlan& plan);

} // namespace tessera::hlk
