// The typed netlist model. Every element keeps the 1-based source position of
// its key (and of the fields validators point at) so diagnostics can show a caret.
#pragma once
#include "netlist/perf_check.hpp"
#include "netlist/enums.hpp"
#include "support/source.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::netlist {

// A field as written: `loc` is the position of its value, invalid when absent.
template <class T> struct Field {
  T value{};
  SourceLoc loc;
  bool present() const { return loc.valid(); }
  void set(T v, SourceLoc l) { value = std::move(v); loc = l; }
};

struct Dim2 {
  int64_t r = 0; // rows
  int64_t c = 0; // cols
  friend bool operator==(const Dim2&, const Dim2&) = default;
};

// Raw YAML value kept as data (unknown attributes, performance-check, test-args).
using RawValue = nlohmann::ordered_json;

// A field we did not recognise; preserved so nothing the user wrote is lost.
struct ExtraField {
  std::string key;
  SourceLoc loc;
  RawValue value;
};

struct Devices {
  std::vector<Field<Arch>> arch; // scalar or list in the file; order kept
  SourceLoc loc;
  bool archWasList = false;
};

// ---------------------------------------------------------------- TMs
struct Pad {
  int64_t rt = 0, ct = 0; // tiles added (pad) or removed (unpad) at the bottom/right
  double padValue = 0.0;  // pad only
  SourceLoc loc;
};

struct Tm {
  TmKind kind = TmKind::Transpose;
  char dim = 0;        // 'r', 'c' or 'z' for broadcast / tile_broadcast
  int64_t factor = 0;  // broadcast factor or slice/stack count; 0 for transpose/tile_broadcast/pad
  Pad pad;             // pad TM (`pad: [rt, ct, value]`) only
  SourceLoc loc;
};

// ---------------------------------------------------------------- queues
struct AllocAddress {
  int64_t channel = 0;   // DRAM channel, or host memory id for loc: host
  uint64_t address = 0;
  SourceLoc loc;
};

struct Queue {
  std::string name;
  SourceLoc loc; // the queue's key
  Field<std::string> input; // "HOST" or the producing op
  Field<IoType> type;
  Field<int64_t> entries;
  Field<Dim2> gridSize;
  Field<int64_t> t;
  Field<Dim2> mblock;
  Field<Dim2> ublock;
  Field<UblockOrder> ublockOrder; // default r
  Field<DataFormat> df;
  Field<int64_t> targetDevice;
  Field<IoLocation> location; // `loc`
  std::vector<AllocAddress> dram;
  SourceLoc dramLoc;
  std::vector<AllocAddress> host;
  SourceLoc hostLoc;
  Field<std::string> alias;
  Field<std::string> layout; // tilized (default), flat, ...
  Field<Dim2> tileDim;       // default [32, 32]
  std::vector<Tm> inputTms;
  SourceLoc inputTmsLoc;
  std::vector<ExtraField> extra;

  UblockOrder order() const { return ublockOrder.present() ? ublockOrder.value : UblockOrder::R; }
  bool isHostFed() const { return input.value == "HOST"; }
  // Fed by another netlist (BUDA's `net2net` naming): no producer op here.
  bool isExternal() const { return input.value.find("net2net") != std::string::npos; }
};

// ---------------------------------------------------------------- ops
struct Operand {
  std::string name;
  SourceLoc loc;
  std::vector<Tm> tms;
  SourceLoc tmsLoc; // position of input_N_tms, invalid when absent
  std::optional<Pad> pad;
  std::optional<Pad> unpad;
};

// One attribute value, typed where its key is known (see docs/netlist-json.md).
struct Attribute {
  std::string key;
  SourceLoc loc;
  RawValue value; // normalised: ints as integers, booleans as bool, reals as double
  bool known = false;
};

struct OpAttributes {
  SourceLoc loc;
  std::vector<Attribute> all; // every attribute in source order (duplicates kept)

