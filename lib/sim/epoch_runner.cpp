#include "sim/epoch_runner.hpp"

#include "formats/formats.hpp"
#include "device/device_contract.h"
#include "sim/binaries_cache.hpp"
#include "sim/cluster.hpp"
#include "sim/firmware.hpp"
#include "sim/noc.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tessera::sim {

namespace {

// Loads every core of `run` onto `chip` (begun) and works out the options of
// its run: nullopt when ready, else the load failure as a result.
std::optional<ChipRunResult> prepareEpoch(Chip& chip, const EpochRun& run, ChipRunOptions& options,
                                          uint64_t& binariesCycles, uint64_t& binariesBytes) {
  auto loadFailure = [&](const EpochCore& ec, const std::string& message) {
    ChipRunResult r;
    r.stop = ChipStop::Fault;
    r.faultCategory = "load";
    const TensixCore* core = chip.findCore(ec.noc);
    r.faultCore = core ? core->name() : toString(ec.noc);
    r.message = message;
    return r;
  };
  options = run.options;
  std::optional<BinariesLayout> layout;
  std::optional<contract::EpochCommand> first;  // the first core's command: the epoch all must run
  std::string firstCore;
  std::vector<uint64_t> channelBusy;            // binaries reads queued on each channel
  binariesBytes = 0;
  binariesCycles = 0;
  for (const EpochCore& ec : run.cores) {
    TensixCore* core = chip.core(ec.noc);
    if (!core) return loadFailure(ec, "core " + toString(ec.noc) + ": not a functional worker of " + chip.soc().name);
    if (!ec.name.empty()) core->setName(ec.name);
    else if (!chip.isEthernetCore(ec.noc)) core->setName(toString(ec.noc));  // an ethernet core keeps "eth<k>@x-y"
    std::string error;
    if (ec.fromEpochCommand) {
      if (!layout) {
        Expected<BinariesLayout> made = BinariesLayout::forSoc(chip.soc());
        if (!made) return loadFailure(ec, made.error());
        layout = std::move(*made);
      }
      const std::optional<CoreBinariesArea> area = layout->area(ec.noc);
      if (!area) return loadFailure(ec, "core '" + core->name() + "' has no epoch command queue");
      const std::optional<contract::EpochCommand> cmd = loadFromEpochCommand(*core, chip.dram(), *area, error);
      if (!cmd) return loadFailure(ec, error);
      if (!first) {
        first = cmd;
        firstCore = core->name();
      } else if (cmd->epochId != first->epochId || cmd->inputCount != first->inputCount) {
        return loadFailure(ec, "the epoch commands disagree: core '" + core->name() + "' got epoch " +
                                   std::to_string(cmd->epochId) + " with " + std::to_string(cmd->inputCount) +
                                   " inputs, core '" + firstCore + "' epoch " + std::to_string(first->epochId) +
                                   " with " + std::to_string(first->inputCount));
      }
      // The image's DRAM read, queued behind the other cores' on its channel.
      const DataMovementModel& m = chip.model();
      channelBusy.resize(chip.dram().channelCount(), 0);
      uint64_t& busy = channelBusy[cmd->binariesChannel % channelBusy.size()];
      busy += dramTransferCycles(m.dram, cmd->binariesBytes);
      const CoreCoord from = chip.soc().dramCore(static_cast<int>(cmd->binariesChannel));
      const uint32_t hops = from.x < 0 ? 0 : nocHops(0, from, ec.noc, chip.soc().gridX, chip.soc().gridY);
      const uint64_t arrival = busy + m.dram.latency + nocLatencyCycles(m.noc, hops);
      options.startCycles[ec.noc] = arrival;
      binariesCycles = std::max(binariesCycles, arrival);
      binariesBytes += cmd->binariesBytes;
      continue;
    }
    if (!ec.kernelDir.empty() && !chip.loadKernelDir(ec.noc, ec.kernelDir, error)) return loadFailure(ec, error);
    if (!ec.blobHexPath.empty()) {
      std::ifstream in(ec.blobHexPath);
      if (!in) return loadFailure(ec, "core '" + core->name() + "': '" + ec.blobHexPath + "': cannot open the file");
      std::stringstream text;
      text << in.rdbuf();
      if (!chip.loadBlobHex(ec.noc, text.str(), error))
        return loadFailure(ec, "'" + ec.blobHexPath + "': " + error);
    } else if (!ec.blobWords.empty() && !chip.loadBlobWords(ec.noc, ec.blobWords, error)) {
      return loadFailure(ec, error);
    }
  }
  // The runtime's part of padding (as BUDA's runtime does): every padding
  // tile a blob reads (dram_padding phases) is written into DRAM before the
  // epoch, with a one-slot ram header, from the phase's format and value.
  for (const EpochCore& ec : run.cores) {
    const TensixCore* core = chip.findCore(ec.noc);
    if (!core || !hasOverlayBlob(*core)) continue;
    std::string error;
    std::optional<blob::CoreBlob> b = readOverlayBlob(*core, error);
    if (!b) continue;  // the firmware reports it as bad-blob
    for (const blob::Stream& s : b->streams)
      for (const blob::StreamPhase& p : s.phases) {
        if (!p.dramPadding) continue;
        const std::optional<DramLocation> loc = decodeDramNocAddress(chip.soc(), p.dramBufNocAddr);
        const auto df = static_cast<DataFormat>(p.dataFormat);
        if (!loc || loc->host || p.dataFormat >= contract::kDataFormatCount || formats::tileBytes(df) > p.msgSize)
          return loadFailure(ec, "core '" + core->name() + "': stream " + std::to_string(s.name.streamId) +
                                     ": padding tile at dram_buf_noc_addr " + std::to_string(p.dramBufNocAddr) +
                                     " (format " + std::to_string(p.dataFormat) + ", msg_size " +
                                     std::to_string(p.msgSize) + ") cannot be written");
        std::vector<float> values(formats::kTileValues, p.paddingValue);
        std::vector<uint8_t> tile(p.msgSize, 0);
        formats::packTile(df, std::span<const float, formats::kTileValues>(values.data(), formats::kTileValues),
                          std::span<uint8_t>(tile.data(), formats::tileBytes(df)));
        QueueHeader h;
        h.slots = 1;
        if (!writeQueueHeader(chip.dram(), loc->channel, loc->address, h) ||
            !chip.dram().write(loc->channel, loc->address + kQueueHeaderBytes, tile))
          return loadFailure(ec, "core '" + core->name() + "': padding tile at channel " + std::to_string(loc->channel) +
                                     " is outside DRAM");
      }
  }
  if (first) {
    options.epoch.epochId = first->epochId;
    options.epoch.inputCount = first->inputCount;
  }
  return std::nullopt;
}

}  // namespace

