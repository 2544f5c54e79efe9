#include "sim/dram.hpp"

#include <algorithm>
#include <cstring>

namespace tessera::sim {

Dram::Dram(uint32_t channels, uint64_t channelBytes)
    : channelBytes_(channelBytes), channels_(channels), recent_(channels) {}

Dram::Dram(const SocDescriptor& soc)
    : Dram(static_cast<uint32_t>(std::max(1, soc.dramChannelCount())),
           soc.dramBankSize ? soc.dramBankSize : (uint64_t{1} << 30)) {}

const Dram::Page* Dram::findPage(uint32_t channel, uint64_t p) const {
  Recent& r = recent_[channel];
  if (r.page && r.index == p) return r.page;
  const auto& m = channels_[channel];
  auto it = m.find(p);
  if (it == m.end()) return nullptr;
  r = Recent{p, it->second.get()};
  return r.page;
}

Dram::Page& Dram::page(uint32_t channel, uint64_t p) {
  Recent& r = recent_[channel];
  if (r.page && r.index == p) return *r.page;
  std::unique_ptr<Page>& slot = channels_[channel][p];
  if (!slot) {
    slot = std::make_unique<Page>();
    slot->fill(0);
  }
  r = Recent{p, slot.get()};
  return *slot;
}

bool Dram::read(uint32_t channel, uint64_t address, std::span<uint8_t> out) const {
  if (!inRange(channel, address, out.size())) return false;
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t a = address + done;
    const uint64_t p = a / kPageBytes, off = a % kPageBytes;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kPageBytes - off, out.size() - done));
    if (const Page* pg = findPage(channel, p)) std::memcpy(out.data() + done, pg->data() + off, n);
    else std::memset(out.data() + done, 0, n);
    done += n;
  }
  return true;
}

bool Dram::write(uint32_t channel, uint64_t address, std::span<const uint8_t> bytes) {
  if (!inRange(channel, address, bytes.size())) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    const uint64_t a = address + done;
    const uint64_t p = a / kPageBytes, off = a % kPageBytes;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kPageBytes - off, bytes.size() - done));
    std::memcpy(page(channel, p).data() + off, bytes.data() + done, n);
    done += n;
  }
  return true;
}

uint32_t Dram::read32(uint32_t channel, uint64_t address) const {
  uint8_t b[4] = {};
  read(channel, address, b);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

bool Dram::write32(uint32_t channel, uint64_t address, uint32_t v) {
  const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
                        static_cast<uint8_t>(v >> 24)};
  return write(channel, address, b);
}

bool Dram::fill(uint32_t channel, uint64_t address, uint64_t bytes, uint8_t value) {
  if (!inRange(channel, address, bytes)) return false;
  uint64_t done = 0;
  while (done < bytes) {
    const uint64_t a = address + done;
    const uint64_t p = a / kPageBytes, off = a % kPageBytes;
    const uint64_t n = std::min<uint64_t>(kPageBytes - off, bytes - done);
    if (value != 0 || findPage(channel, p)) std::memset(page(channel, p).data() + off, value, n);
    done += n;
  }
  return true;
}

uint64_t Dram::residentBytes() const {
  uint64_t pages = 0;
  for (const auto& m : channels_) pages += m.size();
  return pages * kPageBytes;
}

QueueHeader readQueueHeader(const Dram& dram, uint32_t channel, uint64_t address) {
  QueueHeader h;
  uint8_t b[32] = {};
  dram.read(channel, address, b);
  uint32_t w[8] = {};
  for (int i = 0; i < 8; ++i)
    w[i] = uint32_t{b[4 * i]} | uint32_t{b[4 * i + 1]} << 8 | uint32_t{b[4 * i + 2]} << 16 | uint32_t{b[4 * i + 3]} << 24;
  h.rdPtr = w[0];
  h.rdAutoinc = w[1];
  h.rdStay = w[2];
  h.reserved1 = w[3];
  h.wrPtr = w[4];
  h.wrAutoinc = w[5];
  h.slots = w[6];
  h.reserved2 = w[7];
  return h;
}

