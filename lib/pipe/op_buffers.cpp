// net2pipe's epoch builder: the buffers of every op core (inputs, output,
// intermediates, gradient accumulation), of every queue cell, and the
// padding buffers of constant tiles (epoch_builder.hpp).
#include "pipe/epoch_builder.hpp"

#include "netlist/blocking.hpp"
#include "netlist/text.hpp"

#include <algorithm>
#include <cstdio>

namespace tessera::pipe::build {

using namespace netlist;

void EpochBuilder::createOpBuffers(const Op& op, const hlk::KernelConfig& cfg) {
  opConfig_[&op] = &cfg;
  const Dim2 grid = op.gridSize.value;
  const int64_t cores = grid.r * grid.c;
  auto& ins = opInputs_[&op];
  ins.assign(op.inputs.size(), std::vector<uint32_t>(static_cast<size_t>(cores), 0));
  auto& outs = opOutputs_[&op];
  outs.assign(static_cast<size_t>(cores), 0);
  const Queue* gradientQueue = nullptr;
  if (isGradient(op)) {
    gradientQueue = gradientTarget(op);
    if (!gradientQueue) return;
  }
  const int64_t outTiles = op.t.value * op.mblock.value.r * op.mblock.value.c * op.ublock.value.r * op.ublock.value.c;
  const int64_t mblockTiles = op.mblock.value.r * op.mblock.value.c * op.ublock.value.r * op.ublock.value.c;
  const int64_t ublockTiles = op.ublock.value.r * op.ublock.value.c;
  const bool untilize = op.untilizeOutput.value;
  for (int64_t r = 0; r < grid.r; ++r)
    for (int64_t c = 0; c < grid.c; ++c) {
      const size_t core = static_cast<size_t>(r * grid.c + c);
      const CoreCoord pc = physical(op, r, c);
      for (const hlk::OperandInfo& o : cfg.operands) {
        Buf b;
        b.op = &op;
        b.category = 0;
        b.orderKey = bufs_.size();
        Buffer& d = b.doc;
        d.uniqid = sh_.newId();
        d.mdOpName = op.name;
        d.id = static_cast<uint32_t>(o.operand);
        d.chipId = chipOfOp(op);
        d.core = pc;
        d.dataFormat = std::string(dataFormatName(o.df));
        switch (o.role) {
        case hlk::OperandRole::Input: {
          const size_t i = static_cast<size_t>(o.index);
          d.bufferType = BufferType::Unpacker;
          d.comment = "Op " + op.name + ": " + coreText(pc) + ", kernel input buf " + std::to_string(i) + ", from " +
                      op.inputs[i].name;
          const int64_t tiles = o.layout ? o.layout->t * o.layout->blockTiles() : 0;
          d.tilesPerInput = static_cast<uint32_t>(tiles);
          d.epochTiles = static_cast<uint32_t>(tiles * inputCount_);
          int64_t size = 2 * o.minTiles;
          if (i < op.inputBufMinSizeTiles.size()) size = std::max(size, op.inputBufMinSizeTiles[i]);
          d.sizeTiles = static_cast<uint32_t>(size);
          b.minSize = o.minTiles;
          if (i < op.inputBufMinSizeTiles.size()) b.minSize = std::max(b.minSize, op.inputBufMinSizeTiles[i]);
          b.granule = std::max<int64_t>(1, o.minTiles);
          d.tileSize = tileBytes(o.df, false, o.tile);
          if (o.tile != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(o.df));  // size alone is ambiguous
          d.tileClearGranularity = static_cast<uint32_t>(o.minTiles);
          d.overlayBlobSize = op.overlaySize.present() ? static_cast<uint32_t>(op.overlaySize.value) : 0;
          ins[i][core] = addBuf(std::move(b));
          break;
        }
        case hlk::OperandRole::Output: {
          d.tilesPerInput = static_cast<uint32_t>(outTiles);
          d.epochTiles = static_cast<uint32_t>(outTiles * inputCount_);
          d.ublockRt = static_cast<uint32_t>(op.ublock.value.r);
          d.ublockCt = static_cast<uint32_t>(op.ublock.value.c);
          d.mblockM = static_cast<uint32_t>(op.mblock.value.r);
          d.mblockN = static_cast<uint32_t>(op.mblock.value.c);
          d.mblockK = op.type.value == "matmul" && op.attributes.mK.present() ? static_cast<uint32_t>(op.attributes.mK.value) : 1;
          if (gradientQueue) {
            // Accumulates in L1 for the whole epoch: the ram cell this core
            // owns is loaded at epoch start and written back at its end.
            const size_t qb = sh_.queueFirstBuffer.at(gradientQueue->name) + core;
            const QueueBufferInfo& info = sh_.out.queueBuffers[qb];
            // BUDA's layout: an intermediate operand (24, hlk::KernelConfig::
            // outputOperand) that pipes never touch, so like any intermediate
            // it has no tiles_per_input and its epoch_tiles is its block.
            d.bufferType = BufferType::Other;
            d.bufferTypeText = "gradient_op";
            d.comment = "Op " + op.name + ": " + coreText(pc) + ", kernel intermediate buf, gradient accumulation in " +
                        gradientQueue->name + ": " + cellText(r, c);
            d.tilesPerInput = 0;
            d.epochTiles = static_cast<uint32_t>(outTiles);
            d.sizeTiles = static_cast<uint32_t>(outTiles);
            b.minSize = outTiles;
            d.tileSize = tileBytes(o.df, false, o.tile);
            if (o.tile != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(o.df));  // size alone is ambiguous
            d.scatterGatherNumTiles = static_cast<uint32_t>(outTiles);
            d.dramBufFlag = true;
            d.writeDramBufFlag = true;
            d.dramIoAllowOverwrite = true;
            d.dramIoSkipFlowCtrl = true;
            d.dramRamFlag = gradientQueue->type.value == IoType::Ram;
            d.dramChan = static_cast<uint32_t>(info.channel);
            d.dramAddr = info.address;
            d.qSlots = static_cast<uint32_t>(gradientQueue->entries.value);
            outs[core] = addBuf(std::move(b));
            break;
          }
          d.bufferType = BufferType::Packer;
          d.comment = "Op " + op.name + ": " + coreText(pc) + ", kernel output buf";
          const int64_t bufMb = op.bufSizeMb.present() ? op.bufSizeMb.value : 1;
          // BUDA's convention (its files: every untilized packer): an
          // untilizing packer holds buf_size_mb stripes (a row of ublocks),
          // not mblocks; its kernel publishes one stripe at a time.
          const int64_t unit = untilize ? op.mblock.value.c * ublockTiles : mblockTiles;
          d.sizeTiles = static_cast<uint32_t>(std::max(bufMb * unit, o.minTiles));
          d.tileSize = tileBytes(o.df, untilize, o.tile);
          if (o.tile != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(o.df));
          if (untilize) {
            d.untilizedOutput = true;
            d.untilizedOutputFullRDim = static_cast<uint32_t>(grid.r * op.mblock.value.r * op.ublock.value.r);
            d.untilizedOutputFullCDim = static_cast<uint32_t>(grid.c * op.mblock.value.c * op.ublock.value.c);
            d.untilizedOutputRDim = static_cast<uint32_t>(op.mblock.value.r * op.ublock.value.r);
            d.untilizedOutputCDim = static_cast<uint32_t>(op.mblock.value.c * op.ublock.value.c);
            d.untilizedOutputZDim = static_cast<uint32_t>(op.t.value);
            if (o.tile != Dim2{32, 32}) {  // BUDA's fields; the stream engine places rows by them
              d.extra.push_back({"untilized_output_tile_dim_r", std::to_string(o.tile.r), {}});
              d.extra.push_back({"untilized_output_tile_dim_c", std::to_string(o.tile.c), {}});
            }
          }
          b.packer = true;
          // An untilizing packer publishes stripes (hlk::Layout::untilizeStripeTiles).
          b.ublockTiles = untilize ? o.minTiles : ublockTiles;
          b.minSize = o.minTiles;
          b.granule = b.ublockTiles;
          outs[core] = addBuf(std::move(b));
          break;
        }
        case hlk::OperandRole::Intermediate:
        case hlk::OperandRole::Spill: {
          d.bufferType = BufferType::Intermediate;
          d.comment = "Op " + op.name + ": " + coreText(pc) + ", kernel intermediate buf " + std::to_string(o.operand - 24) +
                      (o.role == hlk::OperandRole::Spill ? " (partial sums)" : "");
          d.sizeTiles = static_cast<uint32_t>(o.minTiles);
          b.minSize = o.minTiles;
          d.scatterGatherNumTiles = static_cast<uint32_t>(o.minTiles);
          // BUDA's pipegen2 sends an intermediate's epoch_tiles to itself:
          // 0 leaves its phases uncalculated (docs/pipegen-yaml.md).
          d.epochTiles = d.scatterGatherNumTiles;
          d.tileSize = tileBytes(o.df, false, o.tile);
          if (o.tile != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(o.df));  // size alone is ambiguous
          d.ublockRt = static_cast<uint32_t>(op.ublock.value.r);
          d.ublockCt = static_cast<uint32_t>(op.ublock.value.c);
          d.mblockM = static_cast<uint32_t>(op.mblock.value.r);
          d.mblockN = static_cast<uint32_t>(op.mblock.value.c);
          d.mblockK = op.type.value == "matmul" && op.attributes.mK.present() ? static_cast<uint32_t>(op.attributes.mK.value) : 1;
          addBuf(std::move(b));
          break;
        }
        }
      }
    }
}

// The ram a gradient op accumulates into: exactly one queue, written by
// it, with the op's grid and blocking (each core owns one cell).
const Queue* EpochBuilder::gradientTarget(const Op& op) {
  std::vector<const Queue*> targets;
  for (const Queue& q : nl_.queues)
    if (q.input.value == op.name) targets.push_back(&q);
  bool readByOp = false;
  for (const Op* other : ops_)
    for (const Operand& in : other->inputs) readByOp |= in.name == op.name;
  if (targets.size() != 1 || readByOp) {
    fail("pipe-unsupported", op.loc,
         "op " + quote(op.name) + ": a gradient op must write exactly one queue and feed no op (it has " +
             std::to_string(targets.size()) + " output queue" + (targets.size() == 1 ? "" : "s") +
             (readByOp ? " and feeds ops" : "") + ")");
    return nullptr;
  }
  const Queue& q = *targets.front();
  if (chipOf(q) != chipOfOp(op)) {
    fail("pipe-unsupported", op.loc,
         "gradient op " + quote(op.name) + " on chip " + std::to_string(chipOfOp(op)) + " accumulates in place into queue " +
             quote(q.name) + " on chip " + std::to_string(chipOf(q)) + ": a gradient op's ram must be on its own chip");
    return nullptr;
  }
  const formats::Blocking ob = netlist::blockingOf(op), qb = netlist::blockingOf(q);
  if (ob.gridR != qb.gridR || ob.gridC != qb.gridC || ob.t != qb.t || ob.mblockR != qb.mblockR || ob.mblockC != qb.mblockC ||
      ob.ublockR != qb.ublockR || ob.ublockC != qb.ublockC || ob.order != qb.order || q.location.value != IoLocation::Dram) {
    fail("pipe-gradient-layout", op.loc,
         "gradient op " + quote(op.name) + " accumulates in place, so queue " + quote(q.name) +
             " must be in DRAM with the op's grid, t, mblock, ublock and ublock_order",
         {"queue " + quote(q.name) + ": grid [" + std::to_string(qb.gridR) + ", " + std::to_string(qb.gridC) + "], t " +
          std::to_string(qb.t) + ", mblock [" + std::to_string(qb.mblockR) + ", " + std::to_string(qb.mblockC) +
          "], ublock [" + std::to_string(qb.ublockR) + ", " + std::to_string(qb.ublockC) + "]"});
    return nullptr;
  }
  return &q;
}

const std::vector<uint32_t>& EpochBuilder::queueBuffers(const Queue& q) {
  auto it = queueBufs_.find(q.name);
  if (it != queueBufs_.end()) return it->second;
  std::vector<uint32_t> cells;
  const size_t first = sh_.queueFirstBuffer.at(q.name);
  const formats::Blocking qb = netlist::blockingOf(q);
  const int64_t tiles = entryTiles(qb);
  for (int64_t r = 0; r < qb.gridR; ++r)
    for (int64_t c = 0; c < qb.gridC; ++c) {
      const size_t idx = first + static_cast<size_t>(r * qb.gridC + c);
      const QueueBufferInfo& info = sh_.out.queueBuffers[idx];
      Buf b;
      b.place = Buf::Place::Dram;
      b.category = 1;
      b.orderKey = idx;
      b.queue = &q;
      b.queueBuffer = idx;
      Buffer& d = b.doc;
      d.uniqid = info.uniqid;
      d.mdOpName = q.name;
      d.comment = "Queue " + q.name + ": " + cellText(r, c);
      d.chipId = info.chip;
      d.core = CoreCoord{kDramCore, kDramCore};
      d.tilesPerInput = static_cast<uint32_t>(tiles);
      d.sizeTiles = static_cast<uint32_t>(tiles);
      d.tileSize = tileBytes(q.df.value, false, tileOf(q.tileDim));
      if (tileOf(q.tileDim) != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(q.df.value));
      d.dramIoFlagIsRemote = info.host;
      d.dramChan = static_cast<uint32_t>(info.channel);
      d.dramAddr = info.address;
      d.qSlots = static_cast<uint32_t>(q.entries.value);
      d.dramRamFlag = q.type.value == IoType::Ram;
      d.ublockRt = static_cast<uint32_t>(qb.ublockR);
      d.ublockCt = static_cast<uint32_t>(qb.ublockC);
      d.mblockM = static_cast<uint32_t>(qb.mblockR);
      d.mblockN = static_cast<uint32_t>(qb.mblockC);
      d.dataFormat = std::string(dataFormatName(q.df.value));
      cells.push_back(addBuf(std::move(b)));
    }
  return queueBufs_.emplace(q.name, std::move(cells)).first->second;
}

// Constant tiles for the pipes of `chip` (padding buffers are in no
// memory, but a pipe reads only its own chip's buffers).
uint32_t EpochBuilder::paddingBuffer(DataFormat df, double value, const Op& consumer, uint32_t chip) {
  auto key = std::make_tuple(chip, df, value);
  auto it = padding_.find(key);
  if (it != padding_.end()) return it->second;
  Buf b;
  b.place = Buf::Place::Padding;
  b.category = 2;
  b.orderKey = padding_.size();
  Buffer& d = b.doc;
  d.uniqid = sh_.newId();
  d.mdOpName = consumer.name;
  d.bufferType = BufferType::Other;
  d.bufferTypeText = "unknown";
  d.isPadding = true;
  d.paddingValue = value;
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  d.comment = "Padding Buffer: constant " + std::string(text) + " tiles in " + std::string(dataFormatName(df));
  d.chipId = chip;
  d.core = CoreCoord{kDramCore, kDramCore};
  d.tilesPerInput = 1;
  d.sizeTiles = 1;
  d.epochTiles = 1;
  d.scatterGatherNumTiles = 1;
  d.isScatter = true;
  d.replicate = 1;
  d.tileSize = tileBytes(df, false);
  d.dataFormat = std::string(dataFormatName(df));
  const uint32_t h = addBuf(std::move(b));
  padding_.emplace(key, h);
  return h;
}

} // namespace tessera::pipe::build