ChipRunResult runEpoch(Chip& chip, const EpochRun& run) {
  chip.beginEpoch();
  ChipRunOptions options;
  uint64_t binariesCycles = 0, binariesBytes = 0;
  if (std::optional<ChipRunResult> failed = prepareEpoch(chip, run, options, binariesCycles, binariesBytes))
    return std::move(*failed);
  ChipRunResult result = chip.runEpoch(options);
  result.binariesCycles = binariesCycles;
  result.binariesReadBytes = binariesBytes;
  return result;
}

ClusterRunResult runClusterEpoch(Cluster& cluster, const std::map<ChipId, EpochRun>& runs, unsigned jobs) {
  cluster.beginEpoch();
  ClusterRunOptions options;
  options.jobs = jobs;
  for (const auto& [id, run] : runs)
    if (!cluster.descriptor().hasChip(id)) {
      ClusterRunResult r;
      r.stop = ChipStop::Fault;
      r.faultChip = id;
      r.faultCategory = "load";
      r.message = "chip " + std::to_string(id) + ": the cluster '" + cluster.descriptor().name + "' has no such chip";
      return r;
    }
  // Each process loads its own chips (all of them unless spread over ranks);
  // every process learns each chip's load failure and binaries figures.
  std::map<ChipId, std::pair<uint64_t, uint64_t>> binaries;  // cycles, bytes
  std::map<ChipId, std::vector<uint8_t>> loaded;
  for (const auto& [id, run] : runs) {
    if (!cluster.isLocal(id)) continue;
    ChipRunOptions& o = options.perChip[id];
    uint64_t cycles = 0, bytes = 0;
    std::optional<ChipRunResult> failed = prepareEpoch(cluster.chip(id), run, o, cycles, bytes);
    WireWriter w;
    w.u8(failed ? 1 : 0);
    if (failed) {
      failed->chip = id;
      writeChipResult(w, *failed);
    }
    w.u64(cycles);
    w.u64(bytes);
    loaded[id] = std::move(w.bytes);
    if (failed && !cluster.distributed()) break;  // one process: the first failure is the answer
  }
  if (cluster.transport()) shareByChip(*cluster.transport(), loaded);
  for (const auto& [id, bytes] : loaded) {
    WireReader in(bytes);
    if (in.u8()) {
      ChipRunResult failed = readChipResult(in);
      ClusterRunResult r;
      r.stop = ChipStop::Fault;
      r.faultChip = id;
      r.faultCategory = failed.faultCategory;
      r.faultCore = failed.faultCore;
      r.message = "chip " + std::to_string(id) + ": " + failed.message;
      r.chips.push_back(std::move(failed));
      return r;
    }
    const uint64_t cycles = in.u64();
    binaries[id] = {cycles, in.u64()};
  }
  if (!runs.empty()) options.defaults = runs.begin()->second.options;
  ClusterRunResult result = cluster.runEpoch(options);
  for (ChipRunResult& r : result.chips)
    if (auto it = binaries.find(r.chip); it != binaries.end()) {
      r.binariesCycles = it->second.first;
      r.binariesReadBytes = it->second.second;
    }
  return result;
}

