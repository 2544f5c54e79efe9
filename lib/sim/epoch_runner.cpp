#include "sim/epoch_runner.hpp"

#include "formats/formats.hpp"

#include <fstream>
#include <sstream>

namespace tessera::sim {

ChipRunResult runEpoch(Chip& chip, const EpochRun& run) {
  chip.beginEpoch();
  auto loadFailure = [&](const EpochCore& ec, const std::string& message) {
    ChipRunResult r;
    r.stop = ChipStop::Fault;
    r.faultCategory = "load";
    const TensixCore* core = chip.findCore(ec.noc);
    r.faultCore = core ? core->name() : toString(ec.noc);
    r.message = message;
    return r;
  };
  for (const EpochCore& ec : run.cores) {
    TensixCore* core = chip.core(ec.noc);
    if (!core) return loadFailure(ec, "core " + toString(ec.noc) + ": not a functional worker of " + chip.soc().name);
    core->setName(ec.name.empty() ? toString(ec.noc) : ec.name);
    std::string error;
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
  return chip.runEpoch(run.options);
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
                      const formats::Tensor& tensor, int64_t w, const formats::Blocking& b, netlist::DataFormat df,
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
                     const formats::Blocking& b, netlist::DataFormat df, formats::Tensor& into, int64_t w,
                     std::string& error) {
  if (static_cast<int64_t>(buffers.size()) != b.gridR * b.gridC) {
    error = std::to_string(buffers.size()) + " queue buffers for a grid of " + std::to_string(b.gridR * b.gridC) +
            " cores";
    return false;
  }
  const uint64_t entryBytes = static_cast<uint64_t>(b.tilesPerCore()) * formats::tileBytes(df);
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

}  // namespace tessera::sim
