// pipegen, several chips: buffers on ethernet cores and the relay chains
// through them (docs/cluster.md "The data path", docs/pipegen.md "Several
// chips").
//
// A chain carries a producer's tiles to another chip: P -> R_1 (a pipe on
// P's chip to a relay on one of its ethernet cores), R_1 -> R_2 (an
// ethernet pipe: the two ends of a link), maybe R_2 -> R_3 -> R_4 ... (more
// hops), and the consumer's pipe reads the last relay in place of P. Each
// consumer's chunks of the last relay are folded back through the chain to
// chunks of P (as foldRelays does for relays on one chip) that remember the
// relays they pass (Chunk::path). Every relay then gets a stream on its
// ethernet core that forwards those tiles in order (remote_source +
// remote_receiver, or dram_input / dram_output at the ends of a chain): the
// consumer reads the tiles it would have read from P, in its own order, so
// relays never need a window and a relay's ring is a plain FIFO. The price:
// a period a consumer reads twice crosses the link twice.
#include "pipegen/blob_yaml_writer.hpp"
#include "pipegen/stream_builder.hpp"

#include "device/device_contract.h"

#include <functional>

namespace tessera::pipegen::detail {

namespace {

// BUDA pipegen2's order (tt-budabackend ethernet_core_resources): the
// hardware ethernet streams 9-11 first, then 0-3 (which could also
// multicast); the rest, 12-31 then 4-8, for relays that do not use the
// link, and for those that do once the hardware streams are taken (BUDA's
// firmware ethernet streams; the simulator moves them alike).
constexpr uint32_t kLinkStreams[] = {9,  10, 11, 0,  1,  2,  3,  12, 13, 14, 15, 16, 17, 18, 19, 20,
                                     21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 4,  5,  6,  7,  8};
constexpr uint32_t kOtherStreams[] = {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                                      26, 27, 28, 29, 30, 31, 4,  5,  6,  7,  8};
static_assert(std::size(kLinkStreams) == contract::kEthStreamsPerCore);

std::string endpointText(uint32_t chip, uint32_t chan) {
  return "chip " + std::to_string(chip) + " channel " + std::to_string(chan);
}

}  // namespace

std::string StreamBuilder::ethCoreText(const Buffer& b) const {
  if (b.pcieRelay) return "chip " + std::to_string(b.chipId) + " core " + coreText(b.core.r, b.core.c) + " (PCIe relay)";
  std::string s = "chip " + std::to_string(b.chipId) + " ethernet core";
  if (b.ethernetChan) s += " (channel " + std::to_string(*b.ethernetChan) + ")";
  return s;
}

uint32_t StreamBuilder::pathId(const std::vector<uint32_t>& relays) {
  if (relays.empty()) return 0;
  auto [it, fresh] = pathIds_.emplace(relays, static_cast<uint32_t>(paths_.size()));
  if (fresh) paths_.push_back(relays);
  return it->second;
}

uint32_t StreamBuilder::joinPaths(uint32_t first, uint32_t second) {
  if (first == 0) return second;
  if (second == 0) return first;
  std::vector<uint32_t> joined = paths_[first];
  joined.insert(joined.end(), paths_[second].begin(), paths_[second].end());
  return pathId(joined);
}

std::vector<int> StreamBuilder::relayStreams(uint32_t path) const {
  std::vector<int> out;
  out.reserve(paths_[path].size());
  for (uint32_t b : paths_[path]) out.push_back(info_[b].stream);
  return out;
}

// A relay or ethernet buffer on an ethernet core: channel and coordinates
// must name one of the device's ethernet cores.
bool StreamBuilder::classifyEthernetBuffer(size_t i) {
  const Buffer& b = bufferAt(i);
  BufInfo& in = info_[i];
  in.kind = BufKind::Other;
  if (b.pcieRelay) return classifyPcieRelay(i);
  if (b.bufferType != BufferType::Relay && b.bufferType != BufferType::Ethernet) {
    bufError("pipegen-buffer", b,
             "ethernet_chan on a " + b.bufferTypeText + " buffer: only relay and ethernet buffers sit on ethernet cores");
    return false;
  }
  if (!b.ethernetChan) {
    bufError("pipegen-buffer", b, "an ethernet buffer needs ethernet_chan (the channel of the ethernet core it sits on)");
    return false;
  }
  const uint32_t chan = *b.ethernetChan;
  if (soc_.ethCores.empty()) {
    bufError("pipegen-buffer", b, "device '" + soc_.name + "' has no ethernet cores (ethernet_chan " +
                                      std::to_string(chan) + ")");
    return false;
  }
  if (chan >= soc_.ethCores.size()) {
    bufError("pipegen-buffer", b,
             "ethernet_chan " + std::to_string(chan) + " is not a channel of device '" + soc_.name + "' (0-" +
                 std::to_string(soc_.ethCores.size() - 1) + ")");
    return false;
  }
  const CoreCoord noc = soc_.ethCores[chan];
  if (static_cast<int64_t>(b.core.r) != noc.y || static_cast<int64_t>(b.core.c) != noc.x) {
    bufError("pipegen-buffer", b,
             "core_coordinates " + coreText(b.core.r, b.core.c) + " are not those of ethernet channel " +
                 std::to_string(chan) + " of '" + soc_.name + "': its NOC [y, x] is " +
                 coreText(static_cast<uint32_t>(noc.y), static_cast<uint32_t>(noc.x)));
    return false;
  }
  if (b.sizeTiles == 0) {
    bufError("pipegen-buffer", b, "size_tiles is 0");
    return false;
  }
  in.kind = BufKind::EthRelay;
  return true;
}

// A relay of a chain through the host (pcie_relay): a relay buffer on a
// worker core of a device without ethernet but with a PCIe core.
bool StreamBuilder::classifyPcieRelay(size_t i) {
  const Buffer& b = bufferAt(i);
  if (b.bufferType != BufferType::Relay || b.ethernetChan) {
    bufError("pipegen-buffer", b, "pcie_relay on a " + b.bufferTypeText +
                                      (b.ethernetChan ? " buffer with ethernet_chan" : " buffer") +
                                      ": only a relay buffer on a worker core relays through PCIe");
    return false;
  }
  if (!soc_.ethCores.empty() || soc_.pcie.empty()) {
    bufError("pipegen-buffer", b,
             "pcie_relay on device '" + soc_.name + "': only chips without ethernet and with a PCIe core relay through PCIe");
    return false;
  }
  if (soc_.workerCore(static_cast<int>(b.core.r), static_cast<int>(b.core.c)).x < 0) {
    bufError("pipegen-buffer", b,
             "core_coordinates " + coreText(b.core.r, b.core.c) + " are not a worker core of '" + soc_.name + "'");
    return false;
  }
  if (b.sizeTiles == 0) {
    bufError("pipegen-buffer", b, "size_tiles is 0");
    return false;
  }
  info_[i].kind = BufKind::EthRelay;
  return true;
}

// A pipe stays on one chip, or is an ethernet pipe: one relay or ethernet
// buffer on an ethernet core to one on another chip, at the two ends of a
// link of the cluster.
bool StreamBuilder::checkPipeChips(Plan& plan) {
  const Pipe& p = doc_.pipes[plan.pipe];
  std::set<uint32_t> ins, outs, inChips, outChips;
  for (const Chunk& c : plan.chunks) {
    ins.insert(c.buf);
    inChips.insert(bufferAt(c.buf).chipId);
  }
  for (const auto& g : plan.groups)
    for (uint32_t b : g) {
      outs.insert(b);
      outChips.insert(bufferAt(b).chipId);
    }
  std::set<uint32_t> chips = inChips;
  chips.insert(outChips.begin(), outChips.end());
  if (chips.size() <= 1) return true;
  if (auto through = checkPcieChips(plan, ins, outs)) return *through;
  auto list = [](const std::set<uint32_t>& s) {
    std::string t;
    for (uint32_t c : s) t += (t.empty() ? "" : ", ") + std::to_string(c);
    return t;
  };
  const bool shape = ins.size() == 1 && outs.size() == 1 && info_[*ins.begin()].kind == BufKind::EthRelay &&
                     info_[*outs.begin()].kind == BufKind::EthRelay;
  if (!shape) {
    auto d = pipeError("ethernet-pipe", p,
                       "crosses chips (inputs on chip " + list(inChips) + ", outputs on chip " + list(outChips) +
                           "): only an ethernet pipe, from one relay or ethernet buffer on an ethernet core to one on "
                           "an ethernet core of the other chip (without ethernet: from one PCIe relay to one of the "
                           "other chip), may cross chips");
    std::set<uint32_t> noted;  // one buffer per chip
    for (uint32_t b : ins)
      if (noted.insert(bufferAt(b).chipId).second) noteBuf(d, bufferAt(b));
    for (uint32_t b : outs)
      if (noted.insert(bufferAt(b).chipId).second) noteBuf(d, bufferAt(b));
    return false;
  }
  plan.ethPipe = true;
  const Buffer &from = bufferAt(*ins.begin()), &to = bufferAt(*outs.begin());
  // Through the host: PCIe reaches every chip, no link to check.
  if (from.pcieRelay != to.pcieRelay) {
    noteBuf(noteBuf(pipeError("ethernet-pipe", p, "joins a PCIe relay and a relay on an ethernet core"), from), to);
    return false;
  }
  if (from.pcieRelay || !opts_.cluster) return true;
  const EthEndpoint a{from.chipId, *from.ethernetChan}, b{to.chipId, *to.ethernetChan};
  auto peer = [&](EthEndpoint e) -> std::optional<EthEndpoint> {
    for (const EthLink& l : opts_.cluster->links) {
      if (l.a == e) return l.b;
      if (l.b == e) return l.a;
    }
    return std::nullopt;
  };
  if (peer(a) == b) return true;
  auto d = pipeError("ethernet-link", p,
                     "joins " + endpointText(a.chip, a.chan) + " and " + endpointText(b.chip, b.chan) +
                         ", which are not the two ends of an ethernet link of cluster '" + opts_.cluster->name + "'");
  for (EthEndpoint e : {a, b}) {
    auto q = peer(e);
    d.note(endpointText(e.chip, e.chan) + (q ? " is linked to " + endpointText(q->chip, q->chan) : " has no link"));
  }
  noteBuf(noteBuf(d, from), to);
  return false;
}

// Consumers' chunks of ethernet relays -> chunks of what feeds the chains.
bool StreamBuilder::foldEthernetChains() {
  size_t errors = diags_.errorCount();
  if (std::none_of(info_.begin(), info_.end(), [](const BufInfo& in) { return in.kind == BufKind::EthRelay; }))
    return true;
  std::vector<bool> feeds(plans_.size(), false);  // writes an ethernet relay
  std::set<uint32_t> read;                        // ethernet relays some pipe reads
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    Plan& plan = plans_[pi];
    for (const auto& g : plan.groups)
      for (uint32_t b : g) feeds[pi] = feeds[pi] || info_[b].kind == BufKind::EthRelay;
    for (const Chunk& c : plan.chunks)
      if (info_[c.buf].kind == BufKind::EthRelay) read.insert(c.buf);
    if (feeds[pi] && !(plan.groups.size() == 1 && plan.groups[0].size() == 1))
      pipeError("unsupported", pipeOfPlan(pi), "a pipe that writes a relay buffer on an ethernet core must have it as its only output");
  }
  if (diags_.errorCount() != errors) return false;
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    Plan& plan = plans_[pi];
    if (feeds[pi] || std::none_of(plan.chunks.begin(), plan.chunks.end(),
                                  [&](const Chunk& c) { return info_[c.buf].kind == BufKind::EthRelay; }))
      continue;
    std::vector<Chunk> out;
    for (const Chunk& ch : plan.chunks) {
      if (info_[ch.buf].kind != BufKind::EthRelay) out.push_back(ch);
      else if (!expandRelay(ch.buf, ch.offset, ch.tiles, {}, pi, 0, out)) return false;
    }
    plan.chunks = std::move(out);
    plan.chained = true;
  }
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    if (!feeds[pi]) continue;
    plans_[pi].dropped = true;
    const uint32_t relay = plans_[pi].groups[0][0];
    if (!read.count(relay))
      diags_.warning("unconnected-buffer", locOf(pipeOfPlan(pi).pos),
                     "pipe " + std::to_string(pipeOfPlan(pi).id) + " writes " + bufName(bufferAt(relay)) + " on " + ethCoreText(bufferAt(relay)) +
                         ", which no pipe reads");
  }
  return diags_.errorCount() == errors;
}

