#include "sim/ethernet.hpp"

#include <algorithm>
#include <tuple>

namespace tessera::sim {

uint64_t ethSerializationCycles(const EthParams& p, uint64_t bytes) {
  const uint64_t packet = std::max<uint32_t>(1, p.packetBytes);
  const uint64_t packets = std::max<uint64_t>(1, (bytes + packet - 1) / packet);
  const uint64_t bits = (bytes + packets * p.packetOverhead) * 8;
  const uint64_t rate = std::max<uint32_t>(1, p.bitsPerCycle);
  return (bits + rate - 1) / rate;
}

std::optional<uint32_t> EthPorts::channelAt(CoreCoord noc) const {
  for (size_t k = 0; k < cores.size(); ++k)
    if (cores[k] == noc) return static_cast<uint32_t>(k);
  return std::nullopt;
}

EthPorts ethPortsOf(const ClusterDescriptor& cluster, ChipId chip, const SocDescriptor& soc, const EthParams& params) {
  EthPorts ports;
  ports.chip = chip;
  ports.cores = soc.ethCores;
  ports.peers.assign(soc.ethCores.size(), std::nullopt);
  ports.params = params;
  ports.pcie = soc.ethCores.empty() && !soc.pcie.empty() && cluster.chipCount() > 1;
  for (const EthLink& l : cluster.links) {
    if (l.a.chip == chip && l.a.chan < ports.peers.size()) ports.peers[l.a.chan] = l.b;
    if (l.b.chip == chip && l.b.chan < ports.peers.size()) ports.peers[l.b.chan] = l.a;
  }
  return ports;
}

bool ethDeliveryOrder(const EthPacket& a, const EthPacket& b) {
  return std::tie(a.arrival, a.srcChip, a.seq) < std::tie(b.arrival, b.srcChip, b.seq);
}

namespace {

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put64(std::vector<uint8_t>& out, uint64_t v) {
  put32(out, static_cast<uint32_t>(v));
  put32(out, static_cast<uint32_t>(v >> 32));
}
bool get32(std::span<const uint8_t> in, size_t& at, uint32_t& v) {
  if (in.size() < 4 || at > in.size() - 4) return false;
  v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{in[at + i]} << (8 * i);
  at += 4;
  return true;
}
bool get64(std::span<const uint8_t> in, size_t& at, uint64_t& v) {
  uint32_t lo = 0, hi = 0;
  if (!get32(in, at, lo) || !get32(in, at, hi)) return false;
  v = uint64_t{hi} << 32 | lo;
  return true;
}
void putName(std::vector<uint8_t>& out, const blob::StreamName& n) {
  put32(out, n.chip);
  put32(out, n.y);
  put32(out, n.x);
  put32(out, n.streamId);
}
bool getName(std::span<const uint8_t> in, size_t& at, blob::StreamName& n) {
  return get32(in, at, n.chip) && get32(in, at, n.y) && get32(in, at, n.x) && get32(in, at, n.streamId);
}

}  // namespace

void appendPacket(std::vector<uint8_t>& out, const EthPacket& p) {
  put32(out, static_cast<uint32_t>(p.kind));
  put32(out, p.srcChip);
  put32(out, p.dstChip);
  put32(out, p.srcChan);
  put32(out, p.dstChan);
  put64(out, p.seq);
  put64(out, p.sent);
  put64(out, p.arrival);
  putName(out, p.from);
  putName(out, p.to);
  put32(out, p.count);
  put32(out, static_cast<uint32_t>(p.bytes.size()));
  out.insert(out.end(), p.bytes.begin(), p.bytes.end());
}

bool readPacket(std::span<const uint8_t> in, size_t& at, EthPacket& p) {
  uint32_t kind = 0, size = 0;
  if (!get32(in, at, kind) || kind > static_cast<uint32_t>(EthPacket::Kind::Credit)) return false;
  p.kind = static_cast<EthPacket::Kind>(kind);
  if (!get32(in, at, p.srcChip) || !get32(in, at, p.dstChip) || !get32(in, at, p.srcChan) ||
      !get32(in, at, p.dstChan) || !get64(in, at, p.seq) || !get64(in, at, p.sent) || !get64(in, at, p.arrival) ||
      !getName(in, at, p.from) || !getName(in, at, p.to) || !get32(in, at, p.count) || !get32(in, at, size))
    return false;
  if (size > in.size() - at) return false;
  p.bytes.assign(in.begin() + static_cast<std::ptrdiff_t>(at), in.begin() + static_cast<std::ptrdiff_t>(at + size));
  at += size;
  return true;
}

void appendReceiverInfo(std::vector<uint8_t>& out, const EthReceiverInfo& r) {
  putName(out, r.receiver);
  putName(out, r.sender);
  put32(out, r.slots);
  put32(out, r.msgSize);
  put32(out, r.chan);
}

bool readReceiverInfo(std::span<const uint8_t> in, size_t& at, EthReceiverInfo& r) {
  return getName(in, at, r.receiver) && getName(in, at, r.sender) && get32(in, at, r.slots) &&
         get32(in, at, r.msgSize) && get32(in, at, r.chan);
}

}  // namespace tessera::sim
