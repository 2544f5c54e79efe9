// pipegen's stream builder, planning: buffer kinds and periods, padding
// tiles, pipes -> plans (chunks per pass, output groups), relay folding,
// passes and rounds, components (stream_builder.hpp).
#include "pipegen/stream_builder.hpp"

#include "device/arch_params.hpp"
#include "pipegen/pipegen_yaml_reader.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

namespace tessera::pipegen::detail {

// ---------------------------------------------------------------------------
// Padding buffers: as in BUDA, a padding buffer is a constant tile in DRAM
// that the runtime writes before the epoch (it reads the tile's value and
// format from the blob's dram_padding phases). One tile per distinct (tile
// size, format, value), each a one-slot ram (32-byte header + the tile),
// packed from kPaddingBase of channel 0 (where BUDA's net2pipe puts its
// padding buffers too); a queue buffer of the epoch overlapping them is an
// error. BUDA's own dram_addr of a padding buffer is not used.
// ---------------------------------------------------------------------------
constexpr uint64_t kPaddingBase = 0x600000;

bool StreamBuilder::placePadding() {
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, uint64_t> placed;  // (tile size, format, value bits) -> address
  uint64_t next = kPaddingBase;
  int first = -1;
  for (size_t i = 0; i < doc_.buffers.size(); ++i) {
    const Buffer& b = bufferAt(i);
    if (!b.isPadding) continue;
    if (first < 0) first = static_cast<int>(i);
    const float value = static_cast<float>(b.paddingValue.value_or(0.0));
    uint32_t bits = 0;
    std::memcpy(&bits, &value, 4);
    auto [it, fresh] = placed.emplace(std::make_tuple(b.tileSize, formatOf(b), uint64_t{bits}), next);
    if (fresh) next += (uint64_t{32} + b.tileSize + 31) / 32 * 32;
    const CoreCoord d = soc_.dramCore(0, 0);
    paddingAddr_[b.uniqid] = dramNocAddress(d.x, d.y, it->second);
  }
  size_t errors = diags_.errorCount();
  // Untilized buffers carry the shape the blob's untilize fields need.
  for (size_t i = 0; i < doc_.buffers.size(); ++i) {
    const Buffer& b = bufferAt(i);
    if (!b.untilizedOutput) continue;
    const uint32_t r = b.untilizedOutputRDim, c = b.untilizedOutputCDim;
    if (!r || !c || !b.untilizedOutputFullRDim || !b.untilizedOutputFullCDim || b.untilizedOutputFullRDim % r ||
        b.untilizedOutputFullCDim % c)
      bufError("pipegen-buffer", b,
               "untilized_output with r_dim " + std::to_string(r) + ", c_dim " + std::to_string(c) + ", full_r_dim " +
                   std::to_string(b.untilizedOutputFullRDim) + ", full_c_dim " + std::to_string(b.untilizedOutputFullCDim) +
                   ": the dims must be non-zero and the full dims whole multiples of the core's block");
  }
  if (first < 0) return diags_.errorCount() == errors;
  for (size_t i = 0; i < doc_.buffers.size(); ++i) {
    const Buffer& b = bufferAt(i);
    if (b.isPadding || info_[i].kind != BufKind::Dram || b.dramChan != 0 || b.dramIoFlagIsRemote) continue;
    const uint64_t bytes = satAdd(32, satMul(satMul(std::max<uint32_t>(1, b.qSlots), std::max<uint64_t>({1, info_[i].period, b.sizeTiles})), b.tileSize));
    if (b.dramAddr < next && satAdd(b.dramAddr, bytes) > kPaddingBase)
      noteBuf(bufError("pipegen-buffer", b,
                       "DRAM buffer [" + support::hexLiteral(b.dramAddr) + ", " + support::hexLiteral(satAdd(b.dramAddr, bytes)) +
                           ") of channel 0 overlaps the padding tiles at [" + support::hexLiteral(kPaddingBase) + ", " +
                           support::hexLiteral(next) + ")"),
              bufferAt(static_cast<size_t>(first)));
  }
  return diags_.errorCount() == errors;
}

// ---------------------------------------------------------------------------
// Buffers: kind, period, operand stream.
// ---------------------------------------------------------------------------
bool StreamBuilder::classifyBuffers() {
  size_t errors = diags_.errorCount();
  const int maxStreams = archParams(soc_.arch).maxStreamsPerCore;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, size_t> operandOwner;
  for (size_t i = 0; i < doc_.buffers.size(); ++i) {
    const Buffer& b = bufferAt(i);
    BufInfo& in = info_[i];
    byId_.emplace(b.uniqid, static_cast<uint32_t>(i));
    const std::string& t = b.bufferTypeText;
    bool atDram = b.core.r == kDramCore && b.core.c == kDramCore;
    if (b.bufferType == BufferType::DramIo || b.bufferType == BufferType::DramProlog || atDram || b.isPadding)
      in.kind = BufKind::Dram;
    else if (b.bufferType == BufferType::Unpacker || b.bufferType == BufferType::Packer ||
             b.bufferType == BufferType::Intermediate || t == "gradient_op")
      in.kind = BufKind::Operand;
    else if (b.bufferType == BufferType::Relay || t == "prolog_relay")
      in.kind = BufKind::Relay;
    else
      in.kind = BufKind::Other;
    in.isPacker = b.bufferType == BufferType::Packer;
    in.isReceiver = b.bufferType == BufferType::Unpacker;
    in.isIntermediate = b.bufferType == BufferType::Intermediate || t == "gradient_op";
    in.period = periodTiles(b, doc_.dialect);
    if (b.tileSize == 0) {
      bufError("pipegen-buffer", b, "tile_size is 0");
      continue;
    }
    if (opts_.cluster && !opts_.cluster->hasChip(b.chipId)) {
      bufError("pipegen-buffer", b,
               "chip_id " + std::to_string(b.chipId) + " is not a chip of cluster '" + opts_.cluster->name + "' (" +
                   std::to_string(opts_.cluster->chips.size()) + " chips)");
      continue;
    }
    if (b.ethernetChan || b.bufferType == BufferType::Ethernet || b.pcieRelay) {
      classifyEthernetBuffer(i);
      continue;
    }
    if (in.kind == BufKind::Dram) {
      // Queues pop a slot per period; prologue copies, padding and RAM buffers are read in place.
      in.padding = b.isPadding;
      in.ramLike = b.dramRamFlag || b.dramBufFlag;
      in.ramStreamed = b.dramRamFlag && !b.dramBufFlag && !b.isPadding;
      in.popped = b.bufferType == BufferType::DramIo && !b.isPadding && !in.ramLike;
      if (in.padding) continue;
      if (b.dramIoFlagIsRemote) {  // a host queue: host memory channel and address
        if (soc_.pcie.empty())
          bufError("pipegen-buffer", b, "host buffer (dram_io_flag_is_remote) on device '" + soc_.name + "', which has no PCIe core");
        else if (b.dramChan >= kHostChannels || b.dramAddr >= kHostChannelBytes)
          bufError("pipegen-buffer", b,
                   "host buffer at memory " + std::to_string(b.dramChan) + " address " + support::hexLiteral(b.dramAddr) +
                       " is outside the PCIe window (" + std::to_string(kHostChannels) + " host memories of " +
                       support::hexLiteral(kHostChannelBytes) + " bytes)");
        continue;
      }
      if (soc_.dramCore(static_cast<int>(b.dramChan), static_cast<int>(b.dramSubChan)).x < 0)
        bufError("pipegen-buffer", b,
                 "DRAM channel " + std::to_string(b.dramChan) + " subchannel " + std::to_string(b.dramSubChan) +
                     " is not on device '" + soc_.name + "' (" + std::to_string(soc_.dramChannelCount()) +
                     " channels)");
      if (b.dramAddr > 0xFFFFFFFFull)
        bufError("pipegen-buffer", b, "dram_addr " + std::to_string(b.dramAddr) + " does not fit 32 bits");
      continue;
    }
    if (static_cast<int>(b.core.r) >= soc_.workerRows || static_cast<int>(b.core.c) >= soc_.workerCols) {
      bufError("pipegen-buffer", b,
               "core_coordinates " + coreText(b.core.r, b.core.c) + " are outside the " +
                   std::to_string(soc_.workerRows) + "x" + std::to_string(soc_.workerCols) + " worker grid of '" +
                   soc_.name + "'");
      continue;
    }
    if (in.kind != BufKind::Operand) continue;
    bool gradient = t == "gradient_op";
    bool idOk = (in.isReceiver && b.id < 16) || (in.isPacker && b.id >= 16 && b.id < 24) ||
                (in.isIntermediate && !gradient && b.id >= 24 && b.id < 32) ||
                (gradient && b.id >= 16 && b.id < 32);
    if (!idOk) {
      bufError("pipegen-buffer", b,
               "operand id " + std::to_string(b.id) + " is not valid for a " + t +
                   " buffer (inputs 0-15, outputs 16-23, intermediates 24-31)");
      continue;
    }
    uint32_t streamId = blob::kOperandStreamBase + b.id;
    if (static_cast<int>(streamId) >= maxStreams) {
      bufError("out-of-streams", b, "operand " + std::to_string(b.id) + " needs stream " + std::to_string(streamId) +
                                        " but cores have " + std::to_string(maxStreams));
      continue;
    }
    if (b.sizeTiles == 0) {
      bufError("pipegen-buffer", b, "size_tiles is 0");
      continue;
    }
    auto key = std::make_tuple(b.chipId, b.core.r, b.core.c, streamId);
    if (auto [it, fresh] = operandOwner.emplace(key, i); !fresh) {
      noteBuf(bufError("pipegen-buffer", b,
                       "core " + coreText(b.core.r, b.core.c) + " already has a buffer for operand " +
                           std::to_string(b.id)),
              bufferAt(it->second));
      continue;
    }
    auto name = nocName(b.chipId, b.core.r, b.core.c, streamId);
    StreamInfo s;
    s.name = *name;
    s.r = b.core.r;
    s.c = b.core.c;
    s.buf = static_cast<int>(i);
    s.role = StreamRole::Operand;
    s.msgSize = b.tileSize;
    s.dataFormat = formatOf(b);
    s.ringTiles = b.sizeTiles;
    s.loc = locOf(b.pos);
    std::string role = in.isReceiver  ? "input " + std::to_string(b.id)
                       : in.isPacker  ? "output " + std::to_string(b.id - 16)
                       : gradient     ? std::string("gradient accumulator")
                                      : "intermediate " + std::to_string(b.id - 24);
    s.what = bufName(b) + " ('" + b.mdOpName + "', operand " + std::to_string(b.id) + ")";
    s.comment = "op '" + b.mdOpName + "' " + role + " (operand " + std::to_string(b.id) + ", " + bufName(b) +
                ") on core " + coreText(b.core.r, b.core.c);
    in.stream = static_cast<int>(streams_.size());
    usedIds_[{b.chipId, b.core.r, b.core.c}].insert(streamId);
    streams_.push_back(std::move(s));
    if (gradient && (b.dramBufFlag || b.writeDramBufFlag) &&
        soc_.dramCore(static_cast<int>(b.dramChan), static_cast<int>(b.dramSubChan)).x < 0)
      bufError("pipegen-buffer", b,
               "DRAM channel " + std::to_string(b.dramChan) + " subchannel " + std::to_string(b.dramSubChan) +
                   " is not on device '" + soc_.name + "' (" + std::to_string(soc_.dramChannelCount()) + " channels)");
  }
  return diags_.errorCount() == errors;
}

// ---------------------------------------------------------------------------
// Pipes -> plans (chunks per pass, output groups).
// ---------------------------------------------------------------------------
bool StreamBuilder::makePlans() {
  size_t errors = diags_.errorCount();
  for (size_t pi = 0; pi < doc_.pipes.size(); ++pi) {
    const Pipe& p = doc_.pipes[pi];
    Plan plan;
    plan.pipe = pi;
    plan.passesPerRound = std::max<uint32_t>(1, p.pipePeriodicRepeat);
    bool ok = true;
    if (p.pipeConsumerRepeat > 1) {
      pipeError("unsupported", p, "pipe_consumer_repeat " + std::to_string(p.pipeConsumerRepeat) +
                                      " is not supported (only 1)");
      continue;
    }
    uint32_t tileSize = 0;
    for (uint64_t id : p.inputList) {
      uint64_t offset = 0;
      auto bi = resolve(id, offset);
      if (!bi) { ok = false; break; } // the reader has reported it
      const Buffer& b = bufferAt(*bi);
      const BufInfo& in = info_[*bi];
      if (b.scatterGatherNumTiles == 0) {
        noteBuf(pipeError("pipegen-buffer", p, "input " + std::to_string(id) + " has scatter_gather_num_tiles 0"), b);
        ok = false;
        break;
      }
      if (in.kind == BufKind::Operand && !in.isPacker) {
        noteBuf(pipeError("unsupported", p, "input " + std::to_string(id) + " is a " + b.bufferTypeText +
                                                " buffer; pipes read packer, relay and DRAM buffers"),
                b);
        ok = false;
        break;
      }
      if (in.kind == BufKind::Other) {
        noteBuf(pipeError("unsupported", p, "input " + std::to_string(id) + " is a buffer of type '" +
                                                b.bufferTypeText + "', which pipegen cannot read"),
                b);
        ok = false;
        break;
      }
      if (tileSize == 0) tileSize = b.tileSize;
      if (b.tileSize != tileSize) {
        noteBuf(pipeError("pipegen-pipe", p, "input " + std::to_string(id) + " has tile_size " +
                                                 std::to_string(b.tileSize) + ", other inputs " +
                                                 std::to_string(tileSize)),
                b);
        ok = false;
        break;
      }
      uint64_t tiles = entryTiles(b, doc_.dialect);
      plan.chunks.push_back({*bi, offset, tiles});
      plan.passTiles += tiles;
    }
    if (!ok) continue;
    size_t dramOuts = 0, outs = 0;
    for (const auto& group : p.outputList) {
      std::vector<uint32_t> g;
      for (uint64_t id : group) {
        auto it = byId_.find(id);
        if (it == byId_.end()) { ok = false; break; }
        const Buffer& b = bufferAt(it->second);
        BufInfo& in = info_[it->second];
        if (b.tileSize != tileSize) {
          noteBuf(pipeError("pipegen-pipe", p, "output " + std::to_string(id) + " has tile_size " +
                                                   std::to_string(b.tileSize) + ", the inputs " +
                                                   std::to_string(tileSize)),
                  b);
          ok = false;
          break;
        }
        if (in.kind == BufKind::Dram) ++dramOuts;
        else if (!(in.kind == BufKind::Operand && in.isReceiver) && in.kind != BufKind::Relay &&
                 in.kind != BufKind::EthRelay) {
          noteBuf(pipeError("unsupported", p, "output " + std::to_string(id) + " is a " + b.bufferTypeText +
                                                  " buffer; pipes write unpacker, relay and DRAM buffers"),
                  b);
          ok = false;
          break;
        }
        if (in.writerPipe >= 0) {
          const Pipe& other = doc_.pipes[static_cast<size_t>(in.writerPipe)];
          pipeError("pipegen-pipe", p, "output " + std::to_string(id) + " is also the output of pipe " +
                                           std::to_string(other.id))
              .note(locOf(other.pos), "pipe " + std::to_string(other.id));
          ok = false;
          break;
        }
        in.writerPipe = static_cast<int>(pi);
        ++outs;
        g.push_back(it->second);
      }
      if (!ok) break;
      plan.groups.push_back(std::move(g));
    }
    if (!ok) continue;
    if (dramOuts > 0) {
      if (outs != 1) {
        pipeError("unsupported", p, "a pipe that writes DRAM must have exactly one output buffer (found " +
                                        std::to_string(outs) + " outputs, " + std::to_string(dramOuts) +
                                        " of them in DRAM)");
        continue;
      }
      plan.dramOut = true;
      for (const Chunk& ch : plan.chunks)
        if (info_[ch.buf].kind == BufKind::Dram) {
          noteBuf(pipeError("unsupported", p, "DRAM-to-DRAM pipes are not supported"), bufferAt(ch.buf));
          ok = false;
          break;
        }
      if (!ok) continue;
    }
    if (!checkPipeChips(plan)) continue;
    plans_.push_back(std::move(plan));
  }
  return diags_.errorCount() == errors;
}

// A relay buffer (prolog_relay) is the single output of a pipe A and an input
// of pipes B: B's chunks of the relay are replaced by the A chunks that
// carried those tiles, so no relay stream or L1 is needed.
bool StreamBuilder::foldRelays() {
  size_t errors = diags_.errorCount();
  std::set<uint32_t> relaysRead;
  for (const Plan& p : plans_)
    for (const Chunk& c : p.chunks)
      if (info_[c.buf].kind == BufKind::Relay) relaysRead.insert(c.buf);
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (size_t bi = 0; bi < plans_.size(); ++bi) {
      Plan& pb = plans_[bi];
      if (pb.dropped) continue;
      std::vector<Chunk> out;
      bool touched = false;
      for (const Chunk& ch : pb.chunks) {
        if (info_[ch.buf].kind != BufKind::Relay) {
          out.push_back(ch);
          continue;
        }
        touched = true;
        const Buffer& relay = bufferAt(ch.buf);
        int writer = info_[ch.buf].writerPipe;
        size_t ai = plans_.size();
        for (size_t k = 0; k < plans_.size(); ++k)
          if (static_cast<int>(plans_[k].pipe) == writer) ai = k;
        if (ai == plans_.size()) {
          noteBuf(pipeError("pipegen-pipe", pipeOfPlan(bi), "reads relay buffer " + std::to_string(relay.uniqid) +
                                                       " that no pipe writes"),
                  relay);
          return false;
        }
        const Plan& pa = plans_[ai];
        bool aConstant = std::all_of(pa.chunks.begin(), pa.chunks.end(), [&](const Chunk& c) {
          return info_[c.buf].kind == BufKind::Dram && !info_[c.buf].popped;
        });
        bool bOnlyRelay = std::all_of(pb.chunks.begin(), pb.chunks.end(), [&](const Chunk& c) { return c.buf == ch.buf; });
        if (pa.groups.size() != 1 || pa.groups[0].size() != 1 || pa.passTiles != info_[ch.buf].period ||
            (!aConstant && !bOnlyRelay)) {
          noteBuf(pipeError("unsupported", pipeOfPlan(bi),
                            "cannot fold relay buffer " + std::to_string(relay.uniqid) + " (its pipe " +
                                std::to_string(pipeOfPlan(ai).id) +
                                " must have it as its only output, a pass of exactly one relay period, and "
                                "constant inputs unless the relay is this pipe's only input)"),
                  relay);
          return false;
        }
        // Tessera's relays of DRAM reads: the relay's core reads DRAM.
        if (doc_.dialect == pipe::Dialect::Tessera && relay.bufferType == pipe::BufferType::Relay &&
            std::any_of(pa.chunks.begin(), pa.chunks.end(), [&](const Chunk& c) { return info_[c.buf].kind == BufKind::Dram; }))
          pb.dramRelayCore = std::pair{relay.core.r, relay.core.c};
        // Tiles [ch.offset, ch.offset + ch.tiles) of A's pass.
        uint64_t at = 0;
        for (const Chunk& a : pa.chunks) {
          uint64_t lo = std::max(at, ch.offset), hi = std::min(at + a.tiles, ch.offset + ch.tiles);
          if (lo < hi) out.push_back({a.buf, a.offset + (lo - at), hi - lo, joinPaths(a.path, ch.path)});
          at += a.tiles;
        }
        if (!aConstant) pb.passesPerRound = satMul(pb.passesPerRound, pa.passesPerRound);
        if (out.size() > kMaxFoldedChunks) {
          pipeError("unsupported", pipeOfPlan(bi), "folding relay buffers gives more than " +
                                              std::to_string(kMaxFoldedChunks) + " input chunks");
          return false;
        }
      }
      if (touched) {
        pb.chunks = std::move(out);
        changed = true;
      }
    }
    if (!changed) break;
  }
  // Pipes writing relays are now folded into their readers.
  for (Plan& p : plans_) {
    bool relayOut = false;
    for (const auto& g : p.groups)
      for (uint32_t b : g) relayOut |= info_[b].kind == BufKind::Relay;
    if (!relayOut) continue;
    bool read = false;
    for (const auto& g : p.groups)
      for (uint32_t b : g) read |= relaysRead.count(b) > 0;
    if (read && !(p.groups.size() == 1 && p.groups[0].size() == 1)) {
      pipeError("unsupported", doc_.pipes[p.pipe], "a pipe that writes a relay buffer must have it as its only output");
      return false;
    }
    if (!read)
      diags_.warning("unconnected-buffer", locOf(doc_.pipes[p.pipe].pos),
                     "pipe " + std::to_string(doc_.pipes[p.pipe].id) + " writes a relay buffer no pipe reads");
    p.dropped = true;
  }
  for (Plan& p : plans_)
    for (const Chunk& c : p.chunks)
      if (info_[c.buf].kind == BufKind::Relay) {
        pipeError("unsupported", doc_.pipes[p.pipe], "relay chain too deep to fold");
        return false;
      }
  return diags_.errorCount() == errors;
}