// Tiles [offset, offset + tiles) of a period of `relay`, read by plan
// `plan` through the relays `after`: the chunks of the relay's own pipe that
// carried them, recursively up the chain.
bool StreamBuilder::expandRelay(uint32_t relay, uint64_t offset, uint64_t tiles, const std::vector<uint32_t>& after,
                          size_t plan, size_t depth, std::vector<Chunk>& out) {
  const Buffer& r = bufferAt(relay);
  if (depth > doc_.buffers.size()) {
    noteBuf(pipeError("unsupported", pipeOfPlan(plan), "relay buffers on ethernet cores feed each other in a cycle"), r);
    return false;
  }
  const int writer = info_[relay].writerPipe;
  if (writer < 0) {
    noteBuf(pipeError("pipegen-pipe", pipeOfPlan(plan), "reads relay buffer " + std::to_string(r.uniqid) + " that no pipe writes"), r);
    return false;
  }
  const Plan* pa = nullptr;
  for (const Plan& k : plans_)
    if (k.pipe == static_cast<size_t>(writer)) pa = &k;
  if (!pa) return false;  // its pipe had an error (reported)
  const Pipe& wp = doc_.pipes[pa->pipe];
  if (pa->passesPerRound != 1 || pa->passTiles != info_[relay].period) {
    noteBuf(pipeError("unsupported", wp,
                      "writes " + bufName(r) + " on " + ethCoreText(r) + " in passes of " +
                          std::to_string(pa->passTiles) + " tiles" +
                          (pa->passesPerRound > 1 ? ", " + std::to_string(pa->passesPerRound) + " passes a round" : std::string()) +
                          ": a relay chain needs one pass of exactly one period of the relay (" +
                          std::to_string(info_[relay].period) + " tiles)"),
            r);
    return false;
  }
  std::vector<uint32_t> path{relay};
  path.insert(path.end(), after.begin(), after.end());
  uint64_t at = 0;
  for (const Chunk& a : pa->chunks) {
    const uint64_t lo = std::max(at, offset), hi = std::min(at + a.tiles, offset + tiles);
    if (lo < hi) {
      if (info_[a.buf].kind == BufKind::EthRelay) {
        if (!expandRelay(a.buf, a.offset + (lo - at), hi - lo, path, plan, depth + 1, out)) return false;
      } else {
        out.push_back({a.buf, a.offset + (lo - at), hi - lo, joinPaths(a.path, pathId(path))});
      }
      if (out.size() > kMaxFoldedChunks) {
        pipeError("unsupported", pipeOfPlan(plan),
                  "folding relay chains gives more than " + std::to_string(kMaxFoldedChunks) + " input chunks");
        return false;
      }
    }
    at += a.tiles;
  }
  return true;
}

