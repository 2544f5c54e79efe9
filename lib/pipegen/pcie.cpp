// pipegen, chips without ethernet (grayskull): pipes that cross chips
// through PCIe (docs/cluster.md, "Through the host"; docs/pipegen.md).
//
// - A pipe writing `loc: host` buffers: host memory is on no chip, and every
//   chip's streams reach it through their own PCIe core (every grayskull chip
//   is an MMIO chip), so its writer's chip is all that matters.
// - An mmio_pipe (BUDA's field): its core buffers on one chip, DRAM buffers
//   of other chips among its inputs or outputs. Its streams (on that chip)
//   read or write those through their PCIe core, at the peer window address
//   (peerDramNocAddress). BUDA's pipegen2 lowers such pipes to a pipe sending
//   to PCIe and one reading from it on the other chip (streams on both
//   chips); Tessera's streams reach the other chip's DRAM directly.
#include "pipegen/stream_builder.hpp"

namespace tessera::pipegen {

uint64_t peerDramNocAddress(int pcieX, int pcieY, uint32_t chip, uint32_t chan, uint64_t addr) {
  return (uint64_t{chip + 1} << 52) | (uint64_t{chan & 0xF} << 48) | dramNocAddress(pcieX, pcieY, addr);
}

namespace detail {

std::optional<bool> StreamBuilder::checkPcieChips(const Plan& plan, const std::set<uint32_t>& ins,
                                           const std::set<uint32_t>& outs) {
  const Pipe& p = doc_.pipes[plan.pipe];
  std::set<uint32_t> coreChips, farDram;  // the chips of its core buffers; DRAM buffers of other chips
  std::set<uint32_t> all = ins;
  all.insert(outs.begin(), outs.end());
  for (uint32_t b : all)
    if (info_[b].kind != BufKind::Dram && !bufferAt(b).isPadding) coreChips.insert(bufferAt(b).chipId);
  if (coreChips.size() != 1) return std::nullopt;  // ethernet pipes, or no streams
  const uint32_t chip = *coreChips.begin();
  for (uint32_t b : all)
    if (info_[b].kind == BufKind::Dram && !bufferAt(b).isPadding && !bufferAt(b).dramIoFlagIsRemote && bufferAt(b).chipId != chip)
      farDram.insert(bufferAt(b).chipId);
  if (farDram.empty()) return true;  // host memory only: the streams' own PCIe core
  if (!p.mmioPipe) return std::nullopt;
  if (soc_.pcie.empty() || *farDram.rbegin() >= 4095) {
    pipeError("mmio-pipe", p,
              "device '" + soc_.name + "' has no PCIe core, or chip " + std::to_string(*farDram.rbegin()) +
                  " is outside the PCIe peer window");
    return false;
  }
  for (uint32_t b : all)
    if (info_[b].kind == BufKind::Dram && bufferAt(b).chipId != chip && bufferAt(b).dramChan >= 16) {
      noteBuf(pipeError("mmio-pipe", p,
                        "DRAM channel " + std::to_string(bufferAt(b).dramChan) + " is outside the PCIe peer window (0-15)"),
              bufferAt(b));
      return false;
    }
  return true;
}

}  // namespace detail
}  // namespace tessera::pipegen
