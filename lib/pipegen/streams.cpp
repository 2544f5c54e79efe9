// pipegen's core: pipes -> transfers -> per-stream phases, stream ids, L1.
//
// Vocabulary (docs/pipegen.md):
// - chunk: one input_list entry: `tiles` tiles at `offset` of the current
//   period of one buffer.
// - pass: one walk over a pipe's input_list; pass k goes to output group
//   k % G (G inner lists of a nested output_list, else 1).
// - round: pipe_periodic_repeat passes (at least 1); every popped source
//   (packer, DRAM queue) moves to its next period after a round.
// - transfer: tiles moving from one sending stream to its receivers (or to
//   or from DRAM) in one phase of each stream involved.
// - component: pipes that share a packer (a fork) and so must be unrolled
//   together; all its pipes have the same number of rounds.
#include "pipegen/builder.hpp"

#include "device/arch_params.hpp"
#include "device/device_contract.h"
#include "netlist/enums.hpp"
#include "pipegen/pipegen_yaml_reader.hpp"
#include "support/text_format.hpp"
#include "support/yaml.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <tuple>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

namespace tessera::pipegen {

using pipe::Buffer;
using pipe::BufferType;
using pipe::Pipe;
using pipe::PipegenYaml;

uint64_t dramNocAddress(int x, int y, uint64_t addr) {
  return ((static_cast<uint64_t>(y & 0x3F) << 6 | static_cast<uint64_t>(x & 0x3F)) << 32) | (addr & 0xFFFFFFFFull);
}

namespace detail {

std::optional<uint32_t> Builder::resolve(uint64_t id, uint64_t& offset) const {
  auto it = byId_.upper_bound(id);
  if (it == byId_.begin()) return std::nullopt;
  --it;
  offset = id - it->first;
  return it->second;
}

std::optional<blob::StreamName> Builder::nocName(uint32_t chip, uint32_t r, uint32_t c, uint32_t streamId) const {
  CoreCoord noc = soc_.workerCore(static_cast<int>(r), static_cast<int>(c));
  if (noc.x < 0) return std::nullopt;
  return blob::StreamName{chip, static_cast<uint32_t>(noc.y), static_cast<uint32_t>(noc.x), streamId};
}

uint32_t Builder::formatOf(const Buffer& b) const {
  if (b.dataFormat)
    if (auto f = netlist::parseDataFormat(*b.dataFormat)) return static_cast<uint32_t>(*f);
  // BUDA files name no format: the first format (enum order) with this tile size.
  for (uint32_t f = 0; f < contract::kDataFormatCount; ++f)
    if (netlist::tileSizeBytes(static_cast<netlist::DataFormat>(f)) == b.tileSize) return f;
  return 0;
}

uint64_t Builder::dramAddr(const Buffer& b, uint32_t chip) const {
  if (b.isPadding) {
    auto it = paddingAddr_.find(b.uniqid);
    return it == paddingAddr_.end() ? 0 : it->second;
  }
  if (!b.dramIoFlagIsRemote && b.chipId != chip && !soc_.pcie.empty()) {  // another chip's DRAM (pcie.cpp)
    const CoreCoord p = soc_.pcie.front();
    return peerDramNocAddress(p.x, p.y, b.chipId, b.dramChan, b.dramAddr);
  }
  if (b.dramIoFlagIsRemote) {  // host memory through the PCIe core (checked in classifyBuffers)
    const CoreCoord p = soc_.pcie.empty() ? CoreCoord{0, 0} : soc_.pcie.front();
    return dramNocAddress(p.x, p.y, uint64_t{b.dramChan} * kHostChannelBytes + b.dramAddr);
  }
  CoreCoord d = soc_.dramCore(static_cast<int>(b.dramChan), static_cast<int>(b.dramSubChan));
  return dramNocAddress(d.x, d.y, b.dramAddr);
}

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

bool Builder::placePadding() {
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, uint64_t> placed;  // (tile size, format, value bits) -> address
  uint64_t next = kPaddingBase;
  int first = -1;
  for (size_t i = 0; i < doc_.buffers.size(); ++i) {
    const Buffer& b = B(i);
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
    const Buffer& b = B(i);
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
    const Buffer& b = B(i);
    if (b.isPadding || info_[i].kind != BufKind::Dram || b.dramChan != 0 || b.dramIoFlagIsRemote) continue;
    const uint64_t bytes = satAdd(32, satMul(satMul(std::max<uint32_t>(1, b.qSlots), std::max<uint64_t>({1, info_[i].period, b.sizeTiles})), b.tileSize));
    if (b.dramAddr < next && satAdd(b.dramAddr, bytes) > kPaddingBase)
      noteBuf(bufError("pipegen-buffer", b,
                       "DRAM buffer [" + support::hexLiteral(b.dramAddr) + ", " + support::hexLiteral(satAdd(b.dramAddr, bytes)) +
                           ") of channel 0 overlaps the padding tiles at [" + support::hexLiteral(kPaddingBase) + ", " +
                           support::hexLiteral(next) + ")"),
              B(static_cast<size_t>(first)));
  }
  return diags_.errorCount() == errors;
}

// ---------------------------------------------------------------------------
// Buffers: kind, period, operand stream.
// ---------------------------------------------------------------------------
bool Builder::classifyBuffers() {
  size_t errors = diags_.errorCount();
  const int maxStreams = archParams(soc_.arch).maxStreamsPerCore;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, size_t> operandOwner;
  for (size_t i = 0; i < doc_.buffers.size(); ++i) {
    const Buffer& b = B(i);
    BufInfo& in = info_[i];
    byId_.emplace(b.uniqid, static_cast<uint32_t>(i));
    const std::string& t = b.bufferTypeText;
    bool atDram = b.core.r == kDramRow && b.core.c == kDramRow;
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
              B(it->second));
      continue;
    }
    auto name = nocName(b.chipId, b.core.r, b.core.c, streamId);
    StreamB s;
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
bool Builder::makePlans() {
  size_t errors = diags_.errorCount();
  for (size_t pi = 0; pi < doc_.pipes.size(); ++pi) {
    const Pipe& p = doc_.pipes[pi];
    Plan plan;
    plan.pipe = pi;
    plan.ppr = std::max<uint32_t>(1, p.pipePeriodicRepeat);
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
      const Buffer& b = B(*bi);
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
        const Buffer& b = B(it->second);
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
          noteBuf(pipeError("unsupported", p, "DRAM-to-DRAM pipes are not supported"), B(ch.buf));
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
bool Builder::foldRelays() {
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
        const Buffer& relay = B(ch.buf);
        int writer = info_[ch.buf].writerPipe;
        size_t ai = plans_.size();
        for (size_t k = 0; k < plans_.size(); ++k)
          if (static_cast<int>(plans_[k].pipe) == writer) ai = k;
        if (ai == plans_.size()) {
          noteBuf(pipeError("pipegen-pipe", P(bi), "reads relay buffer " + std::to_string(relay.uniqid) +
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
          noteBuf(pipeError("unsupported", P(bi),
                            "cannot fold relay buffer " + std::to_string(relay.uniqid) + " (its pipe " +
                                std::to_string(P(ai).id) +
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
        if (!aConstant) pb.ppr = satMul(pb.ppr, pa.ppr);
        if (out.size() > kMaxFoldedChunks) {
          pipeError("unsupported", P(bi), "folding relay buffers gives more than " +
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
bool Builder::countPasses() {
  size_t errors = diags_.errorCount();
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    Plan& plan = plans_[pi];
    if (plan.dropped) continue;
    const Pipe& p = P(pi);
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
      const Buffer& b = B(c.buf);
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
                        B(static_cast<size_t>(first))),
                b);
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    uint64_t G = plan.groups.size();
    if (satMul(plan.ppr, plan.chunks.size()) > opts_.maxUnrolledTransfers) {
      pipeError("phase-limit", p, "pipe_periodic_repeat " + std::to_string(plan.ppr) + " x " +
                                      std::to_string(plan.chunks.size()) + " input chunks exceed the unroll limit of " +
                                      std::to_string(opts_.maxUnrolledTransfers));
      continue;
    }
    if (rounds) {
      plan.rounds = *rounds;
    } else {
      // Constant inputs only: the outputs say how many passes.
      uint64_t total = 0;
      for (const auto& g : plan.groups) total = satAdd(total, B(g[0]).epochTiles);
      if (plan.passTiles == 0 || total % plan.passTiles != 0) {
        pipeError("pipegen-pipe", p, "its outputs take " + std::to_string(total) + " tiles in the epoch, not a whole "
                                     "number of " + std::to_string(plan.passTiles) + "-tile passes");
        continue;
      }
      uint64_t passes = total / plan.passTiles;
      if (passes % plan.ppr != 0) plan.ppr = 1;
      plan.rounds = passes / plan.ppr;
    }
    // Outputs' epoch_tiles against what arrives.
    uint64_t passes = satMul(plan.rounds, plan.ppr);
    for (uint64_t g = 0; g < G; ++g) {
      uint64_t n = passes / G + (g < passes % G ? 1 : 0);
      for (uint32_t b : plan.groups[g])
        if (satMul(n, plan.passTiles) != B(b).epochTiles && info_[b].kind != BufKind::Relay)
          diags_.warning("epoch-tiles", locOf(p.pos),
                         "pipe " + std::to_string(p.id) + " delivers " + std::to_string(satMul(n, plan.passTiles)) +
                             " tiles to " + bufName(B(b)) + " whose epoch_tiles is " + std::to_string(B(b).epochTiles));
    }
    for (const Chunk& c : plan.chunks) {
      auto& readers = info_[c.buf].readerPlans;
      if (readers.empty() || readers.back() != pi) readers.push_back(pi);
    }
  }
  return diags_.errorCount() == errors;
}

// Union of plans sharing a packer; unroll length and multiplier.
bool Builder::makeComponents() {
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
      pipeError("unsupported", P(pi),
                "its tiles share relay streams on ethernet cores with pipes that carry " +
                    std::to_string(rounds[it->second]) + " periods in the epoch, this one " +
                    std::to_string(p.rounds) + " (a relay stream repeats one cycle of transfers)");
      return false;
    }
    p.component = it->second;
    uint64_t G = p.groups.size();
    cycle[it->second] = lcm64(cycle[it->second], G / gcd64(G, p.ppr));
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

// ---------------------------------------------------------------------------
// Endpoints: packer modes, direct DRAM readers/writers, extra streams.
// ---------------------------------------------------------------------------
int Builder::newExtraStream(size_t plan, StreamRole role, const std::vector<std::pair<uint32_t, uint32_t>>& cores,
                            uint32_t chip, uint32_t tileSize, uint32_t format) {
  const int maxStreams = archParams(soc_.arch).maxStreamsPerCore;
  std::vector<uint32_t> pool;
  for (uint32_t s = 0; s < blob::kOperandStreamBase; ++s) pool.push_back(s);
  for (uint32_t s = blob::kOperandStreamEnd; s < static_cast<uint32_t>(maxStreams); ++s) pool.push_back(s);
  const Pipe& p = doc_.pipes[plans_[plan].pipe];
  // Prefer a core with a free stream and room for the ring; else any core
  // with a free stream (the L1 check then reports the core).
  uint64_t top = soc_.workerL1Size ? soc_.workerL1Size : archParams(soc_.arch).defaultWorkerL1Size;
  uint64_t capacity = top > contract::kDataBufferBase ? top - contract::kDataBufferBase : 0;
  uint64_t ring = role == StreamRole::Fork ? 0 : satMul(std::max<uint32_t>(1, opts_.extraStreamRingTiles), tileSize);
  auto kindOf = [](StreamRole r) {
    return std::string(r == StreamRole::DramReader ? "DRAM reader" : r == StreamRole::DramWriter ? "DRAM writer" : "fork stream");
  };
  auto l1Used = [&](uint32_t r, uint32_t c) {
    uint64_t used = 0;
    for (const StreamB& s : streams_)
      if (s.name.chip == chip && s.r == r && s.c == c && !s.eth)
        used = satAdd(used, s.role == StreamRole::Operand ? satMul(s.ringTiles, s.msgSize)
                            : s.role == StreamRole::Fork ? 0
                                                         : satMul(std::max<uint32_t>(1, opts_.extraStreamRingTiles), s.msgSize));
    return used;
  };
  std::vector<std::pair<uint32_t, uint32_t>> ordered;
  for (auto rc : cores)
    if (std::find(ordered.begin(), ordered.end(), rc) == ordered.end() && satAdd(l1Used(rc.first, rc.second), ring) <= capacity)
      ordered.push_back(rc);
  for (auto rc : cores)
    if (std::find(ordered.begin(), ordered.end(), rc) == ordered.end()) ordered.push_back(rc);
  for (auto [r, c] : ordered) {
    auto& used = usedIds_[{chip, r, c}];
    for (uint32_t id : pool) {
      if (used.count(id)) continue;
      used.insert(id);
      StreamB s;
      s.name = *nocName(chip, r, c, id);
      s.r = r;
      s.c = c;
      s.plan = plan;
      s.role = role;
      s.msgSize = tileSize;
      s.dataFormat = format;
      s.loc = locOf(p.pos);
      std::string kind = kindOf(role);
      s.what = "stream " + std::to_string(id) + " (" + kind + " of pipe " + std::to_string(p.id) + ")";
      s.comment = kind + " of pipe " + std::to_string(p.id) + (p.comment.empty() ? "" : " (" + p.comment + ")") +
                  " on core " + coreText(r, c);
      streams_.push_back(std::move(s));
      return static_cast<int>(streams_.size() - 1);
    }
  }
  auto [r0, c0] = cores.front();
  auto d = pipeError("out-of-streams", p,
                     "core " + coreText(r0, c0) + " has no free overlay stream for the " +
                         kindOf(role) + " this pipe needs (" +
                         std::to_string(pool.size()) + " streams outside the operand range 8-39, all in use" +
                         (cores.size() > 1 ? " on every core of the pipe" : "") + ")");
  for (const StreamB& s : streams_)
    if (s.r == r0 && s.c == c0 && s.name.chip == chip && !s.eth && s.role != StreamRole::Operand) d.note(s.loc, s.what);
  return -1;
}

// A packer sending `emissions` (offset, tiles) of its `period`, in that
// order: after each emission it releases the longest prefix of the period
// no later emission reads (and the packer has surely pushed), `freed[k]`.
// Returns the ring that must hold what is read but not yet released (the
// reorder window), rounded up to the packer's push unit `unit` (a ublock:
// it waits for room for the whole ublock before it writes the tile an
// emission needs).
static uint64_t reorderWindow(const std::vector<std::pair<uint64_t, uint64_t>>& emissions, uint64_t period,
                              uint64_t unit, std::vector<uint64_t>& freed) {
  auto pushedBy = [unit](uint64_t end) { return (end + unit - 1) / unit * unit; };
  const size_t K = emissions.size();
  std::vector<uint64_t> laterMin(K, period);
  for (size_t k = K; k-- > 1;) laterMin[k - 1] = std::min(laterMin[k], emissions[k].first);
  freed.assign(K, 0);
  uint64_t released = 0, maxEnd = 0, window = 0;
  for (size_t k = 0; k < K; ++k) {
    uint64_t end = satAdd(emissions[k].first, emissions[k].second);
    maxEnd = std::max(maxEnd, end);
    window = std::max(window, pushedBy(end) - std::min(pushedBy(end), released));
    if (k + 1 == K) {
      window = std::max(window, pushedBy(period) - std::min(pushedBy(period), released));
      freed[k] = period;
    } else {
      freed[k] = std::max(released, std::min(laterMin[k], maxEnd));
      released = freed[k];
    }
  }
  return window;
}

// How the packer of buffer `bi` sends its tiles to its reader plans:
// merged, FIFO or windowed (emission order, releases, ring). Returns true
// when the ring had to grow past the buffer's size_tiles because readers
// take the period in pieces that leave nothing to release between them.
bool Builder::planPackerEmissions(size_t lane) {
  const size_t bi = laneBuf_[lane];
  BufInfo& in = info_[bi];
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> lists;
  std::vector<std::vector<uint32_t>> paths;  // per reader: the relay chain of each chunk
  // Per reader: where each chunk starts in the reader's whole input (all
  // its sources, one round), and that input's length (see the merge below).
  std::vector<std::vector<uint64_t>> clocks;
  std::vector<uint64_t> totals;
  bool anyDirect = false;
  for (size_t pi : laneReaders_[lane]) {
    const Plan& plan = plans_[pi];
    anyDirect |= plan.directDramWrite || (plan.chained && plan.dramOut);
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    std::vector<uint32_t>& chain = paths.emplace_back();
    std::vector<uint64_t>& at = clocks.emplace_back();
    uint64_t pos = 0;
    for (uint64_t r = 0; r < plan.ppr; ++r)
      for (const Chunk& c : plan.chunks) {
        if (c.buf == bi) {
          ranges.push_back({c.offset, c.tiles});
          chain.push_back(c.path);
          at.push_back(pos);
        }
        pos = satAdd(pos, c.tiles);
      }
    totals.push_back(std::max<uint64_t>(pos, 1));
    lists.push_back(std::move(ranges));
  }
  // Where each chunk falls in its reader's input (see the merge below).
  auto sameClock = [&](size_t k) {
    for (size_t j = 0; j < clocks[k].size(); ++j)
      if (static_cast<unsigned __int128>(clocks[k][j]) * totals[0] !=
          static_cast<unsigned __int128>(clocks[0][j]) * totals[k])
        return false;
    return true;
  };
  // Forks that take the same tiles in the same order (through the same
  // relays) at the same point of their inputs share one multicast transfer
  // per chunk (not possible into DRAM: a phase has one destination). At
  // different points (a gather whose consumers start at different
  // sources), one shared transfer would hold the earlier reader until the
  // later one is ready: a deadlock when the later waits on the earlier.
  bool merged = lists.size() > 1 && !anyDirect &&
                std::all_of(lists.begin(), lists.end(), [&](const auto& l) { return l == lists[0]; }) &&
                std::all_of(paths.begin(), paths.end(), [&](const auto& l) { return l == paths[0]; });
  // (Through relay chains the readers must share the transfer: a relay
  // forwards one stream's tiles in order; ethernet.cpp checks that.)
  const bool chainedLane = std::any_of(paths[0].begin(), paths[0].end(), [](uint32_t p) { return p != 0; });
  for (size_t k = 1; merged && laneByClock_[lane] && !chainedLane && k < lists.size(); ++k) merged = sameClock(k);
  std::vector<std::pair<uint64_t, uint64_t>> emissions;
  std::vector<std::pair<size_t, size_t>>& order = packerOrder_[lane]; // (reader, its chunk index)
  order.clear();
  if (merged || lists.size() == 1) {
    emissions = lists[0];
    for (size_t j = 0; j < emissions.size(); ++j) order.push_back({0, j});
  } else {
    // Several pipes read different tiles: interleave them (each pipe keeps
    // its own order) by where each chunk falls in its reader's whole input,
    // as a fraction of that input. Every packer of the epoch orders its
    // sends by this one clock, and every reader receives in increasing
    // clock, so the earliest pending transfer can always go: no cycle of
    // senders and gathering readers waiting on each other (two feeders
    // gathered by several consumers in different orders, output_padding).
    // Ordering by tile offset alone let one packer serve a reader that
    // still waited for another packer's earlier tiles (a deadlock).
    // Ties: the lower tile offset, then the reader's pipe order.
    std::vector<size_t> head(lists.size(), 0);
    auto earlier = [&](size_t a, size_t b) {
      if (!laneByClock_[lane]) return lists[a][head[a]].first < lists[b][head[b]].first;
      unsigned __int128 ca = static_cast<unsigned __int128>(clocks[a][head[a]]) * totals[b];
      unsigned __int128 cb = static_cast<unsigned __int128>(clocks[b][head[b]]) * totals[a];
      if (ca != cb) return ca < cb;
      return lists[a][head[a]].first < lists[b][head[b]].first;
    };
    for (;;) {
      size_t best = lists.size();
      for (size_t k = 0; k < lists.size(); ++k)
        if (head[k] < lists[k].size() && (best == lists.size() || earlier(k, best)))
          best = k;
      if (best == lists.size()) break;
      emissions.push_back(lists[best][head[best]]);
      order.push_back({best, head[best]++});
    }
  }
  uint64_t at = 0;
  bool fifo = true;
  for (auto [off, n] : emissions) {
    fifo &= off == at;
    at += n;
  }
  fifo &= at == in.period;
  packerMerged_[lane] = merged;
  packerWindowed_[lane] = !fifo;
  packerEmissions_[lane] = emissions.size();
  packerFreed_[lane].clear();
  if (fifo) return false;
  const Buffer& packer = B(static_cast<uint32_t>(bi));
  std::vector<uint64_t> freed;
  uint64_t window = reorderWindow(emissions, in.period, ublockTiles(packer), freed);
  if (!opts_.releaseWindows) {
    // Release only whole periods: the ring holds the whole period.
    std::fill(freed.begin(), freed.end(), 0);
    freed.back() = in.period;
    window = in.period;
  }
  packerFreed_[lane] = std::move(freed);
  // Every lane sends from the packer's one buffer (the operand stream's ring).
  StreamB& s = streams_[static_cast<size_t>(in.stream)];
  s.ringTiles = std::max<uint64_t>(s.ringTiles, window);
  return opts_.releaseWindows && !merged && lists.size() > 1 && window > packer.sizeTiles;
}

// Forks that each take the packer's period in big pieces (a multicast to an
// op beside the write of the same tiles into a queue) release nothing until
// both have read a piece: split this buffer's chunks in every reader plan
// into its scatter granules (else ublocks) so the readers' transfers
// interleave. Returns whether anything was split.
bool Builder::splitPackerChunks(size_t bi) {
  const Buffer& b = B(static_cast<uint32_t>(bi));
  uint64_t granule = b.scatterGatherNumTiles;
  if (granule == 0) granule = ublockTiles(b);
  bool split = false;
  std::vector<std::vector<Chunk>> splitChunks;
  for (size_t pi : info_[bi].readerPlans) {
    const Plan& plan = plans_[pi];
    std::vector<Chunk>& chunks = splitChunks.emplace_back();
    for (const Chunk& c : plan.chunks) {
      if (c.buf != bi || c.tiles <= granule || c.tiles % granule != 0) {
        chunks.push_back(c);
        continue;
      }
      for (uint64_t o = 0; o < c.tiles; o += granule) chunks.push_back({c.buf, c.offset + o, granule});
      split = true;
    }
    if (satMul(plan.ppr, chunks.size()) > opts_.maxUnrolledTransfers) return false;
  }
  if (!split) return false;
  for (size_t k = 0; k < splitChunks.size(); ++k) plans_[info_[bi].readerPlans[k]].chunks = std::move(splitChunks[k]);
  // The first attempt grew the ring to the whole period: start again.
  streams_[static_cast<size_t>(info_[bi].stream)].ringTiles = b.sizeTiles;
  return true;
}

void Builder::planLanes(const std::vector<size_t>& lanes) {
  for (size_t lane : lanes) {
    // A second attempt with this buffer's chunks split (below; only for a
    // lane of several readers).
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!planPackerEmissions(lane)) break;
      if (!splitPackerChunks(laneBuf_[lane])) break;
    }
  }
}

bool Builder::placeEndpoints() {
  size_t errors = diags_.errorCount();
  // Pipes writing DRAM from a single packer: the packer's stream writes.
  for (Plan& plan : plans_) {
    if (plan.dropped || !plan.dramOut) continue;
    uint32_t src = plan.chunks.front().buf;
    plan.directDramWrite = !plan.chained && info_[src].isPacker &&
                           std::all_of(plan.chunks.begin(), plan.chunks.end(),
                                       [&](const Chunk& c) { return c.buf == src; });
  }
  // Packer emission modes.
  // Lanes: a fork gives every reader pipe after the first its own stream
  // over the packer's buffer, so a consumer that stops taking tiles does not
  // starve the others (fork-join graphs).
  for (size_t bi = 0; bi < doc_.buffers.size(); ++bi) {
    BufInfo& in = info_[bi];
    if (!in.isPacker || in.readerPlans.empty()) continue;
    // Readers that are DRAM writes never wait on a join: a packer with fewer
    // than two op readers keeps one lane (its readers interleave or share a
    // multicast on the operand stream, as before), saving streams.
    // A reader that jumps through the period (a TM's gather, a matmul's
    // ublock order) makes its lane's window, and so the packer's ring, as
    // large as the span it jumps over: lanes then only when every reader's
    // own window fits the buffer, or the period is at most twice the buffer
    // (else such forks keep the interleaved lane, whose split granules keep
    // the ring small: output padding's 3072-tile periods). A reader that
    // jumps only within an mblock (a matmul gathering sub-ublocks of a
    // column-ordered producer, read beside an eltwise op that joins the
    // matmul's result) gets its lane: interleaved, the eltwise reader's
    // full input held back the tiles the matmul needed (a hang).
    size_t opReaders = 0;
    bool inOrder = true;
    bool windowsFit = opts_.releaseWindows;
    bool chained = false;  // read through relay chains (ethernet.cpp): lanes by chain, below
    const Buffer& packer = B(static_cast<uint32_t>(bi));
    for (size_t pi : in.readerPlans) {
      opReaders += !plans_[pi].dramOut;
      for (const Chunk& c : plans_[pi].chunks) chained |= c.buf == bi && c.path != 0;
      uint64_t next = 0;
      bool readerInOrder = true;
      std::vector<std::pair<uint64_t, uint64_t>> emissions;
      for (uint64_t r = 0; r < plans_[pi].ppr && windowsFit; ++r)
        for (const Chunk& c : plans_[pi].chunks)
          if (c.buf == bi) emissions.push_back({c.offset, c.tiles});
      for (const Chunk& c : plans_[pi].chunks) {
        if (c.buf != bi) continue;
        if (c.offset != next % std::max<uint64_t>(in.period, 1)) readerInOrder = false;
        next = c.offset + c.tiles;
      }
      inOrder &= readerInOrder;
      if (!readerInOrder && windowsFit && !emissions.empty()) {
        std::vector<uint64_t> freed;
        windowsFit = reorderWindow(emissions, in.period, ublockTiles(packer), freed) <= packer.sizeTiles;
      }
    }
    // Reader plans per lane.
    std::vector<std::vector<size_t>> lanes;
    if (chained) {
      // One lane for the readers on this chip and one per relay chain (a
      // relay forwards one stream's tiles): readers of one chain that read
      // alike then share one multicast, and cross the link once.
      std::vector<uint32_t> paths;  // lane key, in reader order
      for (size_t pi : in.readerPlans) {
        std::optional<uint32_t> path;
        for (const Chunk& c : plans_[pi].chunks)
          if (c.buf == bi) path = path && *path != c.path ? UINT32_MAX : c.path;
        const size_t k = static_cast<size_t>(std::find(paths.begin(), paths.end(), *path) - paths.begin());
        if (k == paths.size()) {
          paths.push_back(*path);
          lanes.emplace_back();
        }
        lanes[k].push_back(pi);
      }
      if (std::count(paths.begin(), paths.end(), UINT32_MAX)) lanes = {in.readerPlans};  // mixed: one lane
    } else if (opReaders < 2 || !(inOrder || windowsFit || in.period <= 2 * uint64_t{packer.sizeTiles})) {
      lanes = {in.readerPlans};
    } else {
      for (size_t pi : in.readerPlans) lanes.push_back({pi});
    }
    for (size_t k = 0; k < lanes.size(); ++k) {
      const size_t pi = lanes[k].front();
      int stream = in.stream;
      if (k > 0) {
        const Buffer& b = B(bi);
        stream = newExtraStream(pi, StreamRole::Fork, {{b.core.r, b.core.c}}, b.chipId, b.tileSize, formatOf(b));
        if (stream < 0) return false;
        StreamB& f = streams_[static_cast<size_t>(stream)];
        f.buf = static_cast<int>(bi);
        const Pipe& p = P(pi);
        f.what = "stream " + std::to_string(f.name.streamId) + " (fork stream of " + bufName(b) + " for pipe " +
                 std::to_string(p.id) + ")";
        f.comment = "op '" + b.mdOpName + "' output " + std::to_string(b.id - 16) + " fork stream for pipe " +
                    std::to_string(p.id) + " (" + bufName(b) + ") on core " + coreText(b.core.r, b.core.c);
      }
      for (size_t r : lanes[k]) laneOf_[{static_cast<uint32_t>(bi), r}] = laneBuf_.size();
      laneBuf_.push_back(static_cast<uint32_t>(bi));
      laneStream_.push_back(stream);
      laneReaders_.push_back(lanes[k]);
    }
  }
  packerWindowed_.assign(laneBuf_.size(), false);
  packerMerged_.assign(laneBuf_.size(), false);
  packerEmissions_.assign(laneBuf_.size(), 0);
  packerFreed_.assign(laneBuf_.size(), {});
  packerOrder_.assign(laneBuf_.size(), {});
  laneByClock_.assign(laneBuf_.size(), false);
  std::vector<size_t> all(laneBuf_.size());
  for (size_t lane = 0; lane < all.size(); ++lane) all[lane] = lane;
  planLanes(all);
  // Lanes whose send order would deadlock against the readers' gather
  // order are planned again by the readers' clock (order_check.cpp), with
  // every other lane of their buffer, until none is stuck.
  for (;;) {
    std::vector<size_t> stuck = orderDeadlockLanes();
    std::set<uint32_t> bufs;
    for (size_t lane : stuck)
      if (!laneByClock_[lane]) bufs.insert(laneBuf_[lane]);
    if (bufs.empty()) break;
    std::vector<size_t> again;
    for (size_t lane = 0; lane < laneBuf_.size(); ++lane)
      if (bufs.count(laneBuf_[lane])) {
        laneByClock_[lane] = true;
        again.push_back(lane);
      }
    for (uint32_t b : bufs) streams_[static_cast<size_t>(info_[b].stream)].ringTiles = B(b).sizeTiles;
    planLanes(again);
  }
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    Plan& plan = plans_[pi];
    if (plan.dropped) continue;
    const Buffer& firstIn = B(plan.chunks.front().buf);
    for (const auto& g : plan.groups) {
      std::vector<int> ss;
      for (uint32_t b : g)
        if (info_[b].kind == BufKind::Operand) ss.push_back(info_[b].stream);
      plan.groupStreams.push_back(std::move(ss));
    }
    bool hasDram = false;  // read here (chained DRAM chunks are read by their first relay)
    for (size_t k = 0; k < plan.chunks.size(); ++k)
      if (info_[plan.chunks[k].buf].kind == BufKind::Dram) {
        hasDram |= plan.chunks[k].path == 0;
        plan.lastChunkOf[plan.chunks[k].buf] = k;
      }
    if (!plan.dramOut) {
      size_t outs = 0;
      for (const auto& g : plan.groups) outs += g.size();
      if (hasDram && plan.dramRelayCore) {
        plan.dramReader = newExtraStream(pi, StreamRole::DramReader, {*plan.dramRelayCore}, B(plan.groups[0][0]).chipId,
                                         firstIn.tileSize, formatOf(firstIn));
      } else if (hasDram) {
        if (outs == 1) {
          plan.directDramReader = plan.groupStreams[0][0];
        } else {
          std::vector<std::pair<uint32_t, uint32_t>> cores;
          for (const auto& g : plan.groups)
            for (uint32_t b : g) cores.push_back({B(b).core.r, B(b).core.c});
          plan.dramReader = newExtraStream(pi, StreamRole::DramReader, cores, B(plan.groups[0][0]).chipId,
                                           firstIn.tileSize, formatOf(firstIn));
        }
      }
    } else if (!plan.chained) {  // a chained write is the last relay's (ethernet.cpp)
      if (plan.directDramWrite) {
        plan.dramWriter = laneStream(plan.chunks.front().buf, pi);
      } else {
        std::vector<std::pair<uint32_t, uint32_t>> cores;
        for (const Chunk& c : plan.chunks) cores.push_back({B(c.buf).core.r, B(c.buf).core.c});
        plan.dramWriter = newExtraStream(pi, StreamRole::DramWriter, cores, firstIn.chipId, firstIn.tileSize,
                                         formatOf(firstIn));
      }
    }
  }
  return diags_.errorCount() == errors;
}

// ---------------------------------------------------------------------------
// Transfers.
// ---------------------------------------------------------------------------
// Beyond this many the transfer list grows as it is built (the unroll
// limit allows millions; most epochs need thousands).
constexpr uint64_t kMaxReservedTransfers = uint64_t{1} << 18;

bool Builder::generate() {
  dramReaders_.assign(doc_.buffers.size(), {});
  std::vector<std::vector<size_t>> byComponent(componentRounds_.size());
  for (size_t pi = 0; pi < plans_.size(); ++pi)
    if (!plans_[pi].dropped) byComponent[static_cast<size_t>(plans_[pi].component)].push_back(pi);
  // Room for every transfer up front (at most one per chunk and pass; forks
  // share): growing the vector moved them all, a tenth of a large epoch.
  uint64_t expected = 0;
  for (size_t pi = 0; pi < plans_.size(); ++pi)
    if (!plans_[pi].dropped)
      expected = satAdd(expected, satMul(satMul(plans_[pi].ppr, plans_[pi].chunks.size()),
                                         componentRounds_[static_cast<size_t>(plans_[pi].component)]));
  transfers_.reserve(static_cast<size_t>(std::min<uint64_t>(expected, kMaxReservedTransfers)));
  for (size_t k = 0; k < byComponent.size(); ++k) {
    const auto& comp = byComponent[k];
    uint64_t rounds = componentRounds_[k];
    // Bound the unrolled size before building anything.
    uint64_t perRound = 0;
    for (size_t pi : comp) perRound = satAdd(perRound, satMul(plans_[pi].ppr, plans_[pi].chunks.size()));
    if (rounds != 0 && perRound > opts_.maxUnrolledTransfers / rounds) {
      const Pipe& p = P(comp.front());
      pipeError("phase-limit", p,
                std::to_string(rounds) + " rounds of " + std::to_string(perRound) +
                    " transfers exceed the unroll limit of " + std::to_string(opts_.maxUnrolledTransfers) +
                    " (the rounds do not repeat with a shorter cycle)");
      return false;
    }
    for (size_t pi : comp) {
      const Plan& plan = plans_[pi];
      auto setComponent = [&](int s) {
        if (s >= 0) streams_[static_cast<size_t>(s)].component = static_cast<int>(k);
      };
      for (const Chunk& c : plan.chunks) {
        if (info_[c.buf].isPacker) setComponent(laneStream(c.buf, pi));
        for (int s : relayStreams(c.path)) setComponent(s);
      }
      for (const auto& g : plan.groupStreams)
        for (int s : g) setComponent(s);
      setComponent(plan.dramReader);
      setComponent(plan.dramWriter);
    }
    for (uint64_t round = 0; round < rounds; ++round) {
      std::map<std::pair<size_t, uint64_t>, size_t> merged; // (lane, emission) -> transfer
      // A relay reading DRAM for several plans pops the slot once a round:
      // (relay stream, DRAM buffer) -> its transfer that ends the period so far.
      std::map<std::pair<int, int>, size_t> relayDone;
      // Packer transfers of this round by (lane, reader, chunk): they join
      // the lane's list in the lane's emission order once the round is built.
      std::map<std::tuple<size_t, size_t, size_t>, size_t> pending;
      std::set<size_t> packers;  // lanes
      for (size_t pi : comp) {
        const Plan& plan = plans_[pi];
        std::map<uint32_t, uint64_t> emission; // packer -> index of its chunk in this plan's round
        for (uint64_t r = 0; r < plan.ppr; ++r) {
          uint64_t pass = round * plan.ppr + r;
          size_t g = static_cast<size_t>(pass % plan.groups.size());
          for (size_t ci = 0; ci < plan.chunks.size(); ++ci) {
            const Chunk& ch = plan.chunks[ci];
            const BufInfo& in = info_[ch.buf];
            // Receivers of this chunk and their roles.
            std::vector<int> dest;
            std::vector<Dst> roles;
            Dst senderDst = Dst::Remote;
            int sender = -1;
            if (in.kind == BufKind::Dram) {
              std::vector<int> relays = relayStreams(ch.path);
              if (!relays.empty()) {  // the chain's first relay reads DRAM (ethernet.cpp)
                sender = relays.front();
                relays.erase(relays.begin());
                for (int s : plan.groupStreams[g]) dest.push_back(s), roles.push_back(Dst::Local);
              } else {
                sender = plan.directDramReader >= 0 ? plan.directDramReader : plan.dramReader;
                if (plan.directDramReader >= 0) senderDst = Dst::Local;
                else
                  for (int s : plan.groupStreams[g]) dest.push_back(s), roles.push_back(Dst::Local);
              }
              Transfer t;
              t.sender = sender;
              t.plan = pi;
              t.tiles = ch.tiles;
              t.src = Src::Dram;
              t.dramIn = static_cast<int>(ch.buf);
              t.periodTiles = in.period;
              t.offset = ch.offset;
              t.done = (in.popped || in.ramStreamed) && r + 1 == plan.ppr && plan.lastChunkOf.at(ch.buf) == ci;
              t.dst = senderDst;
              t.dest = dest;
              t.destRole = roles;
              t.destPlan.assign(dest.size(), pi);
              t.relays = std::move(relays);
              size_t id = transfers_.size();
              if (t.done && ch.path != 0) {
                auto [it, fresh] = relayDone.emplace(std::pair{sender, t.dramIn}, id);
                if (!fresh) transfers_[std::exchange(it->second, id)].done = false;
              }
              transfers_.push_back(std::move(t));
              addItem(sender, id);
              for (int s : dest) addItem(s, id);
              if (in.popped) {
                auto& readers = dramReaders_[ch.buf];
                if (std::find(readers.begin(), readers.end(), sender) == readers.end()) readers.push_back(sender);
              }
              continue;
            }
            // A packer.
            const size_t lane = laneOf_.at({ch.buf, pi});
            sender = laneStream_[lane];
            if (ch.path != 0) {
              // Through relays: the last writes DRAM, or sends to the outputs.
              if (!plan.dramOut)
                for (int s : plan.groupStreams[g]) dest.push_back(s), roles.push_back(Dst::Local);
            } else if (plan.dramOut) {
              if (plan.dramWriter == sender) senderDst = Dst::DramOut;
              else dest.push_back(plan.dramWriter), roles.push_back(Dst::DramOut);
            } else {
              for (int s : plan.groupStreams[g]) dest.push_back(s), roles.push_back(Dst::Local);
            }
            uint64_t j = emission[ch.buf]++;
            const auto& readers = laneReaders_[lane];
            size_t reader = packerMerged_[lane] ? 0 : static_cast<size_t>(std::find(readers.begin(), readers.end(), pi) - readers.begin());
            if (packerMerged_[lane]) {
              auto it = merged.find({lane, j});
              if (it != merged.end()) {
                Transfer& t = transfers_[it->second];
                for (size_t d = 0; d < dest.size(); ++d) {
                  t.dest.push_back(dest[d]);
                  t.destRole.push_back(roles[d]);
                  t.destPlan.push_back(pi);
                  addItem(dest[d], it->second);
                }
                continue;
              }
            }
            Transfer t;
            t.sender = sender;
            t.plan = pi;
            t.tiles = ch.tiles;
            t.src = Src::Packer;
            if (packerWindowed_[lane]) {
              t.periodTiles = in.period;
              t.offset = ch.offset;
            }
            t.dst = senderDst;
            if (senderDst == Dst::DramOut) t.dramOut = static_cast<int>(plan.groups[0][0]);
            t.dest = dest;
            t.destRole = roles;
            t.destPlan.assign(dest.size(), pi);
            t.relays = relayStreams(ch.path);
            if (!t.relays.empty() && plan.dramOut) t.relayDramOut = static_cast<int>(plan.groups[0][0]);
            size_t id = transfers_.size();
            transfers_.push_back(std::move(t));
            pending[{lane, reader, j}] = id;
            packers.insert(lane);
            for (int s : dest) addItem(s, id);
            if (packerMerged_[lane]) merged[{lane, j}] = id;
          }
        }
      }
      for (size_t b : packers) {
        const auto& order = packerOrder_[b];
        for (size_t e = 0; e < order.size(); ++e) {
          auto it = pending.find({b, order[e].first, order[e].second});
          if (it == pending.end()) continue; // cannot happen: every reader reads its chunks each round
          Transfer& t = transfers_[it->second];
          if (packerWindowed_[b]) {
            t.done = e + 1 == order.size();
            t.freedBefore = e == 0 ? 0 : packerFreed_[b][e - 1];
            t.freed = packerFreed_[b][e];
          }
          addItem(laneStream_[b], it->second);
        }
      }
    }
  }
  return true;
}

// Consecutive transfers with the same participants, adjacent in every
// participant's list and contiguous in their source, become one.
void Builder::mergeTransfers() {
  for (size_t ti = 0; ti < transfers_.size(); ++ti) {
    Transfer& t = transfers_[ti];
    if (t.absorbed) continue;
    for (;;) {
      size_t next = SIZE_MAX;
      bool ok = true;
      for (auto [s, p] : t.pos) {
        const auto& items = streams_[static_cast<size_t>(s)].items;
        size_t idx = p + 1 + t.absorbedCount;
        if (idx >= items.size()) {
          ok = false;
          break;
        }
        if (next == SIZE_MAX) next = items[idx];
        else if (next != items[idx]) ok = false;
      }
      if (!ok || next == SIZE_MAX || next == ti) break;
      Transfer& u = transfers_[next];
      if (u.absorbed || u.pos.size() != t.pos.size() || u.sender != t.sender || u.plan != t.plan || u.src != t.src ||
          u.dst != t.dst || u.dramIn != t.dramIn || u.dramOut != t.dramOut || u.dest != t.dest ||
          u.destRole != t.destRole || u.destPlan != t.destPlan || u.periodTiles != t.periodTiles ||
          u.relays != t.relays || u.relayDramOut != t.relayDramOut)
        break;
      if (t.periodTiles != 0 && t.done) break;
      if (t.src == Src::Packer && t.freed != t.freedBefore) break; // would need a larger window
      if (t.tiles + u.tiles > 0xFFFFFFFFull) break;
      bool contiguous = t.chunkOffsets.empty() && u.offset == t.offset + t.tiles;
      if (t.periodTiles != 0 && !contiguous) {
        // A chunk list: same chunk size, one offset per chunk.
        uint64_t chunk = t.chunkOffsets.empty() ? t.tiles : t.chunkTiles;
        if (!opts_.chunkLists || u.tiles != chunk) break;
        if (t.chunkOffsets.empty()) {
          t.chunkOffsets.push_back(t.offset);
          t.chunkTiles = chunk;
        }
        t.chunkOffsets.push_back(u.offset);
      }
      t.tiles += u.tiles;
      t.done = u.done;
      t.freed = u.freed;
      u.absorbed = true;
      t.absorbedCount += 1 + u.absorbedCount; // u may have absorbed its own successors already
    }
  }
}

// ---------------------------------------------------------------------------
// Phases per stream.
// ---------------------------------------------------------------------------
bool samePhase(const blob::StreamPhase& a, const blob::StreamPhase& b) {
  return a.numMsgs == b.numMsgs && a.pipeId == b.pipeId && a.sourceEndpoint == b.sourceEndpoint &&
         a.remoteSource == b.remoteSource && a.dramInput == b.dramInput && a.localReceiver == b.localReceiver &&
         a.remoteReceiver == b.remoteReceiver && a.dramOutput == b.dramOutput && a.src == b.src && a.dest == b.dest &&
         a.dramBufNocAddr == b.dramBufNocAddr && a.srcPeriodTiles == b.srcPeriodTiles &&
         a.srcTileOffset == b.srcTileOffset && a.srcPeriodDone == b.srcPeriodDone &&
         a.srcFreedTiles == b.srcFreedTiles && a.srcChunkOffsets == b.srcChunkOffsets &&
         a.srcChunkTiles == b.srcChunkTiles && a.dramPadding == b.dramPadding &&
         a.paddingValue == b.paddingValue && a.dramRam == b.dramRam &&
         a.incomingDataNoc == b.incomingDataNoc && a.outgoingDataNoc == b.outgoingDataNoc && a.vc == b.vc &&
         a.intermediate == b.intermediate;
}

bool Builder::emitPhases(Generated& out) {
  size_t errors = diags_.errorCount();
  std::vector<std::vector<blob::StreamPhase>> phases(streams_.size());
  std::vector<std::vector<int>> phaseDram(streams_.size()); // DRAM buffer of each phase, -1 for none (or padding)
  std::vector<uint64_t> iters(streams_.size(), 1);
  for (size_t si = 0; si < streams_.size(); ++si) {
    StreamB& s = streams_[si];
    auto& list = phases[si];
    for (size_t ti : s.items) {
      const Transfer& t = transfers_[ti];
      if (t.absorbed) continue;
      const Pipe& p = P(t.plan);
      blob::StreamPhase ph;
      int dramBuf = -1;
      ph.numMsgs = static_cast<uint32_t>(t.tiles);
      ph.pipeId = p.id;
      // A chain's sender feeds the first relay through that relay's pipe.
      const Pipe& hop = t.relays.empty() ? p : pipeWriting(static_cast<uint32_t>(streams_[static_cast<size_t>(t.relays.front())].buf));
      if (s.role == StreamRole::Relay && t.sender != static_cast<int>(si)) {
        dramBuf = emitRelayPhase(t, si, ph);
      } else if (t.sender == static_cast<int>(si)) {
        ph.pipeId = hop.id;
        if (t.src == Src::Packer) {
          ph.sourceEndpoint = true;
          if (t.periodTiles) ph.srcFreedTiles = static_cast<uint32_t>(t.freed);
        } else {
          ph.dramInput = true;
          const Buffer& d = B(static_cast<size_t>(t.dramIn));
          const BufInfo& din = info_[static_cast<size_t>(t.dramIn)];
          ph.dramBufNocAddr = dramAddr(d, s.name.chip);
          ph.dramRam = din.ramLike || din.padding;
          dramBuf = t.dramIn;
          if (din.padding) {
            ph.dramPadding = true;
            ph.paddingValue = static_cast<float>(d.paddingValue.value_or(0.0));
          }
        }
        ph.srcPeriodTiles = static_cast<uint32_t>(t.periodTiles);
        ph.srcTileOffset = static_cast<uint32_t>(t.offset);
        ph.srcPeriodDone = t.done;
        for (uint64_t o : t.chunkOffsets) ph.srcChunkOffsets.push_back(static_cast<uint32_t>(o));
        ph.srcChunkTiles = static_cast<uint32_t>(t.chunkTiles);
        if (t.dst == Dst::Local) ph.localReceiver = true;
        else if (t.dst == Dst::Remote) {
          ph.remoteReceiver = true;
          if (!t.relays.empty()) ph.dest.push_back(streams_[static_cast<size_t>(t.relays.front())].name);
          else
            for (int d : t.dest) ph.dest.push_back(streams_[static_cast<size_t>(d)].name);
        } else {
          ph.dramOutput = true;
          const Buffer& d = B(static_cast<size_t>(t.dramOut));
          ph.dramBufNocAddr = dramAddr(d, s.name.chip);
          ph.dramRam = info_[static_cast<size_t>(t.dramOut)].ramLike;
          dramBuf = t.dramOut;
        }
        ph.outgoingDataNoc = hop.outgoingNocId;
        ph.vc = hop.outgoingVc;
        ph.incomingDataNoc = hop.incomingNocId;
      } else {
        ph.remoteSource = true;
        ph.src.push_back(streams_[static_cast<size_t>(t.relays.empty() ? t.sender : t.relays.back())].name);
        size_t k = 0;
        while (k < t.dest.size() && t.dest[k] != static_cast<int>(si)) ++k;
        const Pipe& rp = k < t.destPlan.size() ? P(t.destPlan[k]) : p;
        ph.pipeId = rp.id;
        if (k < t.dest.size() && t.destRole[k] == Dst::DramOut) {
          // A writer stream: its own pipe's queue (a fork's shared transfer serves several).
          dramBuf = static_cast<int>(plans_[t.destPlan[k]].groups[0][0]);
          ph.dramOutput = true;
          const Buffer& d = B(static_cast<size_t>(dramBuf));
          ph.dramBufNocAddr = dramAddr(d, s.name.chip);
          ph.dramRam = info_[static_cast<size_t>(dramBuf)].ramLike;
          ph.outgoingDataNoc = rp.outgoingNocId;
          ph.vc = rp.outgoingVc;
        } else {
          ph.localReceiver = true;
        }
        ph.incomingDataNoc = rp.incomingNocId;
      }
      // Tiles to or from another chip cross this ethernet core's link.
      for (const blob::StreamName& n : ph.dest) ph.ethSender |= n.chip != s.name.chip;
      for (const blob::StreamName& n : ph.src) ph.ethReceiver |= n.chip != s.name.chip;
      list.push_back(std::move(ph));
      phaseDram[si].push_back(dramBuf);
    }
    if (s.role == StreamRole::Operand && list.empty()) {
      const Buffer& b = B(static_cast<size_t>(s.buf));
      const BufInfo& in = info_[static_cast<size_t>(s.buf)];
      if (!in.isIntermediate && in.readerPlans.empty() && in.writerPipe < 0)
        diags_.warning("unconnected-buffer", locOf(b.pos),
                       bufName(b) + " ('" + b.mdOpName + "'): no pipe " + (in.isPacker ? "reads" : "feeds") +
                           " this operand buffer");
      blob::StreamPhase ph;
      ph.intermediate = true;
      ph.sourceEndpoint = true;
      ph.localReceiver = true;
      ph.numMsgs = b.epochTiles;
      if (b.bufferTypeText == "gradient_op" && (b.dramBufFlag || b.writeDramBufFlag)) {
        ph.numMsgs = b.sizeTiles; // the whole block is loaded and stored
        ph.dramBufNocAddr = dramAddr(b);
        ph.dramRam = true;
      }
      list.push_back(std::move(ph));
    }
    // Whole-list repeats: the shortest period of the list.
    size_t L = list.size();
    size_t best = L;
    for (size_t k = 1; k < L; ++k) {
      if (L % k) continue;
      bool periodic = true;
      for (size_t i = k; i < L && periodic; ++i) periodic = samePhase(list[i], list[i - k]);
      if (periodic) {
        best = k;
        break;
      }
    }
    iters[si] = satMul(L / std::max<size_t>(best, 1),
                       s.component >= 0 ? componentMultiplier_[static_cast<size_t>(s.component)] : 1);
    list.resize(best);
    phaseDram[si].resize(std::min(phaseDram[si].size(), best));
    if (iters[si] > 0xFFFFFFFFull) {
      diags_.error("phase-limit", s.loc, "stream " + std::to_string(s.name.streamId) + " on core " + coreText(s.r, s.c) +
                                             " repeats its phases " + std::to_string(iters[si]) +
                                             " times, more than num_iters_in_epoch can hold");
    }
  }
  if (diags_.errorCount() != errors) return false;
  // Extra streams: ring sizes from their phases.
  for (size_t si = 0; si < streams_.size(); ++si) {
    StreamB& s = streams_[si];
    if (s.role == StreamRole::Operand || s.role == StreamRole::Fork || s.role == StreamRole::Relay) continue;
    uint64_t most = 1;
    for (const auto& ph : phases[si]) most = std::max<uint64_t>(most, ph.numMsgs);
    s.ringTiles = std::min<uint64_t>(most, std::max<uint32_t>(1, opts_.extraStreamRingTiles));
  }
  if (!allocateL1(out)) return false;
  // Assemble, with the DRAM side of every stream.
  std::map<blob::StreamName, size_t> order;
  for (size_t si = 0; si < streams_.size(); ++si) order[streams_[si].name] = si;
  for (auto& [name, si] : order) {
    StreamB& s = streams_[si];
    blob::Stream stream;
    stream.name = name;
    std::vector<int> dramBufs; // first-use order
    for (size_t k = 0; k < phases[si].size(); ++k) {
      blob::StreamPhase& ph = phases[si][k];
      ph.phaseId = k;
      ph.msgSize = s.msgSize;
      ph.bufAddr = s.bufAddr;
      ph.bufSize = s.bufSize;
      ph.numItersInEpoch = static_cast<uint32_t>(iters[si]);
      ph.bufId = s.buf >= 0 ? B(static_cast<size_t>(s.buf)).uniqid : 0;
      ph.dataFormat = s.dataFormat;
      // Untilized data: the packer's operand (row stride) and the DRAM writes
      // (row placement) need the block and tensor shape; messages in between
      // are plain bytes.
      const Buffer* u = nullptr;
      if (ph.sourceEndpoint && s.buf >= 0 && B(static_cast<size_t>(s.buf)).untilizedOutput) u = &B(static_cast<size_t>(s.buf));
      if (ph.dramOutput && k < phaseDram[si].size() && phaseDram[si][k] >= 0 &&
          B(static_cast<size_t>(phaseDram[si][k])).untilizedOutput)
        u = &B(static_cast<size_t>(phaseDram[si][k]));
      if (u) {
        ph.untilizeRDim = u->untilizedOutputRDim;
        ph.untilizeCDim = u->untilizedOutputCDim;
        ph.untilizeFullRDim = u->untilizedOutputFullRDim;
        ph.untilizeFullCDim = u->untilizedOutputFullCDim;
        ph.untilizeZDim = std::max<uint32_t>(1, u->untilizedOutputZDim);
        // BUDA's untilized_output_tile_dim_r/c (tile_dim; absent: 32x32).
        for (const pipe::ExtraField& e : u->extra) {
          const auto v = parseUInt64(e.value);
          if (!v || *v == 0 || *v > 32) continue;
          if (e.key == "untilized_output_tile_dim_r") ph.untilizeTileR = static_cast<uint32_t>(*v);
          if (e.key == "untilized_output_tile_dim_c") ph.untilizeTileC = static_cast<uint32_t>(*v);
        }
      }
    }
    // DRAM buffers this stream touches, in first-use order.
    std::vector<size_t> phaseBuf(phases[si].size(), SIZE_MAX);
    for (size_t k = 0; k < phaseDram[si].size(); ++k) {
      int buf = phaseDram[si][k];
      if (buf < 0) continue;
      phaseBuf[k] = static_cast<size_t>(buf);
      if (std::find(dramBufs.begin(), dramBufs.end(), buf) == dramBufs.end()) dramBufs.push_back(buf);
    }
    for (size_t idx = 0; idx < dramBufs.size(); ++idx) {
      const Buffer& d = B(static_cast<size_t>(dramBufs[idx]));
      const BufInfo& in = info_[static_cast<size_t>(dramBufs[idx])];
      blob::DramIo io;
      io.name = name;
      io.index = static_cast<uint32_t>(idx);
      io.dramBufNocAddr = dramAddr(d, name.chip);
      io.dramBufSizeQSlots = in.padding ? 1 : std::max<uint32_t>(1, d.qSlots);
      io.dramBufSizeTiles = in.padding ? 1 : static_cast<uint32_t>(in.period);
      uint64_t bytes = satMul(satMul(io.dramBufSizeQSlots, in.period), d.tileSize);
      io.dramBufSizeBytes = static_cast<uint32_t>(std::min<uint64_t>(bytes, 0xFFFFFFFFull));
      io.ram = d.dramRamFlag || in.padding;
      io.msgSize = d.tileSize;
      if (in.padding) io.extra.push_back({"dram_padding", "true"});
      uint64_t g = 0, total = 0;
      for (size_t k = 0; k < phases[si].size(); ++k)
        if (phaseBuf[k] == static_cast<size_t>(dramBufs[idx])) {
          // A transfer is contiguous in DRAM only within one chunk of a chunk list.
          const blob::StreamPhase& ph = phases[si][k];
          g = gcd64(g, ph.srcChunkOffsets.empty() ? ph.numMsgs : ph.srcChunkTiles);
          total = satAdd(total, phases[si][k].numMsgs);
          io.input |= phases[si][k].dramInput;
          io.output |= phases[si][k].dramOutput;
        }
      total = satMul(total, iters[si]);
      io.numMsgs = static_cast<uint32_t>(std::min<uint64_t>(total, 0xFFFFFFFFull));
      uint64_t ring = std::max<uint64_t>(1, s.ringTiles);
      uint64_t chunk = g == 0 ? 1 : g;
      if (chunk > ring) {
        uint64_t best = 1;
        for (uint64_t f = 1; f * f <= chunk; ++f)
          if (chunk % f == 0) {
            if (f <= ring) best = std::max(best, f);
            if (chunk / f <= ring) best = std::max(best, chunk / f);
          }
        chunk = best;
      }
      io.chunkTiles = static_cast<uint32_t>(chunk);
      const auto& readers = dramReaders_[static_cast<size_t>(dramBufs[idx])];
      auto it = std::find(readers.begin(), readers.end(), static_cast<int>(si));
      if (io.input && it != readers.end()) {
        io.readerIndex = static_cast<uint32_t>(it - readers.begin());
        io.totalReaders = static_cast<uint32_t>(readers.size());
      }
      for (size_t k = 0; k < phases[si].size(); ++k)
        if (phaseBuf[k] == static_cast<size_t>(dramBufs[idx])) {
          blob::StreamPhase& ph = phases[si][k];
          ph.dramBufSizeQSlots = io.dramBufSizeQSlots;
          ph.dramBufSizeTiles = io.dramBufSizeTiles;
          ph.dramChunkTiles = io.chunkTiles;
          ph.dramReaderIndex = io.readerIndex;
          ph.dramTotalReaders = io.totalReaders;
        }
      out.blob.dramBlob.push_back(std::move(io));
    }
    // A gradient accumulator's ram cell: loaded before, stored after the epoch.
    if (s.role == StreamRole::Operand && phases[si].size() == 1 && phases[si][0].intermediate &&
        phases[si][0].dramBufNocAddr != 0) {
      const Buffer& b = B(static_cast<size_t>(s.buf));
      blob::DramIo io;
      io.name = name;
      io.dramBufNocAddr = phases[si][0].dramBufNocAddr;
      io.dramBufSizeQSlots = std::max<uint32_t>(1, b.qSlots);
      io.dramBufSizeTiles = b.sizeTiles;
      io.dramBufSizeBytes =
          static_cast<uint32_t>(std::min<uint64_t>(satMul(satMul(io.dramBufSizeQSlots, b.sizeTiles), b.tileSize),
                                                   0xFFFFFFFFull));
      io.chunkTiles = b.sizeTiles;
      io.input = io.output = io.ram = true;
      io.msgSize = b.tileSize;
      io.numMsgs = b.sizeTiles;
      phases[si][0].dramBufSizeQSlots = io.dramBufSizeQSlots;
      phases[si][0].dramBufSizeTiles = io.dramBufSizeTiles;
      phases[si][0].dramChunkTiles = io.chunkTiles;
      out.blob.dramBlob.push_back(std::move(io));
    }
    stream.phases = std::move(phases[si]);
    out.comments[name] = s.comment;
    out.blob.streams.push_back(std::move(stream));
  }
  return true;
}

// ---------------------------------------------------------------------------
// L1: every ring, from the top of L1 down to kDataBufferBase.
// ---------------------------------------------------------------------------
bool Builder::allocateL1(Generated& out) {
  size_t errors = diags_.errorCount();
  const uint64_t workerTop = soc_.workerL1Size ? soc_.workerL1Size : archParams(soc_.arch).defaultWorkerL1Size;
  std::map<CoreKey, std::vector<size_t>> byCore;
  for (size_t si = 0; si < streams_.size(); ++si)
    if (streams_[si].role != StreamRole::Fork)  // fork streams use their packer's buffer
      byCore[{streams_[si].name.chip, streams_[si].r, streams_[si].c, streams_[si].eth}].push_back(si);
  for (auto& [core, list] : byCore) {
    // Ethernet cores: their own L1 size and data region (device_contract.h).
    const uint64_t top = core.eth ? soc_.ethL1Size : workerTop;
    const uint64_t base = core.eth ? contract::kEthDataBufferBase : contract::kDataBufferBase;
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      const StreamB &x = streams_[a], &y = streams_[b];
      bool xo = x.role == StreamRole::Operand, yo = y.role == StreamRole::Operand;
      if (xo != yo) return xo;
      return x.name.streamId < y.name.streamId;
    });
    uint64_t addr = top;
    uint64_t need = 0;
    int failed = -1;
    for (size_t si : list) {
      StreamB& s = streams_[si];
      uint64_t bytes = satMul(s.ringTiles, s.msgSize);
      need = satAdd(need, bytes);
      if (failed >= 0) continue;
      if (bytes > addr || ((addr - bytes) & ~uint64_t{31}) < base) {
        failed = static_cast<int>(si);
        continue;
      }
      addr = (addr - bytes) & ~uint64_t{31};
      s.bufAddr = static_cast<uint32_t>(addr);
      s.bufSize = static_cast<uint32_t>(bytes);
    }
    if (failed >= 0) {
      const StreamB& f = streams_[static_cast<size_t>(failed)];
      char range[64];
      std::snprintf(range, sizeof range, "0x%llx-0x%llx", static_cast<unsigned long long>(base),
                    static_cast<unsigned long long>(top));
      const std::string where = core.eth ? "chip " + std::to_string(core.chip) + " ethernet core (channel " +
                                               std::to_string(f.ethChan) + ", NOC y " + std::to_string(core.r) +
                                               ", x " + std::to_string(core.c) + ")"
                                         : "core " + coreText(core.r, core.c);
      auto d = diags_.error("out-of-l1", f.loc,
                            where + " is out of L1: its buffers need " + std::to_string(need) + " bytes, " +
                                std::to_string(top > base ? top - base : 0) + " are available (" + range + "); " +
                                f.what + " does not fit");
      for (size_t si : list) {
        const StreamB& s = streams_[si];
        d.note(s.loc, s.what + ": " + std::to_string(satMul(s.ringTiles, s.msgSize)) + " bytes (" +
                          std::to_string(s.ringTiles) + " tiles of " + std::to_string(s.msgSize) + ")");
      }
      continue;
    }
    for (size_t si : list) {
      const StreamB& s = streams_[si];
      out.l1.push_back({s.name, s.bufAddr, s.bufSize, s.what});
    }
  }
  for (StreamB& s : streams_)
    if (s.role == StreamRole::Fork) {
      const StreamB& owner = streams_[static_cast<size_t>(info_[static_cast<size_t>(s.buf)].stream)];
      s.bufAddr = owner.bufAddr;
      s.bufSize = owner.bufSize;
      s.ringTiles = owner.ringTiles;
    }
  return diags_.errorCount() == errors;
}

std::optional<Generated> Builder::run() {
  if (soc_.workerRows == 0) {
    diags_.error("pipegen-buffer", {}, "device '" + soc_.name + "' has no worker cores");
    return std::nullopt;
  }
  if (!classifyBuffers() || !placePadding() || !makePlans() || !foldEthernetChains() || !foldRelays() ||
      !countPasses() || !makeComponents() || !placeRelayStreams() || !placeEndpoints() || !generate() ||
      !orderRelayItems())
    return std::nullopt;
  mergeTransfers();
  Generated out;
  out.epoch = doc_.epoch;
  out.graphName = doc_.graphName;
  if (!emitPhases(out)) return std::nullopt;
  return out;
}

} // namespace detail

std::optional<Generated> generateBlob(const PipegenYaml& doc, const SocDescriptor& soc, DiagnosticEngine& diags,
                                      const GenerateOptions& options) {
  return detail::Builder(doc, soc, diags, options).run();
}

} // namespace tessera::pipegen