// A DRAM write through a chain is the last relay's: every chunk must come
// through the same last relay (one stream writes the buffer, in order).
bool StreamBuilder::checkChainedPlans() {
  size_t errors = diags_.errorCount();
  for (const Plan& plan : plans_) {
    if (plan.dropped || !plan.chained || !plan.dramOut) continue;
    std::optional<uint32_t> last;
    for (const Chunk& c : plan.chunks) {
      const std::optional<uint32_t> mine =
          c.path ? std::optional<uint32_t>(paths_[c.path].back()) : std::nullopt;
      if (!mine || (last && *last != *mine)) {
        pipeError("unsupported", doc_.pipes[plan.pipe],
                  "writes DRAM from tiles of more than one stream, some through relays on ethernet cores; a DRAM "
                  "buffer written over ethernet takes all its tiles from one relay");
        break;
      }
      last = mine;
    }
  }
  return diags_.errorCount() == errors;
}

// One stream per relay that carries tiles, on its ethernet core: an
// ethernet-capable id when its tiles cross the core's link.
bool StreamBuilder::placeRelayStreams() {
  if (paths_.size() == 1) return true;
  if (!checkChainedPlans()) return false;
  size_t errors = diags_.errorCount();
  std::set<uint32_t> used, linked;
  std::map<uint32_t, std::set<uint32_t>> sendsTo, receivesFrom;  // relay -> other chips
  for (const Plan& plan : plans_) {
    if (plan.dropped) continue;
    for (const Chunk& c : plan.chunks) {
      const auto& path = paths_[c.path];
      for (size_t k = 0; k < path.size(); ++k) {
        used.insert(path[k]);
        if (k > 0 && bufferAt(path[k - 1]).chipId != bufferAt(path[k]).chipId) {
          linked.insert(path[k - 1]);
          linked.insert(path[k]);
          sendsTo[path[k - 1]].insert(bufferAt(path[k]).chipId);
          receivesFrom[path[k]].insert(bufferAt(path[k - 1]).chipId);
        }
      }
    }
  }
  auto chipList = [](const std::set<uint32_t>& s) {
    std::string t;
    for (uint32_t c : s) t += (t.empty() ? "" : ", ") + std::to_string(c);
    return t;
  };
  for (uint32_t r : used) {
    const Buffer& b = bufferAt(r);
    // A PCIe relay's stream is a worker core's (logical r, c; no other
    // stream on its core): its tiles cross through the PCIe cores.
    const bool pcie = b.pcieRelay;
    const CoreCoord noc = pcie ? soc_.workerCore(static_cast<int>(b.core.r), static_cast<int>(b.core.c))
                               : soc_.ethCores[*b.ethernetChan];
    const uint32_t y = pcie ? b.core.r : static_cast<uint32_t>(noc.y), x = pcie ? b.core.c : static_cast<uint32_t>(noc.x);
    auto& taken = usedIds_[CoreKey{b.chipId, y, x, pcie ? 0u : 1u}];
    const bool link = linked.count(r) != 0;
    std::optional<uint32_t> id;
    auto pick = [&](auto& pool) {
      for (uint32_t s : pool)
        if (!taken.count(s)) return std::optional<uint32_t>(s);
      return std::optional<uint32_t>();
    };
    id = link ? pick(kLinkStreams) : pick(kOtherStreams);
    if (!id) {
      auto d = bufError("out-of-streams", b,
                        ethCoreText(b) + " has no free stream for this relay (" +
                            (link ? "a relay over the link may use any of its 32"
                                  : "a relay that does not use the link may use 12-31 and 4-8") +
                            ")");
      for (const StreamInfo& s : streams_)
        if (s.eth && s.name.chip == b.chipId && s.r == y && s.c == x) d.note(s.loc, s.what);
      continue;
    }
    taken.insert(*id);
    StreamInfo s;
    s.name = blob::StreamName{b.chipId, static_cast<uint32_t>(noc.y), static_cast<uint32_t>(noc.x), *id};
    s.r = y;
    s.c = x;
    s.eth = !pcie;
    s.ethChan = pcie ? 0 : *b.ethernetChan;
    s.buf = static_cast<int>(r);
    s.role = StreamRole::Relay;
    s.msgSize = b.tileSize;
    s.dataFormat = formatOf(b);
    s.ringTiles = b.sizeTiles;
    s.loc = locOf(b.pos);
    s.what = "stream " + std::to_string(*id) + " (relay " + bufName(b) + ")";
    std::string roles;
    const std::string via = pcie ? "PCIe" : "ethernet";
    if (receivesFrom.count(r)) roles += ", " + via + " receiver from chip " + chipList(receivesFrom[r]);
    if (sendsTo.count(r)) roles += ", " + via + " sender to chip " + chipList(sendsTo[r]);
    s.comment = "relay '" + b.mdOpName + "' (" + bufName(b) + ") on " + ethCoreText(b) + roles;
    info_[r].stream = static_cast<int>(streams_.size());
    streams_.push_back(std::move(s));
  }
  return diags_.errorCount() == errors;
}

