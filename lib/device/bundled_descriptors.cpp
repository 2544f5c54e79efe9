// Lookup over the descriptors embedded at build time (see embed_descriptors.cmake).
#include "device/bundled_data.hpp"
#include "device/soc_descriptor.hpp"

#include <algorithm>

namespace tessera {

namespace {

const detail::EmbeddedFile* findFile(std::string_view name) {
  const detail::EmbeddedFile* begin = detail::kBundledDescriptors;
  const detail::EmbeddedFile* end = begin + detail::kBundledDescriptorCount;
  auto it = std::find_if(begin, end, [&](const detail::EmbeddedFile& f) { return name == f.name; });
  return it == end ? nullptr : it;
}

} // namespace

std::vector<std::string> bundledDescriptorNames() {
  std::vector<std::string> names;
  for (size_t i = 0; i < detail::kBundledDescriptorCount; ++i) names.emplace_back(detail::kBundledDescriptors[i].name);
  std::sort(names.begin(), names.end()); // the generator sorts too; this pins the contract
  return names;
}

std::optional<std::string_view> bundledDescriptorText(std::string_view name) {
  const detail::EmbeddedFile* f = findFile(name);
  if (!f) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(f->data), f->size);
}

std::string_view defaultDescriptorName(Arch arch) {
  // Full-size, unharvested parts; blackhole_10x14_no_eth is upstream's default.
  switch (arch) {
  case Arch::Grayskull: return "grayskull_10x12";
  case Arch::Wormhole: return "wormhole_8x10";
  case Arch::WormholeB0: return "wormhole_b0_8x10";
  case Arch::Blackhole: return "blackhole_10x14_no_eth";
  }
  return "grayskull_10x12"; // unreachable for valid enumerators
}

std::optional<SocDescriptor> findBundledDescriptor(std::string_view name) {
  auto text = bundledDescriptorText(name);
  if (!text) return std::nullopt;
  SourceBuffer source(std::string(name) + ".yaml", std::string(*text));
  DiagnosticEngine diag;
  return parseSocDescriptor(source, diag); // bundled files parse cleanly (unit-tested)
}

SocDescriptor loadBundledDescriptor(std::string_view name) {
  return findBundledDescriptor(name).value_or(SocDescriptor{});
}

} // namespace tessera
