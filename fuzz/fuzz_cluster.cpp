// libFuzzer target for the cluster descriptor reader (lib/device/cluster.cpp):
// the chips, ethernet links and MMIO chips of a multi-chip system.
//
// One input: parseClusterDescriptor with 16 channels (wormhole_b0). nullopt
// must come with an error, a descriptor without one. A descriptor is used as
// the multi-chip tools use it: every link's ends are known chips and are each
// other's peer, and route/mmioGateway run for the chip pairs (first 32 chips).
//
// Build and run: fuzz/run-fuzz.sh SECONDS cluster (docs/fuzzing.md).
#include "device/cluster.hpp"
#include "fuzz_reader_common.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const char* me = "fuzz-cluster";
  SourceBuffer source("cluster.yaml", std::string(reinterpret_cast<const char*>(data), size));
  DiagnosticEngine diags;
  auto cluster = parseClusterDescriptor(source, 16, diags);
  fuzz::checkDiagnostics(me, cluster.has_value(), source, diags);
  if (!cluster) return 0;
  for (const EthLink& l : cluster->links) {
    if (!cluster->hasChip(l.a.chip) || !cluster->hasChip(l.b.chip)) fuzz::invariantBroken(me, "a link names an unknown chip");
    if (l.a.chan >= 16 || l.b.chan >= 16) fuzz::invariantBroken(me, "a link channel is out of range");
    auto pa = cluster->peer(l.a);
    auto pb = cluster->peer(l.b);
    if (!pa || !pb || !(*pa == l.b) || !(*pb == l.a)) fuzz::invariantBroken(me, "a link's ends are not each other's peer");
  }
  for (ChipId m : cluster->mmio)
    if (!cluster->hasChip(m)) fuzz::invariantBroken(me, "an MMIO chip is not a chip");
  std::vector<ChipId> ids;
  for (const auto& [id, loc] : cluster->chips)
    if (ids.size() < 32) ids.push_back(id);
  for (ChipId a : ids) {
    if (auto gw = cluster->mmioGateway(a); gw && !cluster->isMmio(*gw)) fuzz::invariantBroken(me, "gateway is not MMIO");
    for (ChipId b : ids) {
      std::vector<ChipId> r = cluster->route(a, b);
      if (!r.empty() && (r.front() != a || r.back() != b)) fuzz::invariantBroken(me, "a route does not join its ends");
      for (size_t i = 1; i < r.size(); ++i)
        if (cluster->linksBetween(r[i - 1], r[i]).empty()) fuzz::invariantBroken(me, "a route hop has no link");
    }
  }
  return 0;
}