// The order of every relay stream's phases. Links pair phases by order, so
// a relay with one upstream (the stream before it: the chain's sender or
// the relay before it) forwards in that stream's order. A relay gathering
// several streams (the first relay of a chain whose pipe gathers packers)
// takes the transfers in the order they were made, the consumers' order,
// which must be each upstream's order too.
bool StreamBuilder::orderRelayItems() {
  if (paths_.size() == 1) return true;
  size_t errors = diags_.errorCount();
  std::vector<std::set<int>> upstreams(streams_.size());
  std::vector<std::vector<size_t>> through(streams_.size());  // transfers through each relay, made order
  std::vector<bool> reads(streams_.size(), false), reported(streams_.size(), false);
  auto fail = [&](int relay, const std::string& why) {
    if (reported[static_cast<size_t>(relay)]) return;
    reported[static_cast<size_t>(relay)] = true;
    const StreamInfo& s = streams_[static_cast<size_t>(relay)];
    bufError("unsupported", bufferAt(static_cast<size_t>(s.buf)),
             "its relay stream (" + streamKey(s.name) + ") " + why + ": a relay forwards its tiles in order");
  };
  auto upOf = [](const Transfer& t, size_t k) { return k ? t.relays[k - 1] : t.sender; };
  for (size_t ti = 0; ti < transfers_.size(); ++ti) {
    const Transfer& t = transfers_[ti];
    if (streams_[static_cast<size_t>(t.sender)].role == StreamRole::Relay) reads[static_cast<size_t>(t.sender)] = true;
    for (size_t k = 0; k < t.relays.size(); ++k) {
      upstreams[static_cast<size_t>(t.relays[k])].insert(upOf(t, k));
      through[static_cast<size_t>(t.relays[k])].push_back(ti);
    }
  }
  for (size_t r = 0; r < streams_.size(); ++r)
    if (reads[r] && !upstreams[r].empty())
      fail(static_cast<int>(r), "would read DRAM and also receive tiles from " +
                                    streamKey(streams_[static_cast<size_t>(*upstreams[r].begin())].name));
  if (diags_.errorCount() != errors) return false;
  // The transfers a stream sends on to relay r, in that stream's order.
  auto sentTo = [&](int up, int r) {
    std::vector<size_t> out;
    for (size_t ti : streams_[static_cast<size_t>(up)].items) {
      const Transfer& t = transfers_[ti];
      for (size_t k = 0; k < t.relays.size(); ++k)
        if (t.relays[k] == r && upOf(t, k) == up) out.push_back(ti);
    }
    return out;
  };
  std::vector<char> done(streams_.size(), 0);
  std::function<void(int)> build = [&](int r) {
    if (done[static_cast<size_t>(r)]) return;
    done[static_cast<size_t>(r)] = 1;
    for (int up : upstreams[static_cast<size_t>(r)])
      if (streams_[static_cast<size_t>(up)].role == StreamRole::Relay && !reads[static_cast<size_t>(up)]) build(up);
    if (upstreams[static_cast<size_t>(r)].size() == 1) {
      for (size_t ti : sentTo(*upstreams[static_cast<size_t>(r)].begin(), r)) addItem(r, ti);
      return;
    }
    for (int up : upstreams[static_cast<size_t>(r)]) {
      const std::vector<size_t> order = sentTo(up, r);
      if (!std::is_sorted(order.begin(), order.end()))
        fail(r, "gathers tiles from " + streamKey(streams_[static_cast<size_t>(up)].name) +
                    " in an order that stream does not send them in");
    }
    for (size_t ti : through[static_cast<size_t>(r)]) addItem(r, ti);
  };
  for (size_t r = 0; r < streams_.size(); ++r)
    if (streams_[r].role == StreamRole::Relay && !upstreams[r].empty()) build(static_cast<int>(r));
  if (diags_.errorCount() != errors) return false;
  // The last relay's link to each output must carry the tiles in the order
  // the output takes them (on one chip each packer has its own link to a
  // reader; a chain funnels them all through one).
  for (size_t r = 0; r < streams_.size(); ++r) {
    if (streams_[r].role != StreamRole::Relay) continue;
    std::map<int, std::vector<size_t>> toDest;
    for (size_t ti : streams_[r].items) {
      const Transfer& t = transfers_[ti];
      if (t.relays.empty() || t.relays.back() != static_cast<int>(r)) continue;
      for (int d : t.dest) toDest[d].push_back(ti);
    }
    for (auto& [d, sent] : toDest) {
      std::vector<size_t> taken;
      for (size_t ti : streams_[static_cast<size_t>(d)].items)
        if (!transfers_[ti].relays.empty() && transfers_[ti].relays.back() == static_cast<int>(r)) taken.push_back(ti);
      if (taken != sent) {
        fail(static_cast<int>(r), "would send " + streamKey(streams_[static_cast<size_t>(d)].name) +
                                      " its tiles in another order than that stream takes them");
        break;
      }
    }
  }
  return diags_.errorCount() == errors;
}

