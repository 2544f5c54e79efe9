// The Tensix coprocessor: instruction decode, source-register banking and
// stalls, UNPACK/PACK through lib/formats, and the math instructions (their
// per-value arithmetic is in coprocessor_math.cpp). docs/device-model.md is
// the specification; coprocessor.hpp explains the interface.
#include "sim/coprocessor.hpp"

#include "formats/formats.hpp"
#include "formats/data_format.hpp"
#include "sim/coprocessor_math.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

namespace tessera::sim {

namespace c = tessera::contract;
using tessera::DataFormat;

static_assert(static_cast<uint32_t>(DataFormat::Float32) == c::kFloat32);
static_assert(static_cast<uint32_t>(DataFormat::Bfp8_b) == c::kBfp8_b);
static_assert(static_cast<uint32_t>(DataFormat::Int8) == c::kInt8);
static_assert(static_cast<uint32_t>(DataFormat::Int32) == c::kInt32);
static_assert(static_cast<uint32_t>(DataFormat::RawUInt32) == c::kRawUInt32);
static_assert(static_cast<uint32_t>(DataFormat::RawUInt32) + 1 == c::kDataFormatCount);

namespace {

constexpr size_t kDim = copmath::kDim;
constexpr size_t kValues = copmath::kValues;
using Tile = copmath::Tile;
using IntTile = copmath::IntTile;

const char* threadName(uint32_t thread) {
  switch (thread) {
  case c::kUnpackThread: return "unpack";
  case c::kMathThread: return "math";
  case c::kPackThread: return "pack";
  default: return "?";
  }
}

bool takesArgument(uint32_t opcode) {
  return opcode == c::kOpSetConfig || opcode == c::kOpUnpack || opcode == c::kOpReduce || opcode == c::kOpSfpu ||
         opcode == c::kOpPack || opcode == c::kOpTopk;
}

// Where a tile's values start (after the header and, for Int8/UInt8 tiles
// that carry one, the 64-byte exponent section; docs/data-formats.md).
size_t valueOffset(DataFormat df) {
  const size_t dataBytes = kValues * untilizedDatumBytes(df);
  const size_t withExponents = formats::kTileHeaderBytes + kValues / formats::kBfpBlock + dataBytes;
  return withExponents <= tileSizeBytes(df) ? formats::kTileHeaderBytes + kValues / formats::kBfpBlock
                                                     : formats::kTileHeaderBytes;
}

// Row-major index of the v-th stored value: faces f0 f1 / f2 f3, each
// row-major; raw formats are one row-major run.
size_t rowMajorIndexOfStored(DataFormat df, size_t v) {
  if (isRawFormat(df)) return v;
  const size_t face = v / 256, inFace = v % 256;
  return ((face / 2) * 16 + inFace / 16) * kDim + (face % 2) * 16 + inFace % 16;
}

// The tile shape of an UNPACK or PACK ([14:12]); nullopt for an unknown code.
std::optional<formats::TileShape> tileShapeOf(uint32_t fields) {
  switch ((fields >> c::kTileShapeShift) & c::kTileShapeMask) {
  case c::kTile32x32: return formats::TileShape{32, 32};
  case c::kTile16x32: return formats::TileShape{16, 32};
  case c::kTile8x32: return formats::TileShape{8, 32};
  case c::kTile4x32: return formats::TileShape{4, 32};
  case c::kTile2x32: return formats::TileShape{2, 32};
  case c::kTile1x32: return formats::TileShape{1, 32};
  case c::kTile32x16: return formats::TileShape{32, 16};
  default: return std::nullopt;
  }
}

uint32_t ceilDiv(uint64_t a, uint32_t b) { return static_cast<uint32_t>((a + b - 1) / (b ? b : 1)); }

void transpose(Tile& t) {
  for (size_t r = 0; r < kDim; ++r)
    for (size_t col = r + 1; col < kDim; ++col) std::swap(t[r * kDim + col], t[col * kDim + r]);
}

void broadcast(Tile& t, uint32_t mode) {
  switch (mode) {
  case c::kBcastRow:
    for (size_t r = 1; r < kDim; ++r) std::copy_n(&t[0], kDim, &t[r * kDim]);
    break;
  case c::kBcastCol:
    for (size_t r = 0; r < kDim; ++r) std::fill_n(&t[r * kDim], kDim, t[r * kDim]);
    break;
  case c::kBcastScalar: t.fill(t[0]); break;
  default: break;
  }
}

IntTile toIntTile(const Tile& t) {
  IntTile out;
  for (size_t i = 0; i < kValues; ++i) out[i] = copmath::toInt32(t[i]);
  return out;
}

} // namespace

// ---------------------------------------------------------------------------
struct Coprocessor::Outcome {
  CopResult::Kind kind = CopResult::Kind::Accepted;
  uint32_t fault = c::kCopOk;
  uint32_t cycles = 0;
  CopUnit unit = CopUnit::None;
  std::string wait;

