#include "sim/cluster.hpp"

#include "support/parallel.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace tessera::sim {

bool ClusterRunResult::ok() const {
  if (stop != ChipStop::Done) return false;
  return std::all_of(chips.begin(), chips.end(), [](const ChipRunResult& r) { return r.ok(); });
}

std::optional<uint32_t> hopsToHost(const ClusterDescriptor& cluster, ChipId chip) {
  // Breadth first over the links from the chip to the nearest MMIO chip.
  std::map<ChipId, uint32_t> dist{{chip, 0}};
  std::vector<ChipId> frontier{chip};
  for (size_t i = 0; i < frontier.size(); ++i) {
    const ChipId c = frontier[i];
    if (cluster.isMmio(c)) return dist[c];
    for (const EthLink& l : cluster.links) {
      const std::optional<ChipId> next = l.a.chip == c ? std::optional(l.b.chip) : l.b.chip == c ? std::optional(l.a.chip) : std::nullopt;
      if (next && dist.emplace(*next, dist[c] + 1).second) frontier.push_back(*next);
    }
  }
  return std::nullopt;
}

DataMovementModel hostPathModel(const DataMovementModel& base, const EthParams& eth, uint32_t hops) {
  DataMovementModel m = base;
  if (hops == 0) return m;
  // A chip without PCIe reaches host memory through its MMIO chip: every hop
  // adds a link each way (request, then data) and the links' rate caps the PCIe one.
  m.pcie.latency += 2 * hops * eth.latency;
  m.pcie.bytesPerCycle = std::max<uint32_t>(1, std::min<uint32_t>(m.pcie.bytesPerCycle, eth.bitsPerCycle / 8));
  return m;
}

Cluster::Cluster(const SocDescriptor& soc, const ClusterDescriptor& cluster, const EthParams& eth)
    : desc_(cluster), eth_(eth) {
  for (const auto& [id, loc] : desc_.chips) {
    (void)loc;
    const DataMovementModel model = hostPathModel(DataMovementModel::forArch(soc.arch), eth_, hopsToHost(desc_, id).value_or(0));
    auto chip = std::make_unique<Chip>(soc, model);
    chip->setEthernet(ethPortsOf(desc_, id, soc, eth_));
    chips_.emplace(id, std::move(chip));
  }
}

Cluster::~Cluster() = default;

std::vector<ChipId> Cluster::chipIds() const {
  std::vector<ChipId> ids;
  for (const auto& [id, chip] : chips_) ids.push_back(id);
  return ids;
}

Chip& Cluster::chip(ChipId id) { return *chips_.at(id); }
const Chip& Cluster::chip(ChipId id) const { return *chips_.at(id); }

void Cluster::beginEpoch() {
  for (auto& [id, chip] : chips_) chip->beginEpoch();
}

std::optional<EthSetupFault> checkEthSetup(const std::map<ChipId, EthSetup>& setups) {
  auto receiverOf = [&](const blob::StreamName& name) -> const EthReceiverInfo* {
    auto it = setups.find(name.chip);
    if (it == setups.end()) return nullptr;
    for (const EthReceiverInfo& r : it->second.receivers)
      if (r.receiver == name) return &r;
    return nullptr;
  };
  auto link = [](ChipId chip, uint32_t chan, const EthEndpoint& peer) {
    return "link chip " + std::to_string(chip) + " channel " + std::to_string(chan) + " - chip " +
           std::to_string(peer.chip) + " channel " + std::to_string(peer.chan);
  };
  for (const auto& [chip, setup] : setups) {
    for (const EthSenderInfo& s : setup.senders) {
      const std::string head = "stream " + streamNameText(s.sender) + " sends to " + streamNameText(s.receiver) +
                               " over " + link(chip, s.chan, s.peer) + ", ";
      const EthReceiverInfo* r = receiverOf(s.receiver);
      if (!r)
        return EthSetupFault{chip, s.sender,
                             head + "but chip " + std::to_string(s.receiver.chip) +
                                 " has no such stream fed over ethernet (no blob of that chip configures it)"};
      if (!(r->sender == s.sender))
        return EthSetupFault{chip, s.sender, head + "but that stream receives from " + streamNameText(r->sender)};
      if (r->chan != s.peer.chan)
        return EthSetupFault{chip, s.sender,
                             head + "but that stream is on ethernet channel " + std::to_string(r->chan) +
                                 ", not at the other end of the link"};
      if (r->msgSize != s.msgSize)
        return EthSetupFault{chip, s.sender,
                             head + "in " + std::to_string(s.msgSize) + "-byte tiles, but its ring takes " +
                                 std::to_string(r->msgSize) + "-byte tiles"};
    }
    for (const EthReceiverInfo& r : setup.receivers) {
      auto it = setups.find(r.sender.chip);
      bool found = false;
      if (it != setups.end())
        for (const EthSenderInfo& s : it->second.senders) found |= s.sender == r.sender && s.receiver == r.receiver;
      if (!found)
        return EthSetupFault{chip, r.receiver,
                             "stream " + streamNameText(r.receiver) + " receives from " + streamNameText(r.sender) +
                                 " on chip " + std::to_string(r.sender.chip) + ", which sends it nothing (no such "
                                 "sender is configured)"};
    }
  }
  return std::nullopt;
}