bool writeQueueEntry(Dram& dram, const QueueBufferLoc& b, uint32_t slot, std::span<const uint8_t> entry) {
  return dram.write(b.channel, b.address + kQueueHeaderBytes + uint64_t{slot} * entry.size(), entry);
}

std::vector<uint8_t> readQueueEntry(const Dram& dram, const QueueBufferLoc& b, uint32_t slot, uint64_t entryBytes) {
  std::vector<uint8_t> out(entryBytes);
  if (!dram.read(b.channel, b.address + kQueueHeaderBytes + uint64_t{slot} * entryBytes, out)) out.clear();
  return out;
}

bool writeTensorEntry(Dram& dram, const std::vector<QueueBufferLoc>& buffers, uint32_t slot,
                      const formats::Tensor& tensor, int64_t w, const formats::Blocking& b, DataFormat df,
                      std::string& error) {
  if (static_cast<int64_t>(buffers.size()) != b.gridR * b.gridC) {
    error = std::to_string(buffers.size()) + " queue buffers for a grid of " + std::to_string(b.gridR * b.gridC) +
            " cores";
    return false;
  }
  const std::vector<std::vector<uint8_t>> cores = formats::tilize(tensor, w, b, df);
  for (size_t i = 0; i < cores.size(); ++i)
    if (!writeQueueEntry(dram, buffers[i], slot, cores[i])) {
      error = "queue buffer " + std::to_string(i) + " (channel " + std::to_string(buffers[i].channel) +
              "): slot " + std::to_string(slot) + " is outside the channel";
      return false;
    }
  return true;
}

