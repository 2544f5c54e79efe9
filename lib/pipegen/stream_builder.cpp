// pipegen's stream builder: the phases run() chains over a pipegen.yaml
// (stream_plan.cpp, stream_schedule.cpp, stream_emit.cpp, ethernet.cpp,
// pcie.cpp), the lookups they share, and generateBlob. The vocabulary is in
// stream_builder.hpp.
#include "pipegen/stream_builder.hpp"

#include "device/device_contract.h"
#include "formats/data_format.hpp"

#include <optional>

namespace tessera::pipegen {

using pipe::Buffer;
using pipe::BufferType;
using pipe::Pipe;
using pipe::PipegenYaml;

uint64_t dramNocAddress(int x, int y, uint64_t addr) {
  return ((static_cast<uint64_t>(y & 0x3F) << 6 | static_cast<uint64_t>(x & 0x3F)) << 32) | (addr & 0xFFFFFFFFull);
}

namespace detail {

std::optional<uint32_t> StreamBuilder::resolve(uint64_t id, uint64_t& offset) const {
  auto it = byId_.upper_bound(id);
  if (it == byId_.begin()) return std::nullopt;
  --it;
  offset = id - it->first;
  return it->second;
}

std::optional<blob::StreamName> StreamBuilder::nocName(uint32_t chip, uint32_t r, uint32_t c, uint32_t streamId) const {
  CoreCoord noc = soc_.workerCore(static_cast<int>(r), static_cast<int>(c));
  if (noc.x < 0) return std::nullopt;
  return blob::StreamName{chip, static_cast<uint32_t>(noc.y), static_cast<uint32_t>(noc.x), streamId};
}

uint32_t StreamBuilder::formatOf(const Buffer& b) const {
  if (b.dataFormat)
    if (auto f = parseDataFormat(*b.dataFormat)) return static_cast<uint32_t>(*f);
  // BUDA files name no format: the first format (enum order) with this tile size.
  for (uint32_t f = 0; f < contract::kDataFormatCount; ++f)
    if (tileSizeBytes(static_cast<DataFormat>(f)) == b.tileSize) return f;
  return 0;
}

uint64_t StreamBuilder::dramAddr(const Buffer& b, uint32_t chip) const {
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

std::optional<Generated> StreamBuilder::run() {
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
  return detail::StreamBuilder(doc, soc, diags, options).run();
}

} // namespace tessera::pipegen