bool writeQueueHeader(Dram& dram, uint32_t channel, uint64_t address, const QueueHeader& h) {
  const uint32_t w[8] = {h.rdPtr, h.rdAutoinc, h.rdStay, h.reserved1, h.wrPtr, h.wrAutoinc, h.slots, h.reserved2};
  uint8_t b[32];
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 4; ++k) b[4 * i + k] = static_cast<uint8_t>(w[i] >> (8 * k));
  return dram.write(channel, address, b);
}

uint32_t wrapPointer(uint64_t ptr, uint32_t slots) {
  const uint64_t limit = 2 * uint64_t{std::max<uint32_t>(1, slots)};
  return static_cast<uint32_t>(ptr % limit);
}

uint32_t queueOccupancy(uint32_t rd, uint32_t wr, uint32_t slots) {
  const uint64_t limit = 2 * uint64_t{std::max<uint32_t>(1, slots)};
  return static_cast<uint32_t>(((uint64_t{wr} % limit) + limit - (uint64_t{rd} % limit)) % limit);
}

std::optional<DramLocation> decodeDramNocAddress(const SocDescriptor& soc, uint64_t nocAddr) {
  const uint32_t xy = static_cast<uint32_t>(nocAddr >> 32) & 0xFFFF;
  const int x = static_cast<int>(xy & 0x3F), y = static_cast<int>((xy >> 6) & 0x3F);
  if ((xy >> 12) != 0) return std::nullopt;
  if (const uint64_t peer = nocAddr >> 48; peer != 0) {  // another chip's DRAM through the PCIe core
    if ((peer >> 4) == 0) return std::nullopt;
    const auto ch = peerWindowChannel(static_cast<uint32_t>((peer >> 4) - 1), static_cast<uint32_t>(peer & 0xF));
    if (!ch) return std::nullopt;
    for (const CoreCoord& c : soc.pcie)
      if (c.x == x && c.y == y) return DramLocation{*ch, nocAddr & 0xFFFFFFFFull, c, true};
    return std::nullopt;
  }
  for (size_t ch = 0; ch < soc.dramChannels.size(); ++ch)
    for (const CoreCoord& c : soc.dramChannels[ch])
      if (c.x == x && c.y == y) return DramLocation{static_cast<uint32_t>(ch), nocAddr & 0xFFFFFFFFull, c};
  for (const CoreCoord& c : soc.pcie)
    if (c.x == x && c.y == y) {
      const uint64_t a = nocAddr & 0xFFFFFFFFull;
      return DramLocation{static_cast<uint32_t>(a / kHostChannelBytes), a % kHostChannelBytes, c, true};
    }
  return std::nullopt;
}

std::optional<uint32_t> peerWindowChannel(uint32_t chip, uint32_t channel) {
  if (chip >= kPeerWindowChips || channel >= kPeerWindowChannelsPerChip) return std::nullopt;
  return kHostChannels + chip * kPeerWindowChannelsPerChip + channel;
}

std::optional<uint64_t> hostNocAddress(const SocDescriptor& soc, uint32_t channel, uint64_t address) {
  if (soc.pcie.empty() || channel >= kHostChannels || address >= kHostChannelBytes) return std::nullopt;
  const CoreCoord c = soc.pcie.front();
  const uint64_t xy = (static_cast<uint64_t>(c.y & 0x3F) << 6) | static_cast<uint64_t>(c.x & 0x3F);
  return (xy << 32) | (uint64_t{channel} * kHostChannelBytes + address);
}

uint64_t dramNocAddress(const SocDescriptor& soc, uint32_t channel, uint64_t address) {
  const CoreCoord c = soc.dramCore(static_cast<int>(channel), 0);
  const uint64_t xy = (static_cast<uint64_t>(c.y & 0x3F) << 6) | static_cast<uint64_t>(c.x & 0x3F);
  return (xy << 32) | (address & 0xFFFFFFFFull);
}

}  // namespace tessera::sim