namespace {

// One chip's round, as every process needs it to agree on the next step.
struct RoundSummary {
  bool fault = false, progress = false, hartsRunning = false, done = false, busy = false;
  bool packets = false, tiles = false;  // it sent packets; tiles among them
  std::optional<uint64_t> wake;         // its next event (computed only when it could matter)
};

void writeSummary(WireWriter& w, uint32_t index, const RoundSummary& s) {
  w.u32(index);
  w.u8(static_cast<uint8_t>(s.fault | s.progress << 1 | s.hartsRunning << 2 | s.done << 3 | s.busy << 4 |
                            s.packets << 5 | s.tiles << 6 | s.wake.has_value() << 7));
  w.u64(s.wake.value_or(0));
}

uint32_t readSummary(WireReader& r, RoundSummary& s) {
  const uint32_t index = r.u32();
  const uint8_t f = r.u8();
  const uint64_t wake = r.u64();
  s.fault = f & 1, s.progress = f & 2, s.hartsRunning = f & 4, s.done = f & 8, s.busy = f & 16;
  s.packets = f & 32, s.tiles = f & 64;
  s.wake = f & 128 ? std::optional(wake) : std::nullopt;
  return index;
}

}  // namespace

void Cluster::shareMemory(const std::vector<MemoryRegion>& regions) {
  if (!distributed()) return;
  std::map<ChipId, std::vector<uint8_t>> bytes;
  for (const MemoryRegion& m : regions) {
    if (!isLocal(m.chip)) continue;
    std::vector<uint8_t> region(m.bytes);
    Chip& c = chip(m.chip);
    (m.host ? c.hostMemory() : c.dram()).read(m.channel, m.address, region);
    std::vector<uint8_t>& out = bytes[m.chip];
    out.insert(out.end(), region.begin(), region.end());
  }
  shareByChip(*transport_, bytes);
  std::map<ChipId, size_t> at;
  for (const MemoryRegion& m : regions) {
    if (isLocal(m.chip)) continue;
    const std::vector<uint8_t>& from = bytes[m.chip];
    size_t& k = at[m.chip];
    if (from.size() - k < m.bytes) throw std::runtime_error("cluster transport: short memory region");
    Chip& c = chip(m.chip);
    (m.host ? c.hostMemory() : c.dram())
        .write(m.channel, m.address, std::span<const uint8_t>(from.data() + k, m.bytes));
    k += m.bytes;
  }
}

