// The stream engine's ethernet side (stream_engine.hpp, "Ethernet"): streams
// on ethernet cores that send to or receive from a stream on another chip.
// Nothing here touches another chip: tiles leave as packets (outbox_), come
// in as packets (receivePackets), and a receiver's freed slots go back to its
// sender as credit packets. docs/device-model.md, "Cluster".
#include "sim/stream_engine_state.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <cstring>

namespace tessera::sim {

using namespace engine_detail;

namespace {

std::string linkText(ChipId chip, uint32_t chan, const EthEndpoint& peer, bool pcie = false) {
  if (pcie) return "PCIe between chip " + std::to_string(chip) + " and chip " + std::to_string(peer.chip);
  return "link chip " + std::to_string(chip) + " channel " + std::to_string(chan) + " - chip " +
         std::to_string(peer.chip) + " channel " + std::to_string(peer.chan);
}

}  // namespace

void StreamEngine::setEthernet(const EthPorts& ports) {
  eth_ = ports;
  ethTxBusy_.assign(ports.channelCount(), 0);
  ethLinks_.assign(ports.channelCount(), EthLinkCounters{});
}

// A stream with a phase whose dest or src is on another chip: it must sit on
// an ethernet core linked to that chip; a sending phase has that one dest; a
// receiving stream gets every tile from that one sender through one ring
// (its slots are the sender's credits) and is not a kernel operand (its
// freed slots, the credits, come from its own sends).
bool StreamEngine::configureEthernet(Stream& s, const std::string& cname, StreamFault& fault) {
  auto fail = [&](size_t i, const std::string& what) {
    const StreamPhase& p = s.phases[i];
    fault = {"bad-stream-config", cname,
             "core '" + cname + "': stream " + std::to_string(s.name.streamId) + ": phase " + std::to_string(i) +
                 " (phase_id " + std::to_string(p.phaseId) + "): " + what};
    return false;
  };
  std::optional<uint32_t> chan = eth_->channelAt(s.core->noc);
  // Without ethernet: any worker core's stream, through the PCIe cores.
  const bool viaPcie = !chan && eth_->pcie;
  if (viaPcie) chan = eth_->pcieChan();
  std::optional<StreamName> sender;
  for (size_t i = 0; i < s.phases.size(); ++i) {
    const StreamPhase& p = s.phases[i];
    bool remoteDest = false, remoteSrc = false;
    for (const StreamName& d : p.dest) remoteDest |= isRemote(d);
    for (const StreamName& n : p.src) remoteSrc |= isRemote(n);
    if (!remoteDest && !remoteSrc) continue;
    const StreamName other = remoteDest ? *std::find_if(p.dest.begin(), p.dest.end(), [&](const StreamName& d) {
      return isRemote(d);
    })
                                        : *std::find_if(p.src.begin(), p.src.end(), [&](const StreamName& n) {
                                            return isRemote(n);
                                          });
    const std::string otherText = streamNameText(other);
    if (!chan)
      return fail(i, "names " + otherText + " on chip " + std::to_string(other.chip) +
                         ", but only an ethernet core reaches another chip and this is not one");
    const std::optional<EthEndpoint> peer =
        viaPcie ? std::optional<EthEndpoint>(EthEndpoint{other.chip, eth_->pcieChan()}) : eth_->peers[*chan];
    if (!peer)
      return fail(i, "names " + otherText + " on chip " + std::to_string(other.chip) + ", but ethernet channel " +
                         std::to_string(*chan) + " of chip " + std::to_string(eth_->chip) + " has no link");
    if (peer->chip != other.chip)
      return fail(i, "names " + otherText + " on chip " + std::to_string(other.chip) + ", but ethernet channel " +
                         std::to_string(*chan) + " of chip " + std::to_string(eth_->chip) + " is linked to chip " +
                         std::to_string(peer->chip));
    if (remoteDest) {
      if (p.dest.size() != 1)
        return fail(i, "a phase that sends to another chip (" + otherText + ") must have exactly one dest, not " +
                           std::to_string(p.dest.size()));
      const bool known = std::any_of(s.ethTx.begin(), s.ethTx.end(), [&](const auto& t) { return t->to == other; });
      if (!known) {
        auto tx = std::make_unique<EthTx>();
        tx->to = other;
        tx->chan = *chan;
        tx->peer = *peer;
        tx->msgSize = p.msgSize;
        s.ethTx.push_back(std::move(tx));
      }
    }
    if (remoteSrc) {
      if (p.src.size() != 1)
        return fail(i, "a phase that receives from another chip (" + otherText + ") must have exactly one src, not " +
                           std::to_string(p.src.size()));
      if (sender && !(*sender == other))
        return fail(i, "receives from " + otherText + " but an earlier phase from " + streamNameText(*sender) +
                           ": a stream fed over ethernet has one sender");
      sender = other;
    }
  }
  if (!sender) return true;
  const StreamPhase& f = s.phases.front();
  for (size_t i = 0; i < s.phases.size(); ++i) {
    const StreamPhase& p = s.phases[i];
    if (!p.remoteSource || p.src.size() != 1 || !(p.src[0] == *sender))
      return fail(i, "a stream fed over ethernet (from " + streamNameText(*sender) +
                         ") must take every phase's tiles from that sender");
    if (p.bufAddr != f.bufAddr || p.bufSize != f.bufSize || p.msgSize != f.msgSize)
      return fail(i, "a stream fed over ethernet keeps one buffer (its slots are the sender's credits), but this "
                     "phase moves it from " + support::hexLiteral(f.bufAddr) + " to " + support::hexLiteral(p.bufAddr));
    if (p.localReceiver)
      return fail(i, "a stream fed over ethernet must pass its tiles on (remote_receiver or dram_output), not to a "
                     "kernel: ethernet cores run none");
  }
  auto rx = std::make_unique<EthRx>();
  rx->from = *sender;
  rx->chan = *chan;
  rx->peer = viaPcie ? EthEndpoint{sender->chip, eth_->pcieChan()} : *eth_->peers[*chan];
  s.ethRx = std::move(rx);
  return true;
}

EthSetup StreamEngine::ethSetup() const {
  EthSetup out;
  for (const auto& sp : streams_) {
    const Stream& s = *sp;
    if (s.ethRx) {
      const StreamPhase& f = s.phases.front();
      out.receivers.push_back(EthReceiverInfo{s.name, s.ethRx->from, f.bufSize / f.msgSize, f.msgSize, s.ethRx->chan});
    }
    for (const auto& tx : s.ethTx) out.senders.push_back(EthSenderInfo{s.name, tx->to, tx->chan, tx->peer, tx->msgSize});
  }
  auto byReceiver = [](const auto& a, const auto& b) { return a.receiver < b.receiver; };
  std::sort(out.receivers.begin(), out.receivers.end(), byReceiver);
  std::sort(out.senders.begin(), out.senders.end(),
            [](const EthSenderInfo& a, const EthSenderInfo& b) { return a.sender < b.sender || (a.sender == b.sender && a.receiver < b.receiver); });
  return out;
}

void StreamEngine::connectEthernet(const std::vector<EthReceiverInfo>& receivers) {
  for (auto& sp : streams_)
    for (auto& tx : sp->ethTx) {
      tx->credits.clear();
      for (const EthReceiverInfo& r : receivers)
        if (r.receiver == tx->to && r.sender == sp->name) {
          tx->slots = r.slots;
          tx->credits.assign(r.slots, now_);
        }
    }
}

std::vector<EthPacket> StreamEngine::takePackets() {
  std::vector<EthPacket> out;
  out.swap(outbox_);
  return out;
}

void StreamEngine::receivePackets(std::vector<EthPacket>& packets) {
  for (EthPacket& pk : packets) {
    Stream* s = find(pk.to);
    auto bad = [&](const std::string& what) {
      if (fault_) return;
      fault_ = StreamFault{"bad-stream-config", s ? s->coreName() : coordText(CoreCoord{int(pk.to.x), int(pk.to.y)}),
                           "chip " + std::to_string(pk.dstChip) + ": an ethernet " +
                               (pk.kind == EthPacket::Kind::Tile ? "tile" : "credit") + " from " +
                               streamNameText(pk.from) + " for " + streamNameText(pk.to) + " arrived over " +
                               linkText(pk.srcChip, pk.srcChan, EthEndpoint{pk.dstChip, pk.dstChan}, viaPcie(pk.dstChan)) +
                               ": " + what};
    };
    if (!s) {
      bad("no such stream is configured");
      continue;
    }
    if (pk.kind == EthPacket::Kind::Tile) {
      if (!s->ethRx || !(s->ethRx->from == pk.from)) {
        bad("the stream does not receive from that sender");
        continue;
      }
      s->ethRx->tiles.push_back(EthRx::Tile{pk.arrival, std::move(pk.bytes)});
    } else {
      auto it = std::find_if(s->ethTx.begin(), s->ethTx.end(), [&](const auto& t) { return t->to == pk.from; });
      if (it == s->ethTx.end()) {
        bad("the stream does not send to that receiver");
        continue;
      }
      for (uint32_t k = 0; k < pk.count; ++k) (*it)->credits.push_back(pk.arrival);
    }
  }
}

bool StreamEngine::viaPcie(uint32_t chan) const { return eth_ && eth_->pcie && chan == eth_->pcieChan(); }

// Cycles from a hop's last byte leaving to it being usable on the other
// chip: the link's latency, or through PCIe the PCIe round trip (at least
// the link latency the cluster's rounds are cut at, so the lookahead holds).
uint64_t StreamEngine::hopLatency(uint32_t chan) const {
  return viaPcie(chan) ? std::max<uint64_t>(model_.pcie.latency, eth_->params.latency) : eth_->params.latency;
}

EthPacket StreamEngine::ethPacket(EthPacket::Kind kind, uint32_t chan, const EthEndpoint& peer,
                                  const blob::StreamName& from, const blob::StreamName& to, uint64_t sent,
                                  uint64_t arrival) {
  EthPacket pk;
  pk.kind = kind;
  pk.srcChip = eth_->chip;
  pk.dstChip = peer.chip;
  pk.srcChan = chan;
  pk.dstChan = peer.chan;
  pk.seq = ethSeq_++;
  pk.sent = sent;
  pk.arrival = arrival;
  pk.from = from;
  pk.to = to;
  return pk;
}

// A freed slot of a ring fed over ethernet: one credit back to its sender,
// on the reverse direction of the same link (a 16-byte word: its link time
// is not booked, only the latency).
void StreamEngine::returnCredit(Ring& r, uint64_t time) {
  const Stream& s = *r.ethReceiver;
  const EthRx& rx = *s.ethRx;
  EthPacket pk = ethPacket(EthPacket::Kind::Credit, rx.chan, rx.peer, s.name, rx.from, time, time + hopLatency(rx.chan));
  pk.count = 1;
  outbox_.push_back(std::move(pk));
}

// As stepSend, with the receiver's credits in place of its ring: a tile
// leaves when the link's sending side is free and a credit has arrived.
bool StreamEngine::stepEthSend(Stream& s, uint64_t until) {
  Ring& r = *s.ring;
  const StreamPhase& p = s.phases[s.phase];
  const bool windowed = p.sourceEndpoint && p.srcPeriodTiles > 0;
  EthTx& tx = *s.ethDest;
  const std::span<const uint8_t> l1 = r.core->l1();
  if (r.kernelProduces) {
    const uint64_t v = ringValid(r);
    for (; r.observed < v; ++r.observed) r.slotTime[r.observed % r.slots] = now_;
  }
  if (r.msgSize != tx.msgSize || (tx.slots && r.msgSize == 0)) {
    setFault(s, "bad-stream-config", "sends " + std::to_string(r.msgSize) + "-byte tiles to " + streamNameText(tx.to) +
                                         ", whose ring takes " + std::to_string(tx.msgSize) + "-byte tiles");
    return true;
  }
  bool moved = false;
  while (s.out < s.n) {
    const uint64_t k = windowed ? r.periodBase + periodTile(p, s.out) : r.sent;
    if (k >= ringValid(r) || tx.credits.empty()) break;
    // Through PCIe the chip's one PCIe link (shared with its host-memory
    // and peer-DRAM transfers) is the resource, else the ethernet link's
    // sending side.
    const bool pcie = viaPcie(tx.chan);
    uint64_t& busy = pcie ? dramBusy_[dram_.channelCount()] : ethTxBusy_[tx.chan];
    const uint64_t t0 = std::max({now_, busy, r.slotTime[k % r.slots], tx.credits.front()});
    if (t0 >= until) {
      wake_ = std::min(wake_, t0);
      break;
    }
    tx.credits.pop_front();
    const uint64_t ser =
        pcie ? pcieTransferCycles(model_.pcie, r.msgSize) : ethSerializationCycles(eth_->params, r.msgSize);
    busy = t0 + ser;
    EthPacket pk = ethPacket(EthPacket::Kind::Tile, tx.chan, tx.peer, s.name, tx.to, t0, t0 + ser + hopLatency(tx.chan));
    const size_t at = r.base + (k % r.slots) * r.msgSize;
    pk.bytes.assign(l1.begin() + static_cast<std::ptrdiff_t>(at),
                    l1.begin() + static_cast<std::ptrdiff_t>(at + r.msgSize));
    outbox_.push_back(std::move(pk));
    EthLinkCounters& link = ethLinks_[tx.chan];
    ++link.tiles;
    link.bytes += r.msgSize;
    link.busyCycles += ser;
    ++counters_.ethTiles;
    counters_.ethBytes += r.msgSize;
    noteTransfer(s, TransferKind::Eth, t0, t0 + ser + hopLatency(tx.chan), r.msgSize);
    tileSent(s, r, t0 + ser, windowed);
    touch(s, t0 + ser);
    moved = true;
  }
  return moved;
}

// Tiles that came over the link enter the ring in order as the phases reach
// them; each is readable at its arrival.
bool StreamEngine::stepEthReceive(Stream& s, uint64_t until) {
  (void)until;
  Ring& r = *s.ring;
  EthRx& rx = *s.ethRx;
  std::span<uint8_t> l1 = r.core->l1();
  bool moved = false;
  while (!rx.tiles.empty() && r.reserved < s.first + s.n && ringFree(r) > 0) {
    EthRx::Tile& t = rx.tiles.front();
    if (t.bytes.size() != r.msgSize) {
      setFault(s, "bad-stream-config", "a " + std::to_string(t.bytes.size()) + "-byte tile arrived from " +
                                           streamNameText(rx.from) + " for a ring of " + std::to_string(r.msgSize) +
                                           "-byte tiles");
      return true;
    }
    std::memcpy(l1.data() + r.base + (r.reserved % r.slots) * r.msgSize, t.bytes.data(), r.msgSize);
    ++r.reserved;
    schedule(std::max(t.arrival, now_), Event::Kind::Deliver, &r);
    ++s.tilesIn;
    ++rx.received;
    rx.tiles.pop_front();
    moved = true;
  }
  return moved;
}

std::string StreamEngine::ethWaitReason(const Stream& s) const {
  const StreamPhase& p = s.phases[s.phase];
  const Ring& r = *s.ring;
  std::vector<std::string> why;
  if (s.ethRx && r.reserved < s.first + s.n) {
    const EthRx& rx = *s.ethRx;
    const uint64_t got = r.reserved - std::min(r.reserved, s.first);
    if (ringFree(r) == 0)
      why.push_back("its buffer to drain (full: " + std::to_string(r.slots) + " tiles)");
    else
      why.push_back("data from " + streamNameText(rx.from) + " on chip " + std::to_string(rx.from.chip) + " over " +
                    linkText(eth_->chip, rx.chan, rx.peer, viaPcie(rx.chan)) + " (" + std::to_string(got) + " of " + std::to_string(s.n) +
                    " tiles received)");
  }
  if (s.ethDest && s.out < s.n) {
    const EthTx& tx = *s.ethDest;
    const bool windowed = p.sourceEndpoint && p.srcPeriodTiles > 0;
    const uint64_t next = windowed ? r.periodBase + periodTile(p, s.out) : r.sent;
    if (next < ringValid(r) && tx.credits.empty())
      why.push_back("credits from " + streamNameText(tx.to) + " on chip " + std::to_string(tx.to.chip) + " over " +
                    linkText(eth_->chip, tx.chan, tx.peer, viaPcie(tx.chan)) + " (none left of its " + std::to_string(tx.slots) +
                    " slots: its buffer is full)");
  }
  std::string out;
  for (const std::string& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

}  // namespace tessera::sim