  // Typed views of the attributes validators and later stages use.
  Field<int64_t> mK, uKt, z;
  Field<bool> accumulate, identity, bias, relu, approximateMode, l1Acc;
  Field<std::string> reduceType; // reduce: sum / max
  Field<std::string> reduceDim;  // reduce: r / c / z
  Field<std::string> reluMode;   // min / max
  Field<double> reluThreshold;
  Field<std::string> fusedOpId;  // fused_op: key into fused_ops
  std::map<int, Field<int64_t>> kernelBroadcast; // input index -> period in tiles
  // splice: per input [index, length, stride]
  std::map<int, std::vector<int64_t>> spliceInputs;
  Field<std::string> granularity;            // splice: t or tiles
  Field<int64_t> numIndices;                  // embedding
  Field<int64_t> k;                           // topk
  Field<std::string> sort;                    // topk: max / argmax
  Field<bool> kreduce;                        // topk
  Field<int64_t> numSparseTiles, numIndexTiles, sparseTilePtrBits, sparseUblockIdxBits, actT, fractureFactor;
  Field<double> zeroPoint;                    // quantization family
  // ethernet_datacopy: the chip it sends to, and per core the channel on
  // this op's chip (ingress) and on dest_device (egress) it relays over.
  Field<int64_t> destDevice;
  Field<std::vector<int64_t>> ingressChannels, egressChannels;

  const Attribute* find(const std::string& key) const;
};

struct Op {
  std::string name;
  std::string graph;
  SourceLoc loc;
  Field<std::string> type;
  Field<Dim2> gridLoc;
  Field<Dim2> gridSize;
  std::vector<Operand> inputs;
  SourceLoc inputsLoc;
  std::vector<Field<DataFormat>> inDf;
  SourceLoc inDfLoc;
  Field<DataFormat> outDf, intermedDf, accDf;
  Field<MathFidelity> mathFidelity;
  Field<int64_t> t;
  Field<Dim2> mblock, ublock;
  Field<UblockOrder> ublockOrder;
  Field<int64_t> bufSizeMb; // default 1
  Field<bool> untilizeOutput, gridTranspose, gradientOp;
  std::vector<int64_t> inputBufMinSizeTiles;
  SourceLoc inputBufMinSizeTilesLoc;
  std::vector<int64_t> inputDramIoBufSizeTiles;
  SourceLoc inputDramIoBufSizeTilesLoc;
  Field<int64_t> overlaySize;
  Field<Dim2> tileDim;
  OpAttributes attributes;
  std::vector<ExtraField> extra;

  UblockOrder order() const { return ublockOrder.present() ? ublockOrder.value : UblockOrder::R; }
  // Grid as placed: rows/cols swapped when grid_transpose is set.
  Dim2 placedGridSize() const {
    return gridTranspose.value ? Dim2{gridSize.value.c, gridSize.value.r} : gridSize.value;
  }
};

struct Graph {
  std::string name;
  SourceLoc loc;
  Field<int64_t> targetDevice;
  Field<int64_t> inputCount;
  std::vector<Op> ops; // source order
  std::vector<ExtraField> extra;
};

// ---------------------------------------------------------------- fused ops
struct FusedSubOp {
  std::string name;
  SourceLoc loc;
  Field<std::string> type;
  std::vector<Operand> inputs; // names: inputN, intermedN, dest
  SourceLoc inputsLoc;
  Field<std::string> output;   // output, dest or intermedN
  std::vector<Field<std::string>> pop;
  std::vector<Field<std::string>> popLast;
  Field<Dim2> mblock, ublock;
  Field<int64_t> t;
  OpAttributes attributes;
  std::vector<ExtraField> extra;
};

struct FusedSchedule {
  SourceLoc loc;
  std::vector<FusedSubOp> ops;
};

struct FusedOp {
  std::string id; // the key under fused_ops (usually an integer)
  SourceLoc loc;
  Field<int64_t> inputs;
  Field<int64_t> intermediates;
  std::vector<FusedSchedule> schedules;
  std::vector<ExtraField> extra;
};