ClusterRunResult Cluster::runEpoch(const ClusterRunOptions& options) {
  ClusterRunResult result;
  LocalTransport inProcess;
  ClusterTransport& net = transport_ ? *transport_ : inProcess;
  const bool spread = net.ranks() > 1;
  std::vector<Chip*> chips;
  for (auto& [id, chip] : chips_) chips.push_back(chip.get());
  const size_t n = chips.size();
  // This process's chips (all of them unless spread over ranks).
  std::vector<size_t> mine;
  for (size_t i = 0; i < n; ++i)
    if (net.isLocal(chips[i]->id())) mine.push_back(i);
  const unsigned jobs = std::max(1u, options.jobs);
  // The round: no longer than a link's latency (the lookahead).
  const uint64_t slice =
      std::max<uint64_t>(1, std::min<uint64_t>(options.defaults.sliceCycles, std::max<uint32_t>(1, eth_.latency)));
  // A round is as many whole slices as fit in the latency: fewer exchanges,
  // the same lookahead rule (a packet sent in a round arrives after it).
  const uint64_t slicesPerRound = std::max<uint64_t>(1, std::max<uint32_t>(1, eth_.latency) / slice);
  const uint64_t round = slice * slicesPerRound;
  std::vector<ChipRunOptions> chipOptions(n, options.defaults);
  for (size_t i = 0; i < n; ++i) {
    if (auto it = options.perChip.find(chips[i]->id()); it != options.perChip.end()) chipOptions[i] = it->second;
    chipOptions[i].sliceCycles = slice;
  }
  WorkerPool pool(static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(jobs, mine.size()))));
  // `fn(i)` for every chip i of this process.
  auto forMine = [&](const std::function<void(size_t)>& fn) {
    pool.parallelFor(mine.size(), [&](size_t k) { fn(mine[k]); });
  };
  // Each process's bytes per chip (fill(i, w) for its chips) on every process.
  auto share = [&](const std::function<void(size_t, WireWriter&)>& fill) {
    std::map<ChipId, std::vector<uint8_t>> bytes;
    for (size_t i : mine) {
      WireWriter w;
      fill(i, w);
      bytes[chips[i]->id()] = std::move(w.bytes);
    }
    shareByChip(net, bytes);
    std::vector<std::vector<uint8_t>> byIndex(n);
    for (size_t i = 0; i < n; ++i) byIndex[i] = std::move(bytes[chips[i]->id()]);
    return byIndex;
  };
  const uint64_t maxCycles = options.defaults.maxCycles;
  const uint32_t hangRounds = std::max<uint32_t>(1, options.defaults.hangRounds);

  // Every chip's report; the faulted chip's first, the others stopped with it.
  auto finish = [&](ChipStop stop, uint64_t now, std::optional<size_t> faulted) {
    result.chips.resize(n);
    forMine([&](size_t i) {
      const bool self = faulted && *faulted == i;
      result.chips[i] = chips[i]->finishRun(faulted && !self ? ChipStop::Fault : stop, now);
      if (faulted && !self) {
        result.chips[i].stop = ChipStop::Fault;
        result.chips[i].message = "stopped at cycle " + std::to_string(now) + ": chip " +
                                  std::to_string(chips[*faulted]->id()) + " faulted";
      }
    });
    if (spread) {
      std::vector<std::vector<uint8_t>> reports = share([&](size_t i, WireWriter& w) { writeChipResult(w, result.chips[i]); });
      for (size_t i = 0; i < n; ++i)
        if (!net.isLocal(chips[i]->id())) {
          WireReader r(reports[i]);
          result.chips[i] = readChipResult(r);
        }
    }
    result.stop = stop;
    for (const ChipRunResult& r : result.chips) result.cycles = std::max(result.cycles, r.cycles);
    // Link utilisation: each chip's sending sides, named by both ends.
    for (size_t i = 0; i < n; ++i) {
      const std::optional<EthPorts>& ports = chips[i]->streams().ethernet();
      const std::vector<EthLinkCounters>& links = result.chips[i].ethLinks;
      for (size_t k = 0; ports && k < links.size() && k < ports->peers.size(); ++k)
        if (links[k].tiles && ports->peers[k])
          result.links.push_back(EthLinkReport{EthEndpoint{chips[i]->id(), static_cast<uint32_t>(k)}, *ports->peers[k],
                                               links[k].tiles, links[k].bytes, links[k].busyCycles});
    }
    if (faulted) {
      const ChipRunResult& r = result.chips[*faulted];
      result.faultChip = chips[*faulted]->id();
      result.faultCategory = r.faultCategory;
      result.faultCore = r.faultCore;
      result.message = "chip " + std::to_string(*result.faultChip) + ": " + r.message;
    } else if (stop == ChipStop::Hang || stop == ChipStop::CycleLimit) {
      result.message = stop == ChipStop::Hang ? "cluster: hang at cycle " + std::to_string(now) + ": no core or stream on any of the " +
                                                    std::to_string(n) + " chips can make progress"
                                              : "cluster: cycle limit reached at cycle " + std::to_string(now);
      for (const ChipRunResult& r : result.chips) {
        for (const std::string& w : r.waitingStreams)
          result.waitingStreams.push_back("chip " + std::to_string(r.chip) + ": " + w);
        const std::string waiting = waitingText(r, "    ");
        if (!waiting.empty()) result.message += "\n  chip " + std::to_string(r.chip) + ":" + waiting;
      }
    } else {
      uint64_t tiles = 0;
      for (const ChipRunResult& r : result.chips) tiles += r.streams.tilesMoved();
      result.message = "cluster: epoch done at cycle " + std::to_string(result.cycles) + " on " + std::to_string(n) +
                       " chips (" + std::to_string(tiles) + " tile transfers)";
      for (const ChipRunResult& r : result.chips) {
        const size_t nl = r.message.find('\n');  // the chip's exit-code lines
        if (nl != std::string::npos) result.message += "\n  chip " + std::to_string(r.chip) + ":" + r.message.substr(nl);
      }
    }
    return result;
  };
  auto firstFault = [&](const std::vector<char>& faulted) -> std::optional<size_t> {
    for (size_t i = 0; i < n; ++i)
      if (faulted[i]) return i;
    return std::nullopt;
  };

  // --- Firmware and prologue on every chip, then the ethernet handshake.
  std::vector<char> faulted(n, 0);
  forMine([&](size_t i) { faulted[i] = !chips[i]->startRun(chipOptions[i]); });
  if (spread) {
    std::vector<std::vector<uint8_t>> flags = share([&](size_t i, WireWriter& w) { w.u8(faulted[i]); });
    for (size_t i = 0; i < n; ++i) faulted[i] = !flags[i].empty() && flags[i][0];
  }
  if (auto f = firstFault(faulted)) return finish(ChipStop::Fault, 0, f);
  std::map<ChipId, EthSetup> setups;
  if (spread) {
    std::vector<std::vector<uint8_t>> all = share([&](size_t i, WireWriter& w) { writeEthSetup(w, chips[i]->streams().ethSetup()); });
    for (size_t i = 0; i < n; ++i) {
      WireReader r(all[i]);
      setups.emplace(chips[i]->id(), readEthSetup(r));
    }
  } else {
    for (Chip* c : chips) setups.emplace(c->id(), c->streams().ethSetup());
  }
  if (std::optional<EthSetupFault> f = checkEthSetup(setups)) {
    const CoreCoord at{static_cast<int>(f->stream.x), static_cast<int>(f->stream.y)};
    size_t i = 0;
    while (i < n && chips[i]->id() != f->chip) ++i;
    // The core's name as its chip's process knows it (the others never made the core).
    const std::vector<std::vector<uint8_t>> names = share([&](size_t k, WireWriter& w) {
      if (k != i) return;
      const TensixCore* core = chips[k]->findCore(at);
      w.str(core ? core->name() : toString(at));
    });
    WireReader nameReader(names[i]);
    const std::string name = nameReader.str();
    finish(ChipStop::Fault, 0, i);
    result.faultCategory = "bad-stream-config";
    result.faultCore = name;
    result.message = "chip " + std::to_string(f->chip) + ": core '" + name + "': " + f->message;
    result.chips[i].stop = ChipStop::Fault;
    result.chips[i].faultCategory = result.faultCategory;
    result.chips[i].faultCore = name;
    result.chips[i].message = result.message;
    return result;
  }
  std::vector<EthReceiverInfo> receivers;
  for (const auto& [id, s] : setups) receivers.insert(receivers.end(), s.receivers.begin(), s.receivers.end());
  for (size_t i : mine) chips[i]->streams().connectEthernet(receivers);

  // --- The rounds.
  std::map<ChipId, size_t> indexOf;
  for (size_t i = 0; i < n; ++i) indexOf[chips[i]->id()] = i;
  std::vector<Chip::Round> rounds(n);
  std::vector<RoundSummary> summary(n);
  std::vector<std::vector<EthPacket>> sent(n), inbox(n);
  uint64_t now = 0;
  uint32_t idle = 0;
  for (;;) {
    const uint64_t until = now + round;
    forMine([&](size_t i) {
      StreamEngine& engine = chips[i]->streams();
      engine.skipTo(now);
      engine.receivePackets(inbox[i]);
      inbox[i].clear();
      Chip::Round all;
      for (uint64_t k = 0; k < slicesPerRound; ++k) {
        const Chip::Round r = chips[i]->runRound(now + k * slice, now + (k + 1) * slice);
        all.progress |= r.progress;
        all.hartsRunning = r.hartsRunning;
        all.done = r.done;
        all.fault = r.fault;
        if (r.fault || r.done) break;
      }
      sent[i] = engine.takePackets();
      RoundSummary& s = summary[i];
      s = RoundSummary{};
      s.fault = all.fault, s.progress = all.progress, s.hartsRunning = all.hartsRunning, s.done = all.done;
      s.busy = chips[i]->streamsBusy();
      s.packets = !sent[i].empty();
      for (const EthPacket& p : sent[i]) s.tiles |= p.kind == EthPacket::Kind::Tile;
      // The next event only matters when nothing moved anywhere (below).
      if (!s.hartsRunning && !s.progress && !s.packets) s.wake = engine.nextWakeTime();
    });
    // Delivery: every packet of the round to its chip (here, or through the
    // transport with every chip's summary), in one order whatever the
    // schedule. None arrives before the next round (S <= latency); the clamp
    // only guards the rule.
    std::vector<WireWriter> out(static_cast<size_t>(net.ranks()));
    if (spread)
      for (size_t i : mine)
        for (int r = 0; r < net.ranks(); ++r)
          if (r != net.rank()) writeSummary(out[static_cast<size_t>(r)], static_cast<uint32_t>(i), summary[i]);
    for (size_t i : mine)
      for (EthPacket& p : sent[i]) {
        p.arrival = std::max(p.arrival, until);
        auto it = indexOf.find(p.dstChip);
        if (it == indexOf.end()) continue;
        if (net.isLocal(p.dstChip)) {
          inbox[it->second].push_back(std::move(p));
        } else {
          WireWriter& w = out[static_cast<size_t>(net.rankOf(p.dstChip))];
          w.u32(0xFFFFFFFFu);  // a packet, not a summary
          appendPacket(w.bytes, p);
        }
      }
    if (spread) {
      std::vector<std::vector<uint8_t>> send(out.size());
      for (size_t r = 0; r < out.size(); ++r) send[r] = std::move(out[r].bytes);
      for (const std::vector<uint8_t>& from : net.exchange(send)) {
        WireReader r(from);
        while (!r.done()) {
          const size_t mark = r.at();
          if (r.u32() == 0xFFFFFFFFu) {
            EthPacket p;
            size_t at = 0;
            std::span<const uint8_t> rest = r.rest();
            if (!readPacket(rest, at, p)) throw std::runtime_error("cluster transport: malformed packet");
            r.at() += at;
            inbox[indexOf.at(p.dstChip)].push_back(std::move(p));
          } else {
            r.at() = mark;
            RoundSummary s;
            const uint32_t i = readSummary(r, s);
            if (i >= n) throw std::runtime_error("cluster transport: summary of an unknown chip");
            summary[i] = s;
          }
        }
      }
    }
    for (size_t i = 0; i < n; ++i) faulted[i] = summary[i].fault;
    if (auto f = firstFault(faulted)) return finish(ChipStop::Fault, until, f);
    for (size_t i : mine) std::stable_sort(inbox[i].begin(), inbox[i].end(), ethDeliveryOrder);
    now = until;
    bool progress = false, tiles = false, hartsRunning = false, busy = false, done = true;
    for (const RoundSummary& s : summary) {
      progress |= s.progress || s.packets;
      tiles |= s.tiles;
      hartsRunning |= s.hartsRunning;
      busy |= s.busy;
      done &= s.done;
    }
    if (done && !tiles) break;  // credits still in flight change nothing
    if (!progress && !busy) ++idle;
    else idle = 0;
    if (idle >= hangRounds || now >= maxCycles) return finish(idle >= hangRounds ? ChipStop::Hang : ChipStop::CycleLimit, now, {});
    // Only streams left and nothing for them to do until a later cycle: every chip skips there.
    if (!hartsRunning && !progress) {
      std::optional<uint64_t> wake;
      for (const RoundSummary& s : summary)
        if (s.wake) wake = wake ? std::min(*wake, *s.wake) : *s.wake;
      if (wake && *wake > now) now = std::min(maxCycles, *wake / round * round);
    }
  }
  return finish(ChipStop::Done, now, {});
}

}  // namespace tessera::sim