// The phase of relay stream `si` for transfer `t`: from the stream before
// it in the chain to the one after it, or to the transfer's outputs (or
// its DRAM buffer) when it is the last. Returns the DRAM buffer it writes,
// -1 for none.
int StreamBuilder::emitRelayPhase(const Transfer& t, size_t si, blob::StreamPhase& ph) {
  const StreamInfo& s = streams_[si];
  size_t k = 0;
  while (k < t.relays.size() && t.relays[k] != static_cast<int>(si)) ++k;
  const Pipe& in = pipeWriting(static_cast<uint32_t>(s.buf));  // the pipe that feeds this relay
  ph.pipeId = in.id;
  ph.remoteSource = true;
  ph.src.push_back(streams_[static_cast<size_t>(k ? t.relays[k - 1] : t.sender)].name);
  ph.incomingDataNoc = in.incomingNocId;
  if (k + 1 < t.relays.size()) {
    const StreamInfo& next = streams_[static_cast<size_t>(t.relays[k + 1])];
    const Pipe& out = pipeWriting(static_cast<uint32_t>(next.buf));
    ph.remoteReceiver = true;
    ph.dest.push_back(next.name);
    ph.outgoingDataNoc = out.outgoingNocId;
    ph.vc = out.outgoingVc;
    return -1;
  }
  const Pipe& out = pipeOfPlan(t.plan);
  ph.outgoingDataNoc = out.outgoingNocId;
  ph.vc = out.outgoingVc;
  if (t.relayDramOut >= 0) {
    const size_t d = static_cast<size_t>(t.relayDramOut);
    ph.dramOutput = true;
    ph.dramBufNocAddr = dramAddr(bufferAt(d));
    ph.dramRam = info_[d].ramLike;
    return t.relayDramOut;
  }
  ph.remoteReceiver = true;
  for (int d : t.dest) ph.dest.push_back(streams_[static_cast<size_t>(d)].name);
  return -1;
}

}  // namespace tessera::pipegen::detail