  static Outcome done(CopUnit unit, uint32_t cycles) { return {CopResult::Kind::Accepted, c::kCopOk, cycles, unit, {}}; }
  static Outcome fail(uint32_t code) { return {CopResult::Kind::Fault, code, 0, CopUnit::None, {}}; }
  static Outcome stall(std::string why) { return {CopResult::Kind::Stall, c::kCopOk, 0, CopUnit::None, std::move(why)}; }
};

const char* copUnitName(CopUnit unit) {
  switch (unit) {
  case CopUnit::None: return "none";
  case CopUnit::Config: return "config";
  case CopUnit::Unpack: return "unpack";
  case CopUnit::Math: return "math";
  case CopUnit::Pack: return "pack";
  }
  return "none";
}

const char* copFaultName(uint32_t fault) {
  switch (fault) {
  case c::kCopOk: return "ok";
  case c::kCopIllegalInstruction: return "illegal-instruction";
  case c::kCopBadAddress: return "bad-address";
  case c::kCopBadDestIndex: return "bad-dest-index";
  case c::kCopBadFormat: return "bad-format";
  default: return "unknown";
  }
}

Coprocessor::Coprocessor(std::span<uint8_t> l1, const CopCycleModel& model, uint32_t destTiles16)
    : l1_(l1), model_(model), destTiles16_(std::max<uint32_t>(2, destTiles16 & ~1u)),
      destF_(size_t{std::min(destTiles16_, c::kDestTiles16)}),
      destI_(size_t{std::min(destTiles16_, c::kDestTiles16) / 2} * kValues, 0),
      scratch_(tileSizeBytes(DataFormat::Float32), 0) {
  reset();
}

void Coprocessor::reset() {
  config_.fill(0);
  srcA_ = SrcReg{};
  srcB_ = SrcReg{};
  for (Tile& t : destF_) t.fill(0.0f);
  std::fill(destI_.begin(), destI_.end(), 0);
  for (ThreadState& t : threads_) t = ThreadState{};
  for (auto& q : fifo_) q.clear();
  fifoUsed_ = {};
  lastStart_ = {};
  doneAt_ = {};
  unitFree_ = {};
}

uint32_t Coprocessor::status(uint32_t thread) const {
  return thread < c::kThreadCount ? threads_[thread].status : c::kCopOk;
}

std::string Coprocessor::describeWait(uint32_t thread) const {
  return thread < c::kThreadCount ? threads_[thread].wait : std::string();
}

bool Coprocessor::stalled(uint32_t thread) const { return thread < c::kThreadCount && !threads_[thread].wait.empty(); }

bool Coprocessor::awaitingArgument(uint32_t thread) const {
  return thread < c::kThreadCount && threads_[thread].pending;
}

bool Coprocessor::destIs32() const {
  return config_[c::kCfgDestFormat] == c::kFloat32 || config_[c::kCfgDestFormat] == c::kInt32;
}
bool Coprocessor::destIsInt() const { return config_[c::kCfgDestFormat] == c::kInt32; }
uint32_t Coprocessor::destCapacity() const { return destIs32() ? destTiles16_ / 2 : destTiles16_; }

// A dest larger than 16 tiles (wormhole A0) grows to the highest index used,
// so a cluster of such chips does not hold 64 tiles per core it never touches.
void Coprocessor::reserveDest(uint32_t tiles) {
  if (destF_.size() < tiles) destF_.resize(tiles, Tile{});
  const size_t values = size_t{tiles} * kValues;
  if (destI_.size() < values) destI_.resize(values, 0);
}

float Coprocessor::destValue(uint32_t tile, size_t index) const {
  if (tile >= destCapacity() || index >= kValues) return 0.0f;
  const size_t i = size_t{tile} * kValues + index;
  if (destIsInt()) return i < destI_.size() ? static_cast<float>(destI_[i]) : 0.0f;
  return tile < destF_.size() ? destF_[tile][index] : 0.0f;
}

bool Coprocessor::srcValid(bool srcB, int bank) const {
  const SrcReg& s = srcB ? srcB_ : srcA_;
  return bank >= 0 && bank < 2 && s.valid[static_cast<size_t>(bank)];
}

void Coprocessor::readDest(uint32_t tile, Tile& out) const {
  if (destIsInt()) {
    const int32_t* p = &destI_[tile * kValues];
    for (size_t i = 0; i < kValues; ++i) out[i] = static_cast<float>(p[i]);
  } else {
    out = destF_[tile];
  }
}

void Coprocessor::writeDestFloat(uint32_t tile, Tile& values) {
  formats::quantize(static_cast<DataFormat>(config_[c::kCfgDestFormat]), std::span<float>(values));
  destF_[tile] = values;
}

bool Coprocessor::dataRangeOk(uint64_t address, uint64_t bytes) const {
  return address >= c::kDataBufferBase && address + bytes <= l1_.size();
}

// ---------------------------------------------------------------------------
CopResult Coprocessor::push(uint32_t thread, uint32_t word, uint64_t now) {
  if (thread >= c::kThreadCount) throw std::invalid_argument("Coprocessor::push: no thread " + std::to_string(thread));
  ThreadState& ts = threads_[thread];
  const bool twoWords = ts.pending;
  depAt_ = 0;
  readyOut_ = nullptr;
  freeOut_ = {};
  uint32_t first = word, arg = 0;
  if (ts.pending) {
    first = ts.first;
    arg = word;
  } else if (takesArgument(word >> c::kOpcodeShift)) {
    ts.pending = true;
    ts.first = word;
    ts.wait.clear();
    ++progress_;
    return CopResult{CopResult::Kind::Accepted, c::kCopOk, 0, CopUnit::None, 0};
  }

  Outcome o = execute(thread, first, arg);
  if (o.kind == CopResult::Kind::Stall) {
    ts.wait = std::move(o.wait);
    ++counters_.stalls[thread];
    return CopResult{CopResult::Kind::Stall, c::kCopOk, 0, CopUnit::None, 0};
  }
  ts.pending = false;
  ts.wait.clear();
  ts.status = o.fault;
  if (o.kind == CopResult::Kind::Fault) {
    ++counters_.faults[thread];
    return CopResult{CopResult::Kind::Fault, o.fault, 0, CopUnit::None, 0};
  }
  ++progress_;
  CopUnitCounters* unit = nullptr;
  switch (o.unit) {
  case CopUnit::Config: unit = &counters_.config; break;
  case CopUnit::Unpack: unit = &counters_.unpack; break;
  case CopUnit::Math: unit = &counters_.math; break;
  case CopUnit::Pack: unit = &counters_.pack; break;
  case CopUnit::None: break;
  }
  if (unit) {
    ++unit->instructions;
    unit->cycles += o.cycles;
  }
  const bool fifo = model_.fifoWords[thread] != 0;
  const uint32_t hart = fifo ? schedule(thread, twoWords ? 2 : 1, o.unit, o.cycles, now) : o.cycles;
  return CopResult{CopResult::Kind::Accepted, c::kCopOk, o.cycles, o.unit, hart, fifo ? lastStart_[thread] : now};
}

// The FIFO model: the instruction leaves its thread's FIFO when it starts;
// it starts once pushed, after the thread's previous instruction started
// (in-order issue), when its unit is free and its source banks are ready.
uint32_t Coprocessor::schedule(uint32_t thread, uint32_t words, CopUnit unit, uint32_t cycles, uint64_t now) {
  std::vector<Queued>& q = fifo_[thread];
  uint32_t& used = fifoUsed_[thread];
  size_t gone = 0;
  while (gone < q.size() && q[gone].start <= now) used -= q[gone++].words;
  uint64_t pushAt = now;
  const uint32_t depth = std::max(model_.fifoWords[thread], words);
  while (gone < q.size() && used + words > depth) {  // full: the hart waits for the oldest to start
    pushAt = std::max(pushAt, q[gone].start);
    used -= q[gone++].words;
  }
  q.erase(q.begin(), q.begin() + static_cast<ptrdiff_t>(gone));
  uint64_t& unitFree = unitFree_[static_cast<size_t>(unit)];
  const uint64_t start = std::max({pushAt, lastStart_[thread], unitFree, depAt_});
  const uint64_t end = start + cycles;
  unitFree = end;
  lastStart_[thread] = start;
  doneAt_[thread] = std::max(doneAt_[thread], end);
  if (readyOut_) *readyOut_ = end;
  for (uint64_t* f : freeOut_)
    if (f) *f = end;
  q.push_back({start, words});
  used += words;
  return static_cast<uint32_t>(std::min<uint64_t>(pushAt - now, std::numeric_limits<uint32_t>::max()));
}

Coprocessor::Outcome Coprocessor::execute(uint32_t thread, uint32_t word, uint32_t arg) {
  const uint32_t opcode = word >> c::kOpcodeShift;
  const uint32_t fields = word & 0xFFFFFFu;
  switch (opcode) {
  case c::kOpSetConfig: return execSetConfig(fields, arg);
  case c::kOpUnpack: {
    Outcome o = execUnpack(fields, arg);
    if (o.kind == CopResult::Kind::Stall) o.wait = std::string(threadName(thread)) + " " + o.wait;
    return o;
  }
  case c::kOpDatacopy: case c::kOpEltwise: case c::kOpMatmul: case c::kOpReduce: case c::kOpSfpu:
  case c::kOpZeroDest: case c::kOpRowCopy: return execMath(thread, opcode, fields, arg);
  case c::kOpTopk: return execTopk(fields, arg);
  case c::kOpPack: return execPack(fields, arg);
  default: return Outcome::fail(c::kCopIllegalInstruction);
  }
}

// ---------------------------------------------------------------- SETCONFIG
Coprocessor::Outcome Coprocessor::execSetConfig(uint32_t fields, uint32_t value) {
  if (fields & ~0xFFu) return Outcome::fail(c::kCopIllegalInstruction);
  const uint32_t reg = fields & 0xFFu;
  switch (reg) {
  case c::kCfgMathFidelity:
    if (value > c::kHiFi4) return Outcome::fail(c::kCopIllegalInstruction);
    break;
  case c::kCfgDestFormat:
    if (value != c::kFloat32 && value != c::kFloat16 && value != c::kFloat16_b && value != c::kInt32)
      return Outcome::fail(c::kCopBadFormat);
    break;
  case c::kCfgReluMode:
    if (value > 2) return Outcome::fail(c::kCopIllegalInstruction);
    break;
  case c::kCfgReluThreshold: case c::kCfgUntilizeStride: break;
  default: return Outcome::fail(c::kCopIllegalInstruction);
  }
  config_[reg] = value;
  return Outcome::done(CopUnit::Config, model_.setConfig);
}

// ---------------------------------------------------------------- UNPACK
Coprocessor::Outcome Coprocessor::execUnpack(uint32_t fields, uint32_t address) {
  if (fields & ~(0x3FFu | c::kTileShapeMask << c::kTileShapeShift)) return Outcome::fail(c::kCopIllegalInstruction);
  const uint32_t code = (fields >> c::kFormatShift) & c::kFormatMask;
  if (code >= c::kDataFormatCount) return Outcome::fail(c::kCopBadFormat);
  const auto df = static_cast<DataFormat>(code);
  const std::optional<formats::TileShape> shape = tileShapeOf(fields);
  if (!shape) return Outcome::fail(c::kCopIllegalInstruction);
  const bool zeros = fields & c::kUnpackZero;
  const uint32_t bytes = shape->full() ? tileSizeBytes(df) : static_cast<uint32_t>(formats::tileBytes(df, *shape));
  if (!zeros && !dataRangeOk(address, bytes)) return Outcome::fail(c::kCopBadAddress);

  const bool toB = fields & c::kUnpackToSrcB;
  SrcReg& src = toB ? srcB_ : srcA_;
  if (src.valid[src.writeBank])
    return Outcome::stall(std::string("waits for a free ") + (toB ? "srcB" : "srcA") + " bank (both banks valid)");

  depAt_ = src.freeAt[src.writeBank];
  readyOut_ = &src.readyAt[src.writeBank];
  Tile& tile = src.bank[src.writeBank];
  if (zeros) {
    tile.fill(0.0f);
  } else {
    formats::unpackTile(df, *shape, l1_.subspan(address, bytes), std::span<float, kValues>(tile));
    if (fields & c::kUnpackTranspose) transpose(tile);
    broadcast(tile, (fields >> c::kUnpackBcastShift) & 3u);
  }
  src.valid[src.writeBank] = true;
  src.reducedValid[src.writeBank] = false;
  src.writeBank ^= 1u;
  ++counters_.tilesUnpacked;
  return Outcome::done(CopUnit::Unpack,
                       zeros ? model_.unpackZeros : model_.unpackOverhead + ceilDiv(bytes, model_.l1BytesPerCycle));
}

// ---------------------------------------------------------------- math
Coprocessor::Outcome Coprocessor::execMath(uint32_t thread, uint32_t opcode, uint32_t fields, uint32_t arg) {
  constexpr uint32_t kCommon = 0x7Fu | c::kFieldDestIndexHiMask;  // dest index, accumulate, keep srcA, keep srcB
  uint32_t allowed = kCommon;
  bool readsA = false, readsB = false;
  const uint32_t eltOp = (fields >> c::kEltwiseOpShift) & 3u;
  const uint32_t dim = (fields >> c::kReduceDimShift) & 3u;
  const uint32_t rtype = (fields >> c::kReduceTypeShift) & 3u;
  const uint32_t func = (fields >> c::kSfpuFuncShift) & 0xFFu;
  switch (opcode) {
  case c::kOpDatacopy: readsA = true; break;
  case c::kOpEltwise:
    allowed |= 0xFFFu;
    readsA = !(fields & c::kEltwiseAFromDest);
    readsB = !(fields & c::kEltwiseBFromDest);
    break;
  case c::kOpMatmul: readsA = readsB = true; break;
  case c::kOpReduce:
    allowed |= 0xFFFu;
    if (dim > c::kReduceScalar || rtype > c::kReduceMax) return Outcome::fail(c::kCopIllegalInstruction);
    readsA = true;
    break;
  case c::kOpSfpu:
    allowed |= 0xFF00u | c::kFieldSfpuApproximate;
    if (func >= c::kSfpuFuncCount) return Outcome::fail(c::kCopIllegalInstruction);
    if (func == c::kSfpuPower && arg > 0xFFFFu) return Outcome::fail(c::kCopIllegalInstruction);
    break;
  case c::kOpZeroDest: break;
  case c::kOpRowCopy:
    allowed = 0x1F1F2Fu | c::kFieldDestIndexHiMask; // dest index, keep srcA, source row, dest row
    readsA = true;
    break;
  default: return Outcome::fail(c::kCopIllegalInstruction);
  }
  if (fields & ~allowed) return Outcome::fail(c::kCopIllegalInstruction);
  const uint32_t d = c::destIndexOf(fields);
  if (d >= destCapacity()) return Outcome::fail(c::kCopBadDestIndex);
  reserveDest(d + 1);

  const bool aMissing = readsA && !srcA_.valid[srcA_.readBank];
  const bool bMissing = readsB && !srcB_.valid[srcB_.readBank];
  if (aMissing || bMissing)
    return Outcome::stall(std::string(threadName(thread)) + " waits for " +
                          (aMissing && bMissing ? "srcA and srcB" : aMissing ? "srcA" : "srcB") + " valid");

  // --- execute (no stall or fault possible from here on) ---
  if (readsA) depAt_ = std::max(depAt_, srcA_.readyAt[srcA_.readBank]);
  if (readsB) depAt_ = std::max(depAt_, srcB_.readyAt[srcB_.readBank]);
  if (readsA && !(fields & c::kFieldKeepSrcA)) freeOut_[0] = &srcA_.freeAt[srcA_.readBank];
  if (readsB && !(fields & c::kFieldKeepSrcB)) freeOut_[1] = &srcB_.freeAt[srcB_.readBank];
  const Tile& a = srcA_.bank[srcA_.readBank];
  const Tile& b = srcB_.bank[srcB_.readBank];
  const bool accumulate = fields & c::kFieldAccumulate;
  const uint32_t fidelity = config_[c::kCfgMathFidelity];
  const float scale = std::bit_cast<float>(arg);
  uint32_t cycles = 0;

  if (!destIsInt() && opcode == c::kOpMatmul) {
    // In place in dest: no copies of the tile around the product (the
    // matmul is most of the math instructions a netlist runs).
    Tile& out = destF_[d];
    if (!accumulate) out.fill(0.0f);
    const copmath::ReducedReads reads = copmath::matmulReads(fidelity);
    auto reduced = [](SrcReg& s, bool isB) -> const Tile* {
      const uint8_t bank = s.readBank;
      if (!s.reducedValid[bank]) copmath::reduceTile(s.bank[bank], isB, s.reduced[bank]);
      s.reducedValid[bank] = true;
      return &s.reduced[bank];
    };
    copmath::matmulAccumulate(fidelity, b, a, reads.srcBHigh ? reduced(srcB_, true) : nullptr,
                              reads.srcAHigh ? reduced(srcA_, false) : nullptr, out);
    formats::quantize(static_cast<DataFormat>(config_[c::kCfgDestFormat]), std::span<float>(out));
    cycles = model_.matmulPhase * copmath::fidelityPhases(fidelity);
    ++counters_.matmulTiles;
  } else if (!destIsInt()) {
    const Tile& cur = destF_[d];  // read in place: `out` is written back only at the end
    Tile out{};
    switch (opcode) {
    case c::kOpDatacopy:
      for (size_t i = 0; i < kValues; ++i) out[i] = accumulate ? cur[i] + a[i] : a[i];
      cycles = model_.fpuTile;
      break;
    case c::kOpEltwise: {
      const Tile& lhs = readsA ? a : cur;
      const Tile& rhs = readsB ? b : cur;
      for (size_t i = 0; i < kValues; ++i) {
        float r = 0.0f;
        switch (eltOp) {
        case c::kEltAdd: r = lhs[i] + rhs[i]; break;
        case c::kEltSub: r = lhs[i] - rhs[i]; break;
        case c::kEltMul: r = copmath::eltwiseMultiply(fidelity, lhs[i], rhs[i]); break;
        default: r = lhs[i] > rhs[i] ? lhs[i] : rhs[i]; break;
        }
        out[i] = accumulate ? cur[i] + r : r;
      }
      cycles = model_.fpuTile * (eltOp == c::kEltMul ? copmath::fidelityPhases(fidelity) : 1u);
      break;
    }
    case c::kOpMatmul: break;  // above
    case c::kOpReduce: {
      if (accumulate) out = cur;
      const bool isMax = rtype == c::kReduceMax;
      // Sum: a running sum seeded with dest (accumulate) or 0, adding
      // x * scale in the reference's order. Max: max(x) * scale, then max
      // with dest when accumulating.
      auto reduceLine = [&](float seed, size_t start, size_t stride, size_t count) {
        if (!isMax) {
          float acc = seed;
          for (size_t n = 0; n < count; ++n) acc += a[start + n * stride] * scale;
          return acc;
        }
        float m = -std::numeric_limits<float>::infinity();
        for (size_t n = 0; n < count; ++n) {
          const float v = a[start + n * stride];
          m = v > m ? v : m;
        }
        const float r = m * scale;
        return accumulate ? (r > seed ? r : seed) : r;
      };
      auto seedOf = [&](size_t index) { return accumulate ? cur[index] : 0.0f; };
      if (dim == c::kReduceRows) {
        for (size_t col = 0; col < kDim; ++col) out[col] = reduceLine(seedOf(col), col, kDim, kDim);
      } else if (dim == c::kReduceCols) {
        for (size_t r = 0; r < kDim; ++r) out[r * kDim] = reduceLine(seedOf(r * kDim), r * kDim, 1, kDim);
      } else {
        out[0] = reduceLine(seedOf(0), 0, 1, kValues);  // rows outer, columns inner
      }
      cycles = dim == c::kReduceScalar ? model_.reduceScalar : model_.reduceRowsOrCols;
      break;
    }
    case c::kOpSfpu:
      for (size_t i = 0; i < kValues; ++i) out[i] = copmath::sfpu(func, arg, cur[i]);
      break;
    case c::kOpZeroDest: cycles = model_.zeroDest; break;
    case c::kOpRowCopy: {
      out = cur;
      const size_t from = (fields >> c::kRowCopySrcShift) & 0x1Fu, to = (fields >> c::kRowCopyDstShift) & 0x1Fu;
      std::copy_n(&a[from * kDim], kDim, &out[to * kDim]);
      cycles = model_.rowCopy;
      break;
    }
    }
    writeDestFloat(d, out);
  } else {
    // Int32 dest: integer arithmetic; values saturate to the Int32 range.
    IntTile cur;
    for (size_t i = 0; i < kValues; ++i) cur[i] = destI_[d * kValues + i];
    IntTile out{};
    switch (opcode) {
    case c::kOpDatacopy: {
      const IntTile ia = toIntTile(a);
      for (size_t i = 0; i < kValues; ++i) out[i] = accumulate ? cur[i] + ia[i] : ia[i];
      cycles = model_.fpuTile;
      break;
    }
    case c::kOpEltwise: {
      const IntTile lhs = readsA ? toIntTile(a) : cur;
      const IntTile rhs = readsB ? toIntTile(b) : cur;
      for (size_t i = 0; i < kValues; ++i) {
        int64_t r = 0;
        switch (eltOp) {
        case c::kEltAdd: r = lhs[i] + rhs[i]; break;
        case c::kEltSub: r = lhs[i] - rhs[i]; break;
        case c::kEltMul:
          // The reference multiplies in float with the fidelity even for integers.
          r = copmath::toInt32(copmath::eltwiseMultiply(fidelity, static_cast<float>(lhs[i]), static_cast<float>(rhs[i])));
          break;
        default: r = std::max(lhs[i], rhs[i]); break;
        }
        out[i] = accumulate ? cur[i] + r : r;
      }
      cycles = model_.fpuTile * (eltOp == c::kEltMul ? copmath::fidelityPhases(fidelity) : 1u);
      break;
    }
    case c::kOpMatmul:
      if (accumulate) out = cur;
      copmath::matmulAccumulateInt(toIntTile(b), toIntTile(a), out);
      cycles = model_.matmulPhase * copmath::fidelityPhases(fidelity);
      ++counters_.matmulTiles;
      break;
    case c::kOpReduce: {
      if (accumulate) out = cur;
      const IntTile ia = toIntTile(a);
      const bool isMax = rtype == c::kReduceMax;
      auto reduceLine = [&](int64_t seed, size_t start, size_t stride, size_t count) {
        int64_t r = isMax ? ia[start] : 0;
        for (size_t n = 0; n < count; ++n) {
          const int64_t v = ia[start + n * stride];
          r = isMax ? std::max(r, v) : r + v;
        }
        if (scale != 1.0f) r = copmath::toInt32(static_cast<double>(static_cast<float>(r) * scale));
        if (!accumulate) return r;
        return isMax ? std::max(seed, r) : seed + r;
      };
      if (dim == c::kReduceRows) {
        for (size_t col = 0; col < kDim; ++col) out[col] = reduceLine(cur[col], col, kDim, kDim);
      } else if (dim == c::kReduceCols) {
        for (size_t r = 0; r < kDim; ++r) out[r * kDim] = reduceLine(cur[r * kDim], r * kDim, 1, kDim);
      } else {
        out[0] = reduceLine(cur[0], 0, 1, kValues);
      }
      cycles = dim == c::kReduceScalar ? model_.reduceScalar : model_.reduceRowsOrCols;
      break;
    }
    case c::kOpSfpu:
      for (size_t i = 0; i < kValues; ++i)
        out[i] = copmath::toInt32(copmath::sfpu(func, arg, static_cast<float>(cur[i])));
      break;
    case c::kOpZeroDest: cycles = model_.zeroDest; break;
    case c::kOpRowCopy: {
      out = cur;
      const IntTile ia = toIntTile(a);
      const size_t from = (fields >> c::kRowCopySrcShift) & 0x1Fu, to = (fields >> c::kRowCopyDstShift) & 0x1Fu;
      std::copy_n(&ia[from * kDim], kDim, &out[to * kDim]);
      cycles = model_.rowCopy;
      break;
    }
    }
    for (size_t i = 0; i < kValues; ++i) destI_[d * kValues + i] = static_cast<int32_t>(copmath::saturateInt32(out[i]));
  }

  if (opcode == c::kOpSfpu) {
    uint32_t ops = func == c::kSfpuPower ? model_.sfpuPowerBase + arg : model_.sfpuOpsPerPass[func];
    if ((fields & c::kFieldSfpuApproximate) && model_.sfpuApproxOpsPerPass[func] != 0) ops = model_.sfpuApproxOpsPerPass[func];
    cycles = model_.sfpuPasses * ops;
    ++counters_.sfpuTiles;
  }

  // Release the sources read, unless kept.
  if (readsA && !(fields & c::kFieldKeepSrcA)) {
    srcA_.valid[srcA_.readBank] = false;
    srcA_.readBank ^= 1u;
  }
  if (readsB && !(fields & c::kFieldKeepSrcB)) {
    srcB_.valid[srcB_.readBank] = false;
    srcB_.readBank ^= 1u;
  }
  return Outcome::done(CopUnit::Math, cycles);
}

// ---------------------------------------------------------------- TOPK
// Values in dest[d], dest[d+1], indices in dest[d+2], dest[d+3] (the second
// of each only with two tiles); a float dest only (an index is a value).
Coprocessor::Outcome Coprocessor::execTopk(uint32_t fields, uint32_t arg) {
  if (fields & ~(0x70Fu | c::kFieldDestIndexHiMask)) return Outcome::fail(c::kCopIllegalInstruction);
  if (destIsInt()) return Outcome::fail(c::kCopBadFormat);
  const uint32_t d = c::destIndexOf(fields);
  if (d + 3 >= destCapacity()) return Outcome::fail(c::kCopBadDestIndex);
  reserveDest(d + 4);
  const bool two = fields & c::kTopkTwoTiles;
  std::array<Tile, 4> w;
  for (uint32_t t = 0; t < 4; ++t) readDest(d + t, w[t]);
  Tile* const values[2] = {&w[0], &w[1]};
  Tile* const indices[2] = {&w[2], &w[3]};
  const int stages = copmath::topkStep((fields >> c::kTopkStepShift) & 3u, two, arg, values, indices);
  if (stages < 0) return Outcome::fail(c::kCopIllegalInstruction);
  // Values only move: rewriting them in the dest format changes nothing.
  for (uint32_t t = 0; t < 4; ++t)
    if (two || t % 2 == 0) writeDestFloat(d + t, w[t]);
  return Outcome::done(CopUnit::Math, model_.topkStage * static_cast<uint32_t>(stages) * (two ? 2u : 1u) +
                                          model_.topkOverhead);
}

// ---------------------------------------------------------------- PACK
Coprocessor::Outcome Coprocessor::execPack(uint32_t fields, uint32_t address) {
  if (fields & ~(0x7FFu | c::kTileShapeMask << c::kTileShapeShift | c::kFieldDestIndexHiMask))
    return Outcome::fail(c::kCopIllegalInstruction);
  const uint32_t code = (fields >> c::kFormatShift) & c::kFormatMask;
  if (code >= c::kDataFormatCount) return Outcome::fail(c::kCopBadFormat);
  const auto df = static_cast<DataFormat>(code);
  const std::optional<formats::TileShape> shape = tileShapeOf(fields);
  if (!shape) return Outcome::fail(c::kCopIllegalInstruction);
  const bool untilize = fields & c::kPackUntilize;
  const bool l1Accumulate = fields & c::kPackL1Accumulate;
  if (untilize && isBfpFormat(df)) return Outcome::fail(c::kCopBadFormat);
  const uint32_t d = c::destIndexOf(fields);
  if (d >= destCapacity()) return Outcome::fail(c::kCopBadDestIndex);
  reserveDest(d + 1);

  const uint32_t tileBytes = shape->full() ? tileSizeBytes(df) : static_cast<uint32_t>(formats::tileBytes(df, *shape));
  // Untilize writes the tile's rows (shape->r of shape->c values).
  const uint32_t rowBytes = shape->c * untilizedDatumBytes(df);
  const uint32_t stride = config_[c::kCfgUntilizeStride];
  if (untilize) {
    if (stride < rowBytes) return Outcome::fail(c::kCopIllegalInstruction);  // rows would overlap
    if (!dataRangeOk(address, uint64_t{stride} * (shape->r - 1) + rowBytes)) return Outcome::fail(c::kCopBadAddress);
  } else if (!dataRangeOk(address, tileBytes)) {
    return Outcome::fail(c::kCopBadAddress);
  }

  // Packed straight from dest unless the values change first (a 4 KB copy
  // per PACK saved: every tile an op writes is packed).
  const bool fromDest = !destIsInt() && !l1Accumulate && config_[c::kCfgReluMode] == 0;
  Tile values;
  if (!fromDest) readDest(d, values);
  const Tile& packed = fromDest ? destF_[d] : values;
  const size_t offset = valueOffset(df);
  const uint32_t width = untilizedDatumBytes(df);

  if (l1Accumulate) {
    Tile existing;
    if (untilize) {
      // Gather the rows into tile layout, then decode with lib/formats.
      // The scratch holds a 32x32 tile: outside the shape it stays zero.
      std::span<uint8_t> full(scratch_.data(), tileSizeBytes(df));
      std::fill(full.begin(), full.end(), uint8_t{0});
      for (size_t v = 0; v < kValues; ++v) {
        const size_t rm = rowMajorIndexOfStored(df, v);
        if (rm / kDim >= shape->r || rm % kDim >= shape->c) continue;
        std::memcpy(&full[offset + v * width], &l1_[address + (rm / kDim) * stride + (rm % kDim) * width], width);
      }
      formats::unpackTile(df, full, std::span<float, kValues>(existing));
    } else {
      formats::unpackTile(df, *shape, l1_.subspan(address, tileBytes), std::span<float, kValues>(existing));
    }
    for (size_t i = 0; i < kValues; ++i) values[i] = existing[i] + values[i];
  }

  const uint32_t reluMode = config_[c::kCfgReluMode];
  if (reluMode != 0) {
    const float threshold = std::bit_cast<float>(config_[c::kCfgReluThreshold]);
    for (float& v : values) v = copmath::relu(reluMode, threshold, v);
  }

  // An Int32 dest packed as Int32 keeps every bit: lib/formats packs floats,
  // which hold integers exactly only up to 2^24, so the value words are
  // rewritten from the dest integers (relu applied to them the same way).
  const bool exactInt = destIsInt() && df == DataFormat::Int32 && !l1Accumulate && shape->full();
  auto exactWords = [&](std::span<uint8_t> tile) {
    const int32_t* dest = &destI_[d * kValues];
    const float threshold = std::bit_cast<float>(config_[c::kCfgReluThreshold]);
    for (size_t v = 0; v < kValues; ++v) {
      int64_t x = dest[rowMajorIndexOfStored(df, v)];
      if (reluMode == 1 && !(static_cast<double>(x) >= threshold)) x = 0;
      if (reluMode == 2) x = static_cast<double>(x) >= threshold ? copmath::toInt32(threshold) : std::max<int64_t>(x, 0);
      const uint32_t word = x < 0 ? 0x80000000u | static_cast<uint32_t>(-x) : static_cast<uint32_t>(x);
      for (size_t b = 0; b < 4; ++b) tile[offset + v * 4 + b] = static_cast<uint8_t>(word >> (8 * b));
    }
  };

  uint64_t bytesMoved = 0;
  uint32_t cycles = model_.packOverhead;
  if (untilize) {
    // Packed as a 32x32 tile, then only the shape's rows and columns copied out.
    std::span<uint8_t> full(scratch_.data(), tileSizeBytes(df));
    formats::packTile(df, std::span<const float, kValues>(packed), full);
    if (exactInt) exactWords(full);
    for (size_t v = 0; v < kValues; ++v) {
      const size_t rm = rowMajorIndexOfStored(df, v);
      if (rm / kDim >= shape->r || rm % kDim >= shape->c) continue;
      std::memcpy(&l1_[address + (rm / kDim) * stride + (rm % kDim) * width], &full[offset + v * width], width);
    }
    bytesMoved = uint64_t{rowBytes} * shape->r;
    cycles += shape->r * model_.untilizeRowOverhead;
  } else {
    formats::packTile(df, *shape, std::span<const float, kValues>(packed), l1_.subspan(address, tileBytes));
    if (exactInt) exactWords(l1_.subspan(address, tileBytes));
    bytesMoved = tileBytes;
  }
  if (l1Accumulate) bytesMoved *= 2;  // read back, then written
  cycles += ceilDiv(bytesMoved, model_.l1BytesPerCycle);
  ++counters_.tilesPacked;
  return Outcome::done(CopUnit::Pack, cycles);
}

} // namespace tessera::sim