// Passes and rounds of every plan; reader lists of source buffers.
bool StreamBuilder::countPasses() {
  size_t errors = diags_.errorCount();
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    Plan& plan = plans_[pi];
    if (plan.dropped) continue;
    const Pipe& p = pipeOfPlan(pi);
    plan.passTiles = 0;
    for (const Chunk& c : plan.chunks) plan.passTiles += c.tiles;
    if (plan.dramOut && std::any_of(plan.chunks.begin(), plan.chunks.end(),
                                    [&](const Chunk& c) { return info_[c.buf].kind == BufKind::Dram; })) {
      pipeError("unsupported", p, "DRAM-to-DRAM pipes are not supported (through a relay buffer)");
      continue;
    }
    // Popped sources fix the number of rounds.
    std::optional<uint64_t> rounds;
    int first = -1;
    bool ok = true;
    std::set<uint32_t> seen;
    for (const Chunk& c : plan.chunks) {
      const BufInfo& in = info_[c.buf];
      bool popped = (in.kind == BufKind::Operand && in.isPacker) || (in.kind == BufKind::Dram && in.popped);
      if (!popped || !seen.insert(c.buf).second) continue;
      const Buffer& b = bufferAt(c.buf);
      uint64_t total = epochTotalTiles(b, doc_.dialect);
      if (in.period == 0 || total % in.period != 0) {
        noteBuf(pipeError("pipegen-pipe", p, "input " + bufName(b) + " carries " + std::to_string(total) +
                                                 " tiles in the epoch, not a whole number of its " +
                                                 std::to_string(in.period) + "-tile periods"),
                b);
        ok = false;
        break;
      }
      uint64_t r = total / in.period;
      if (!rounds) {
        rounds = r;
        first = static_cast<int>(c.buf);
      } else if (*rounds != r) {
        noteBuf(noteBuf(pipeError("pipegen-pipe", p, "inputs carry different numbers of periods in the epoch (" +
                                                         std::to_string(*rounds) + " and " + std::to_string(r) + ")"),
                        bufferAt(static_cast<size_t>(first))),
                b);
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    uint64_t G = plan.groups.size();
    if (satMul(plan.passesPerRound, plan.chunks.size()) > opts_.maxUnrolledTransfers) {
      pipeError("phase-limit", p, "pipe_periodic_repeat " + std::to_string(plan.passesPerRound) + " x " +
                                      std::to_string(plan.chunks.size()) + " input chunks exceed the unroll limit of " +
                                      std::to_string(opts_.maxUnrolledTransfers));
      continue;
    }
    if (rounds) {
      plan.rounds = *rounds;
    } else {
      // Constant inputs only: the outputs say how many passes.
      uint64_t total = 0;
      for (const auto& g : plan.groups) total = satAdd(total, bufferAt(g[0]).epochTiles);
      if (plan.passTiles == 0 || total % plan.passTiles != 0) {
        pipeError("pipegen-pipe", p, "its outputs take " + std::to_string(total) + " tiles in the epoch, not a whole "
                                     "number of " + std::to_string(plan.passTiles) + "-tile passes");
        continue;
      }
      uint64_t passes = total / plan.passTiles;
      if (passes % plan.passesPerRound != 0) plan.passesPerRound = 1;
      plan.rounds = passes / plan.passesPerRound;
    }
    // Outputs' epoch_tiles against what arrives.
    uint64_t passes = satMul(plan.rounds, plan.passesPerRound);
    for (uint64_t g = 0; g < G; ++g) {
      uint64_t n = passes / G + (g < passes % G ? 1 : 0);
      for (uint32_t b : plan.groups[g])
        if (satMul(n, plan.passTiles) != bufferAt(b).epochTiles && info_[b].kind != BufKind::Relay)
          diags_.warning("epoch-tiles", locOf(p.pos),
                         "pipe " + std::to_string(p.id) + " delivers " + std::to_string(satMul(n, plan.passTiles)) +
                             " tiles to " + bufName(bufferAt(b)) + " whose epoch_tiles is " + std::to_string(bufferAt(b).epochTiles));
    }
    for (const Chunk& c : plan.chunks) {
      auto& readers = info_[c.buf].readerPlans;
      if (readers.empty() || readers.back() != pi) readers.push_back(pi);
    }
  }
  return diags_.errorCount() == errors;
}

// Union of plans sharing a packer; unroll length and multiplier.
bool StreamBuilder::makeComponents() {
  std::vector<size_t> parent(plans_.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::function<size_t(size_t)> find = [&](size_t x) { return parent[x] == x ? x : parent[x] = find(parent[x]); };
  for (const BufInfo& in : info_)
    if (in.isPacker)
      for (size_t k = 1; k < in.readerPlans.size(); ++k) parent[find(in.readerPlans[k])] = find(in.readerPlans[0]);
  // Plans whose tiles pass through one ethernet relay share its stream.
  std::map<uint32_t, size_t> relayPlan;  // relay buffer -> a plan through it
  for (size_t pi = 0; pi < plans_.size(); ++pi)
    if (!plans_[pi].dropped)
      for (const Chunk& c : plans_[pi].chunks)
        for (uint32_t r : paths_[c.path])
          if (auto [it, fresh] = relayPlan.emplace(r, pi); !fresh) parent[find(pi)] = find(it->second);
  std::map<size_t, int> ids;
  std::vector<uint64_t> cycle, rounds;
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    Plan& p = plans_[pi];
    if (p.dropped) continue;
    auto [it, fresh] = ids.emplace(find(pi), static_cast<int>(cycle.size()));
    if (fresh) {
      cycle.push_back(1);
      rounds.push_back(p.rounds);
    } else if (p.chained && rounds[it->second] != p.rounds) {
      // Forks agree by construction; plans sharing a relay chain need not.
      pipeError("unsupported", pipeOfPlan(pi),
                "its tiles share relay streams on ethernet cores with pipes that carry " +
                    std::to_string(rounds[it->second]) + " periods in the epoch, this one " +
                    std::to_string(p.rounds) + " (a relay stream repeats one cycle of transfers)");
      return false;
    }
    p.component = it->second;
    uint64_t G = p.groups.size();
    cycle[it->second] = lcm64(cycle[it->second], G / gcd64(G, p.passesPerRound));
  }
  componentMultiplier_.assign(cycle.size(), 1);
  componentRounds_.assign(cycle.size(), 0);
  for (size_t k = 0; k < cycle.size(); ++k) {
    uint64_t R = rounds[k];
    uint64_t gen = (R == 0) ? 0 : (R % cycle[k] == 0 ? cycle[k] : R);
    componentRounds_[k] = gen;
    componentMultiplier_[k] = gen == 0 ? 1 : R / gen;
  }
  return true;
}

} // namespace tessera::pipegen::detail