// ---------------------------------------------------------------- programs
// An instruction argument: an integer literal or a `$variable`.
struct Operand64 {
  bool isVar = false;
  std::string var; // with its `$`
  int64_t value = 0;
  SourceLoc loc;
};

struct QueueSetting {
  std::string queue;
  SourceLoc loc;
  std::optional<Operand64> prologue, epilogue, zero, readOnly; // booleans: 0/1
  std::optional<Operand64> rdPtrLocal, rdPtrGlobal, wrPtrGlobal;
  std::optional<Operand64> globalRdptrAutoinc, rdPtrAutoinc, globalWrptrAutoinc;
  std::vector<ExtraField> extra;
};

enum class InstrKind { Var, StaticVar, Param, VarInst, Loop, EndLoop, Execute, AllocateQueue, DeallocateQueue, EndProgram };

struct VarDecl {
  std::string name; // with its `$`
  SourceLoc loc;
  std::optional<int64_t> init; // map form gives an initial value
};

struct Instruction {
  InstrKind kind = InstrKind::EndProgram;
  SourceLoc loc;
  std::vector<VarDecl> vars;            // var / staticvar / param
  // varinst
  VarOpcode opcode = VarOpcode::Set;
  std::string out;                      // destination variable
  SourceLoc outLoc;
  std::vector<Operand64> args;
  // loop
  Operand64 loopCount;
  // execute
  Field<std::string> graphName;
  std::vector<QueueSetting> queueSettings;
  // allocate_queue / deallocate_queue
  std::vector<Field<std::string>> queues;
};

struct Program {
  std::string name;
  SourceLoc loc;
  std::vector<Instruction> instructions;
};

// ---------------------------------------------------------------- test-config
// The configs hold overrides of their own type; their default constructors are
// defaulted out of line so std::pair<std::string, Self> sees a complete type
// (clang 14 with libstdc++ 12 rejects the in-class implicit one).
struct ComparisonConfig {
  ComparisonConfig();
  SourceLoc loc;
  Field<std::string> type; // Exact, AllClose, AllCloseHw
  Field<double> atol, rtol, checkPct, checkPcc;
  Field<std::string> verbosity;
  std::vector<std::pair<std::string, ComparisonConfig>> overrides; // queue-name regex -> config
  std::vector<ExtraField> extra;
};

struct StimulusConfig {
  StimulusConfig();
  SourceLoc loc;
  Field<std::string> type; // Uniform, Normal, Constant, Step, StepRowwise, DebugTileId, sparse, ...
  Field<double> uniformLowerBound, uniformUpperBound, normalMean, normalStddev, constantValue;
  Field<double> stepStart, stepIncrement, debugTileIdBase, debugTileIdStep;
  std::vector<ExtraField> extra; // set_tile_rows, matmul_ident_name, ...
  std::vector<std::pair<std::string, StimulusConfig>> overrides;
};

inline ComparisonConfig::ComparisonConfig() = default;
inline StimulusConfig::StimulusConfig() = default;

struct TestConfig {
  SourceLoc loc;
  std::optional<ComparisonConfig> comparison;
  std::optional<StimulusConfig> stimulus;
  std::vector<ExtraField> extra; // test-args, io-config, ...
};

// ---------------------------------------------------------------- netlist
struct Netlist {
  Devices devices;
  std::vector<Queue> queues;
  std::vector<Graph> graphs;
  std::vector<FusedOp> fusedOps;
  std::vector<Program> programs;
  std::optional<TestConfig> testConfig;
  std::optional<ExtraField> performanceCheck;  // as written (--emit-json)
  std::optional<PerfCheck> perfCheck;         // typed (netlist/perf_check.hpp)
  std::vector<ExtraField> extra; // unknown top-level sections
};

} // namespace tessera::netlist
