#include "device/device_cache.hpp"

#include "support/file_io.hpp"
#include "support/tool_output.hpp"

#include <algorithm>

namespace tessera {

int DeviceCache::loadExplicit(const std::string& spec, const std::string& tool, std::ostream& err,
                              const PrintOptions& print) {
  auto text = readFile(spec);
  if (text) {
    SourceBuffer buf(spec, std::move(*text));
    DiagnosticEngine diags;
    explicit_ = parseSocDescriptor(buf, diags);
    if (printDiagnostics(err, buf, diags, print) > 0) explicit_.reset();
    if (!explicit_) return 1;
    explicitFile_ = spec;
    return 0;
  }
  if (auto bundled = findBundledDescriptor(spec)) {
    explicit_ = std::move(bundled);
    return 0;
  }
  toolError(err, tool) << "--device '" << spec << "': " << text.error() << ", and it is not a bundled device ("
      << bundledDeviceList() << ")\n";
  return 2;
}

const SocDescriptor& DeviceCache::forArch(Arch arch) {
  auto it = byArch_.find(arch);
  if (it == byArch_.end())
    it = byArch_.emplace(arch, std::make_unique<SocDescriptor>(loadBundledDescriptor(defaultDescriptorName(arch)))).first;
  return *it->second;
}

int DeviceCache::loadCluster(const std::string& path, const std::string& tool, std::ostream& err,
                             const PrintOptions& print) {
  auto text = readFile(path);
  if (!text) {
    toolError(err, tool) << "--cluster '" << path << "': " << text.error() << "\n";
    return 2;
  }
  clusterSource_ = std::make_unique<SourceBuffer>(path, std::move(*text));
  clusterFile_ = path;
  clusterErr_ = &err;
  clusterPrint_ = print;
  explicitClusters_.clear();
  return 0;
}

const ClusterDescriptor* DeviceCache::clusterFor(Arch arch, const SocDescriptor& device, uint32_t chips) {
  if (clusterSource_) {
    // Which channels a link may use depends on the chip: parse per channel count.
    size_t channels = device.ethCores.size();
    auto it = explicitClusters_.find(channels);
    if (it == explicitClusters_.end()) {
      DiagnosticEngine diags;
      auto parsed = parseClusterDescriptor(*clusterSource_, static_cast<uint32_t>(channels), diags);
      if (printDiagnostics(*clusterErr_, *clusterSource_, diags, clusterPrint_) > 0) parsed.reset();
      it = explicitClusters_.emplace(channels, parsed ? std::make_unique<ClusterDescriptor>(std::move(*parsed)) : nullptr).first;
    }
    return it->second.get();
  }
  chips = std::min(chips, maxDefaultChips(arch)); // beyond: target-device names the chips that do exist
  auto key = std::pair{arch, chips};
  auto it = defaultClusters_.find(key);
  if (it == defaultClusters_.end()) {
    std::string why;
    auto c = defaultCluster(arch, chips, why);
    it = defaultClusters_.emplace(key, std::make_unique<ClusterDescriptor>(c ? std::move(*c) : singleChipCluster())).first;
  }
  return it->second.get();
}

bool parseArchOption(const std::string& text, const std::string& tool, std::ostream& err, std::optional<Arch>& arch) {
  if (text.empty()) return true;
  arch = parseArch(text);
  if (arch) return true;
  toolError(err, tool) << "unknown --arch '" << text << "' (expected grayskull, wormhole, wormhole_b0 or blackhole)\n";
  return false;
}

std::string bundledDeviceList() {
  std::string s;
  for (const auto& name : bundledDescriptorNames()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

} // namespace tessera