bool readTensorEntry(const Dram& dram, const std::vector<QueueBufferLoc>& buffers, uint32_t slot,
                     const formats::Blocking& b, DataFormat df, formats::Tensor& into, int64_t w,
                     std::string& error) {
  if (static_cast<int64_t>(buffers.size()) != b.gridR * b.gridC) {
    error = std::to_string(buffers.size()) + " queue buffers for a grid of " + std::to_string(b.gridR * b.gridC) +
            " cores";
    return false;
  }
  const uint64_t entryBytes = static_cast<uint64_t>(b.tilesPerCore()) * formats::tileBytes(df, b.tile);
  std::vector<std::vector<uint8_t>> cores;
  for (size_t i = 0; i < buffers.size(); ++i) {
    cores.push_back(readQueueEntry(dram, buffers[i], slot, entryBytes));
    if (cores.back().size() != entryBytes) {
      error = "queue buffer " + std::to_string(i) + " (channel " + std::to_string(buffers[i].channel) +
              "): slot " + std::to_string(slot) + " is outside the channel";
      return false;
    }
  }
  formats::untilize(cores, b, df, into, w);
  return true;
}


bool readUntilizedEntry(const Dram& dram, const QueueBufferLoc& buffer, uint32_t slot, DataFormat df,
                        formats::Tensor& into, int64_t w, std::string& error, formats::TileShape shape) {
  constexpr size_t kDim = 32, kValues = formats::kTileValues;
  const uint32_t eb = untilizedDatumBytes(df);
  if (eb == 0 || into.r % 32 || into.c % 32) {
    error = "an untilized entry needs a non-block format and whole tiles";
    return false;
  }
  // DRAM holds the tiles' rows and columns only (tile_dim): rowTiles x shape.r
  // rows of colTiles x shape.c datums; `into` keeps the 32x32 register view.
  const int64_t rows = into.r / 32 * shape.r, cols = into.c / 32 * shape.c;
  const uint64_t rowBytes = static_cast<uint64_t>(cols) * eb;
  const uint64_t entryBytes = rowBytes * static_cast<uint64_t>(rows * into.z);
  const std::vector<uint8_t> bytes = readQueueEntry(dram, buffer, slot, entryBytes);
  if (bytes.size() != entryBytes) {
    error = "slot " + std::to_string(slot) + " is outside the channel";
    return false;
  }
  // Each 32x32 square is gathered back into tile layout (values after the
  // header, and after the 64-byte exponent section of formats that carry one,
  // face by face) and decoded by lib/formats, exactly as the packer wrote it.
  const size_t tileSize = tileSizeBytes(df);
  const size_t withExponents = formats::kTileHeaderBytes + kValues / formats::kBfpBlock + kValues * eb;
  const size_t offset = withExponents <= tileSize ? formats::kTileHeaderBytes + kValues / formats::kBfpBlock
                                                  : formats::kTileHeaderBytes;
  std::vector<uint8_t> tile(std::max(tileSize, formats::tileBytes(df)), 0);
  std::vector<float> values(kValues);
  for (int64_t z = 0; z < into.z; ++z)
    for (int64_t tr = 0; tr < into.r / 32; ++tr)
      for (int64_t tc = 0; tc < into.c / 32; ++tc) {
        std::fill(values.begin(), values.end(), 0.0f);
        formats::packTile(df, std::span<const float, kValues>(values.data(), kValues), tile);  // a valid header
        for (size_t v = 0; v < kValues; ++v) {
          const size_t face = v / 256, inFace = v % 256;
          const size_t rm = isRawFormat(df) ? v : ((face / 2) * 16 + inFace / 16) * kDim + (face % 2) * 16 + inFace % 16;
          if (rm / kDim >= shape.r || rm % kDim >= shape.c) {
            std::memset(&tile[offset + v * eb], 0, eb);  // outside the tile: zero
            continue;
          }
          const uint64_t at = (static_cast<uint64_t>(z * rows) + tr * shape.r + rm / kDim) * rowBytes +
                              (static_cast<uint64_t>(tc) * shape.c + rm % kDim) * eb;
          std::memcpy(&tile[offset + v * eb], &bytes[at], eb);
        }
        formats::unpackTile(df, tile, std::span<float, kValues>(values.data(), kValues));
        for (size_t i = 0; i < kValues; ++i)
          into.at(w, z, tr * 32 + static_cast<int64_t>(i / kDim), tc * 32 + static_cast<int64_t>(i % kDim)) = values[i];
      }
  return true;
}

}  // namespace tessera::sim
