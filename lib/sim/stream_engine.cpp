// The stream engine (stream_engine.hpp) of one chip: rings and phases,
// transfers (NOC, DRAM reads and writes), running the epoch. Its
// configuration from blob bytes is in stream_engine_configure.cpp, its wait
// reports in stream_engine_reports.cpp, its ethernet side in
// stream_engine_eth.cpp.
#include "sim/stream_engine.hpp"

#include "device/device_contract.h"
#include "sim/fault_injection.hpp"
#include "sim/tensix_core.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sim/stream_engine_state.hpp"

namespace tessera::sim {

using namespace engine_detail;

std::string streamNameText(const StreamName& n) {
  return "chip_" + std::to_string(n.chip) + "__y_" + std::to_string(n.y) + "__x_" + std::to_string(n.x) +
         "__stream_id_" + std::to_string(n.streamId);
}

StreamEngine::StreamEngine(const SocDescriptor& soc, Dram& dram, const DataMovementModel& model, Dram* host)
    : soc_(soc), dram_(dram), host_(host), model_(model) {
  cores_.resize(static_cast<size_t>(std::max(1, soc.gridX)) * static_cast<size_t>(std::max(1, soc.gridY)));
  dramBusy_.assign(dram.channelCount() + 1, 0);
}

uint64_t StreamEngine::transferCycles(const DramLocation& loc, uint64_t bytes) const {
  return loc.host ? pcieTransferCycles(model_.pcie, bytes) : dramTransferCycles(model_.dram, bytes);
}

uint64_t StreamEngine::latencyOf(const DramLocation& loc) const {
  return loc.host ? model_.pcie.latency : model_.dram.latency;
}

StreamEngine::~StreamEngine() = default;

void StreamEngine::attachCore(CoreCoord noc, TensixCore& core, bool ethernet) {
  if (noc.x < 0 || noc.y < 0 || noc.x >= soc_.gridX || noc.y >= soc_.gridY) return;
  auto& slot = cores_[static_cast<size_t>(noc.y) * soc_.gridX + noc.x];
  if (!slot) slot = std::make_unique<CoreSlot>();
  slot->noc = noc;
  slot->core = &core;
  slot->ethernet = ethernet;
}

StreamEngine::CoreSlot* StreamEngine::coreAt(uint32_t x, uint32_t y) {
  if (x >= static_cast<uint32_t>(soc_.gridX) || y >= static_cast<uint32_t>(soc_.gridY)) return nullptr;
  CoreSlot* s = cores_[size_t{y} * soc_.gridX + x].get();
  return s && s->core ? s : nullptr;
}

const StreamEngine::CoreSlot* StreamEngine::coreAt(uint32_t x, uint32_t y) const {
  return const_cast<StreamEngine*>(this)->coreAt(x, y);
}

void StreamEngine::clear() {
  streams_.clear();
  byName_.clear();
  events_ = {};
  releasePending_.clear();
  readers_.clear();
  gradients_.clear();
  dramBusy_.assign(dram_.channelCount() + 1, 0);
  for (auto& cs : cores_)
    if (cs) {
      cs->portBusy = {};
      cs->lastActivity = 0;
      cs->producers.clear();
    }
  seq_ = 0;
  now_ = 0;
  wake_ = ~uint64_t{0};
  lastActivity_ = 0;
  counters_ = {};
  fault_.reset();
  ethTxBusy_.assign(eth_ ? eth_->channelCount() : 0, 0);
  ethLinks_.assign(eth_ ? eth_->channelCount() : 0, EthLinkCounters{});
  outbox_.clear();
  ethSeq_ = 0;
}

size_t StreamEngine::streamCount() const { return streams_.size(); }

StreamEngine::Stream* StreamEngine::find(const StreamName& name) {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}
const StreamEngine::Stream* StreamEngine::find(const StreamName& name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

// --- Rings and phases --------------------------------------------------------------

uint64_t StreamEngine::ringValid(const Ring& r) const {
  if (r.kernelProduces)
    return (r.group ? r.group->acked : r.freed) + r.core->tilesOccupied(static_cast<uint32_t>(r.operand));
  return r.valid;
}

uint64_t StreamEngine::ringFreed(const Ring& r) const {
  if (r.kernelConsumes) {
    const uint64_t occ = r.core->tilesOccupied(static_cast<uint32_t>(r.operand));
    return occ > r.valid ? 0 : r.valid - occ;
  }
  return r.freed;
}

uint32_t StreamEngine::ringFree(const Ring& r) const {
  const uint64_t used = r.reserved - std::min(r.reserved, ringFreed(r));
  return used >= r.slots ? 0 : static_cast<uint32_t>(r.slots - used);
}

StreamEngine::Ring* StreamEngine::ringFor(Stream& s, const StreamPhase& p) {
  for (auto& r : s.rings)
    if (r->base == p.bufAddr && r->bytes == p.bufSize && r->msgSize == p.msgSize) return r.get();
  auto r = std::make_unique<Ring>();
  r->base = p.bufAddr;
  r->bytes = p.bufSize;
  r->msgSize = p.msgSize;
  r->slots = p.bufSize / p.msgSize;
  r->core = s.core->core;
  r->slot = s.core;
  r->operand = s.operand;
  if (s.operand >= 0) {
    for (const StreamPhase& q : s.phases) {
      r->kernelConsumes |= q.localReceiver;
      r->kernelProduces |= q.sourceEndpoint;
    }
    // The kernel's counters start at what they hold now (0 after an epoch reset).
    const uint32_t op = static_cast<uint32_t>(s.operand);
    if (r->kernelConsumes) r->valid = r->reserved = r->core->tilesReceived(op);
    if (r->kernelProduces) {
      ProducerGroup& g = s.core->producers[s.operand];
      if (g.rings.empty()) g.acked = r->core->tilesAcked(op);
      g.rings.push_back(r.get());
      r->group = &g;
      // A fork stream created late starts where the kernel's ACKED stands
      // (nothing is acked before every producing stream exists).
      r->freed = r->sent = r->periodBase = r->releaseAsked = r->releaseScheduled = g.acked;
    }
    r->observed = r->freed;
  }
  r->slotTime.assign(r->slots, 0);
  if (s.ethRx) r->ethReceiver = &s;
  s.rings.push_back(std::move(r));
  return s.rings.back().get();
}

StreamEngine::DramCursor* StreamEngine::cursorFor(Stream& s, const StreamPhase& p) {
  for (auto& cur : s.cursors)
    if (cur->nocAddr == p.dramBufNocAddr && cur->reader == p.dramInput) return cur.get();
  const std::optional<DramLocation> loc = decodeDramNocAddress(soc_, p.dramBufNocAddr);
  if (!loc) {
    setFault(s, "dram-address", "dram_buf_noc_addr " + support::hexLiteral(p.dramBufNocAddr) + " names no DRAM channel or PCIe core");
    return nullptr;
  }
  if (loc->host && !host_) {
    setFault(s, "dram-address", "dram_buf_noc_addr " + support::hexLiteral(p.dramBufNocAddr) + " is host memory, and none is attached");
    return nullptr;
  }
  Dram& mem = memOf(*loc);
  const char* what = loc->host ? "host" : "DRAM";
  const QueueHeader h = readQueueHeader(mem, loc->channel, loc->address);
  auto cur = std::make_unique<DramCursor>();
  cur->nocAddr = p.dramBufNocAddr;
  cur->loc = *loc;
  cur->reader = p.dramInput;
  cur->ram = p.dramRam;
  cur->slots = h.slots ? h.slots : p.dramBufSizeQSlots;
  cur->tilesPerEntry = p.dramBufSizeTiles;
  cur->msgSize = p.msgSize;
  cur->entryBytes = uint64_t{p.dramBufSizeTiles} * p.msgSize;
  if (cur->slots == 0) {
    setFault(s, "bad-stream-config",
             std::string("the ") + what + " buffer at channel " + std::to_string(loc->channel) + " address " + support::hexLiteral(loc->address) +
                 " has 0 slots (header slots and dram_buf_size_q_slots are both 0)");
    return nullptr;
  }
  const uint64_t end = kQueueHeaderBytes + uint64_t{cur->slots} * cur->entryBytes;
  if (!mem.inRange(loc->channel, loc->address, end)) {
    setFault(s, "dram-address",
             std::string("the ") + what + " buffer [" + support::hexLiteral(loc->address) + ", " + support::hexLiteral(loc->address + end) + ") of channel " +
                 std::to_string(loc->channel) + " ends past the channel's " + support::hexLiteral(mem.channelBytes()) + " bytes");
    return nullptr;
  }
  if (cur->reader) {
    cur->startPtr = wrapPointer(h.rdPtr, cur->slots);
    cur->stay = h.rdStay != 0;
    cur->ramStep = h.rdAutoinc;
    cur->totalReaders = std::max<uint32_t>(1, p.dramTotalReaders);
    readers_[std::make_tuple(loc->host, loc->channel, loc->address)].cursors.push_back(cur.get());
  }
  s.cursors.push_back(std::move(cur));
  return s.cursors.back().get();
}

bool StreamEngine::enterPhase(Stream& s) {
  const StreamPhase& p = s.phases[s.phase];
  Ring* r = ringFor(s, p);
  if (s.ring && r != s.ring && !s.ring->kernelConsumes && !s.ring->kernelProduces &&
      ringFreed(*s.ring) < s.ring->reserved)
    return false;  // the previous buffer still holds tiles in flight
  s.ring = r;
  s.first = r->assigned;
  s.n = p.numMsgs;
  r->assigned += p.numMsgs;
  s.srcIdx = 0;
  s.in = s.out = 0;
  s.lastDepart = 0;
  s.dests.clear();
  s.ethDest = nullptr;
  if (p.remoteReceiver)
    for (const StreamName& d : p.dest) s.dests.push_back(find(d));
  if (p.remoteReceiver && p.dest.size() == 1 && isRemote(p.dest[0]))
    for (auto& tx : s.ethTx)
      if (tx->to == p.dest[0]) s.ethDest = tx.get();
  s.cursor = nullptr;
  if (p.dramInput || p.dramOutput) {
    s.cursor = cursorFor(s, p);
    if (!s.cursor) return false;
  }
  s.entered = true;
  return true;
}

bool StreamEngine::phaseComplete(const Stream& s) const {
  const StreamPhase& p = s.phases[s.phase];
  if (p.localReceiver) return ringValid(*s.ring) >= s.first + s.n;
  return s.out >= s.n;
}

void StreamEngine::completePhase(Stream& s) {
  const StreamPhase& p = s.phases[s.phase];
  if (p.remoteReceiver) {
    // The next sender of each receiver's gather may start.
    for (Stream* d : s.dests) {
      if (!d || !d->entered) continue;
      const StreamPhase& dp = d->phases[d->phase];
      if (dp.remoteSource) d->srcIdx = dp.src.empty() ? 0 : static_cast<uint32_t>((d->srcIdx + 1) % dp.src.size());
    }
  }
  if (p.sourceEndpoint && p.srcPeriodTiles > 0) {
    // Release the period's first src_freed_tiles (all of it after the last
    // phase): the packer's slots come back once the phase's tiles have left.
    Ring& r = *s.ring;
    const uint64_t upTo = p.srcPeriodDone ? p.srcPeriodTiles : std::min(p.srcFreedTiles, p.srcPeriodTiles);
    r.releaseAsked = std::max(r.releaseAsked, r.periodBase + upTo);
    releaseWritten(r, std::max(now_, s.lastDepart));
    if (p.srcPeriodDone) r.periodBase += p.srcPeriodTiles;
  }
  if (p.srcPeriodDone && p.srcPeriodTiles > 0) {
    // A ram's read pointer steps by its header's rd_autoinc (BUDA's
    // global_rdptr_autoinc) per entry read; a queue's reader moves one slot.
    if (p.dramInput && s.cursor && s.cursor->ram) s.cursor->ramSlot += s.cursor->ramStep;
    if (p.dramInput && s.cursor) moveReaderPast(s, *s.cursor);
  }
  s.entered = false;
  if (++s.phase == s.phases.size()) {
    s.phase = 0;
    if (++s.iter >= s.iters) {
      s.done = true;
      s.phase = s.phases.size() - 1;
    }
  }
}

bool StreamEngine::releaseWritten(Ring& r, uint64_t when) {
  const uint64_t upTo = std::min(r.releaseAsked, ringValid(r));
  const bool any = r.releaseScheduled < upTo;
  for (; r.releaseScheduled < upTo; ++r.releaseScheduled) schedule(when, Event::Kind::Free, &r);
  if (r.releaseScheduled < r.releaseAsked && !r.releasePending) {
    r.releasePending = true;
    releasePending_.push_back(&r);
  }
  return any;
}

// --- Transfers ---------------------------------------------------------------------

void StreamEngine::schedule(uint64_t time, Event::Kind kind, Ring* ring) {
  if (kind == Event::Kind::Deliver) {
    time = std::max(time, ring->lastArrival);
    ring->lastArrival = time;
  }
  events_.push(Event{time, seq_++, kind, ring});
}

void StreamEngine::tileSent(Stream& s, Ring& r, uint64_t departed, bool windowed) {
  if (windowed) {
    s.lastDepart = std::max(s.lastDepart, departed);
  } else {
    schedule(departed, Event::Kind::Free, &r);
    ++r.sent;
  }
  ++s.out;
  ++s.tilesOut;
}

void StreamEngine::touch(Stream& s, uint64_t time) {
  s.core->lastActivity = std::max(s.core->lastActivity, time);
  lastActivity_ = std::max(lastActivity_, time);
}

void StreamEngine::setFault(const Stream& s, const std::string& category, const std::string& what) {
  if (fault_) return;
  const std::string cname = s.coreName();
  fault_ = StreamFault{category, cname,
                       "core '" + cname + "': stream " + std::to_string(s.name.streamId) + " phase " +
                           std::to_string(s.phase) + " (phase_id " + std::to_string(s.phases[s.phase].phaseId) +
                           "): " + what};
}

bool StreamEngine::deliverDue(uint64_t until) {
  bool any = false;
  while (!events_.empty() && events_.top().time <= until) {
    const Event e = events_.top();
    events_.pop();
    Ring& r = *e.ring;
    if (e.kind == Event::Kind::Deliver) {
      r.slotTime[r.valid % r.slots] = e.time;
      ++r.valid;
      if (r.kernelConsumes) r.core->addTilesReceived(static_cast<uint32_t>(r.operand), 1);
    } else {
      if (inject_ && inject_->dropFree(r, e.time)) continue;
      ++r.freed;
      if (r.ethReceiver) returnCredit(r, e.time);
      if (r.kernelProduces) {
        // The packer gets a slot back once every stream over its buffer has freed it.
        ProducerGroup* g = r.group;
        uint64_t least = r.freed;
        if (g) {
          if (g->rings.size() < g->expected) least = g->acked;
          for (const Ring* o : g->rings) least = std::min(least, o->freed);
        }
        const uint64_t base = g ? g->acked : r.freed - 1;
        if (least > base) {
          r.core->addTilesAcked(static_cast<uint32_t>(r.operand), static_cast<uint32_t>(least - base));
          if (g) g->acked = least;
        }
      }
    }
    r.slot->lastActivity = std::max(r.slot->lastActivity, e.time);
    lastActivity_ = std::max(lastActivity_, e.time);
    any = true;
  }
  return any;
}

bool StreamEngine::readerSlotWritten(DramCursor& cur) {
  if (cur.ram || cur.checked == cur.entry) return true;
  const QueueHeader h = readQueueHeader(memOf(cur.loc), cur.loc.channel, cur.loc.address);
  const uint32_t ptr = cur.readPtr();
  if (queueOccupancy(h.rdPtr, ptr, cur.slots) >= queueOccupancy(h.rdPtr, h.wrPtr, cur.slots)) return false;
  cur.checked = cur.entry;  // a slot stays written until every reader has left it
  return true;
}

void StreamEngine::recordTransfer(const Stream& s, TransferKind kind, uint64_t start, uint64_t end, uint64_t bytes) {
  recorder_->note(CoreCoord{static_cast<int>(s.name.x), static_cast<int>(s.name.y)}, s.name.streamId, kind, start, end,
                  bytes);
}

void StreamEngine::moveReaderPast(Stream& s, DramCursor& cur) {
  (void)s;
  ++cur.entry;
  cur.tile = 0;
  if (cur.ram || cur.stay) return;
  ReaderGroup& g = readers_[std::make_tuple(cur.loc.host, cur.loc.channel, cur.loc.address)];
  if (g.cursors.size() < cur.totalReaders) return;  // a reader has not started yet
  uint64_t least = ~uint64_t{0};
  for (const DramCursor* c : g.cursors) least = std::min(least, c->entry);
  if (least <= g.popped) return;
  QueueHeader h = readQueueHeader(memOf(cur.loc), cur.loc.channel, cur.loc.address);
  h.rdPtr = wrapPointer(uint64_t{h.rdPtr} + (least - g.popped), cur.slots);
  g.popped = least;
  writeQueueHeader(memOf(cur.loc), cur.loc.channel, cur.loc.address, h);
}

bool StreamEngine::stepDramRead(Stream& s, uint64_t until) {
  Ring& r = *s.ring;
  DramCursor& cur = *s.cursor;
  const StreamPhase& p = s.phases[s.phase];
  const bool windowed = p.srcPeriodTiles > 0;
  const uint32_t ch = cur.loc.channel;
  const size_t res = busyIndex(cur.loc);
  Dram& mem = memOf(cur.loc);
  std::span<uint8_t> l1 = r.core->l1();
  bool moved = false;
  while (s.in < s.n) {
    if (ringFree(r) == 0) break;
    const uint64_t t0 = std::max(now_, dramBusy_[res]);
    if (t0 >= until) {
      wake_ = std::min(wake_, t0);
      break;
    }
    if (!readerSlotWritten(cur)) break;
    const uint32_t ptr = cur.readPtr();
    const uint32_t tile = windowed ? periodTile(p, s.in) : cur.tile;
    const uint64_t xfer = transferCycles(cur.loc, r.msgSize);
    dramBusy_[res] = t0 + xfer;
    const uint64_t src = cur.loc.address + kQueueHeaderBytes + (ptr % cur.slots) * cur.entryBytes +
                         uint64_t{tile} * cur.msgSize;
    const uint32_t dst = r.base + static_cast<uint32_t>(r.reserved % r.slots) * r.msgSize;
    if (!mem.read(ch, src, l1.subspan(dst, r.msgSize))) {
      setFault(s, "dram-address", "read of " + std::to_string(r.msgSize) + " bytes at " + (cur.loc.host ? "host " : "") + "channel " + std::to_string(ch) +
                                      " address " + support::hexLiteral(src) + " is outside the channel");
      return true;
    }
    if (inject_) inject_->dramRead(s, l1.subspan(dst, r.msgSize), cur.loc, src, t0);
    const uint32_t hops = nocHops(p.incomingDataNoc & 1, cur.loc.core, s.core->noc, soc_.gridX, soc_.gridY);
    const uint64_t arrival = t0 + xfer + latencyOf(cur.loc) + nocLatencyCycles(model_.noc, hops);
    ++r.reserved;
    schedule(arrival, Event::Kind::Deliver, &r);
    ++s.in;
    ++s.tilesIn;
    ++counters_.dramReadTiles;
    counters_.dramReadBytes += r.msgSize;
    noteTransfer(s, TransferKind::DramRead, t0, arrival, r.msgSize);
    touch(s, t0);
    if (!windowed && ++cur.tile == cur.tilesPerEntry) {
      if (cur.ram) cur.ramSlot += cur.ramStep;  // without periods too: rd_autoinc per entry
      moveReaderPast(s, cur);
    }
    moved = true;
  }
  return moved;
}

bool StreamEngine::destAccepts(const Stream& s, const Stream* d) const {
  if (!d || d->done || !d->entered) return false;
  const StreamPhase& dp = d->phases[d->phase];
  if (!dp.remoteSource) return false;
  if (!dp.src.empty() && !(dp.src[d->srcIdx % dp.src.size()] == s.name)) return false;
  const Ring& dr = *d->ring;
  if (dr.reserved >= d->first + d->n) return false;
  return ringFree(dr) > 0;
}

bool StreamEngine::stepSend(Stream& s, uint64_t until) {
  if (s.ethDest) return stepEthSend(s, until);
  Ring& r = *s.ring;
  const StreamPhase& p = s.phases[s.phase];
  const bool windowed = p.sourceEndpoint && p.srcPeriodTiles > 0;
  const uint32_t noc = p.outgoingDataNoc & 1;
  CoreSlot& cs = *s.core;
  std::span<uint8_t> l1 = r.core->l1();
  if (r.kernelProduces) {
    const uint64_t v = ringValid(r);
    for (; r.observed < v; ++r.observed) r.slotTime[r.observed % r.slots] = now_;
  }
  bool moved = false;
  while (s.out < s.n) {
    const uint64_t k = windowed ? r.periodBase + periodTile(p, s.out) : r.sent;
    if (k >= ringValid(r)) break;
    if (s.dests.empty()) break;
    for (const Stream* d : s.dests)
      if (!destAccepts(s, d)) return moved;
    const uint64_t t0 = std::max({now_, cs.portBusy[noc], r.slotTime[k % r.slots]});
    if (t0 >= until) {
      wake_ = std::min(wake_, t0);
      break;
    }
    const uint64_t ser = nocSerializationCycles(model_.noc, r.msgSize);
    cs.portBusy[noc] = t0 + ser;
    const uint8_t* src = l1.data() + r.base + (k % r.slots) * r.msgSize;
    for (Stream* d : s.dests) {
      Ring& dr = *d->ring;
      if (dr.msgSize != r.msgSize) {
        setFault(s, "bad-stream-config",
                 "sends " + std::to_string(r.msgSize) + "-byte tiles to " + streamNameText(d->name) +
                     ", whose phase takes " + std::to_string(dr.msgSize) + "-byte tiles");
        return true;
      }
      std::span<uint8_t> dl1 = dr.core->l1();
      std::memcpy(dl1.data() + dr.base + (dr.reserved % dr.slots) * dr.msgSize, src, r.msgSize);
      ++dr.reserved;
      const uint32_t hops = nocHops(noc, cs.noc, d->core->noc, soc_.gridX, soc_.gridY);
      const uint64_t arrival = t0 + ser + nocLatencyCycles(model_.noc, hops);
      schedule(arrival, Event::Kind::Deliver, &dr);
      ++d->tilesIn;
      ++counters_.nocTiles;
      counters_.nocBytes += r.msgSize;
      noteTransfer(s, TransferKind::Noc, t0, arrival, r.msgSize);
      touch(*d, t0);
    }
    tileSent(s, r, t0 + ser, windowed);
    touch(s, t0);
    moved = true;
  }
  return moved;
}

bool StreamEngine::stepDramWrite(Stream& s, uint64_t until) {
  Ring& r = *s.ring;
  DramCursor& cur = *s.cursor;
  const StreamPhase& p = s.phases[s.phase];
  const bool windowed = p.sourceEndpoint && p.srcPeriodTiles > 0;
  const uint32_t ch = cur.loc.channel;
  const size_t res = busyIndex(cur.loc);
  Dram& mem = memOf(cur.loc);
  const uint32_t noc = p.outgoingDataNoc & 1;
  CoreSlot& cs = *s.core;
  std::span<uint8_t> l1 = r.core->l1();
  if (r.kernelProduces) {
    const uint64_t v = ringValid(r);
    for (; r.observed < v; ++r.observed) r.slotTime[r.observed % r.slots] = now_;
  }
  bool moved = false;
  while (s.out < s.n) {
    const uint64_t k = windowed ? r.periodBase + periodTile(p, s.out) : r.sent;
    if (k >= ringValid(r)) break;
    const uint64_t t0 = std::max({now_, cs.portBusy[noc], dramBusy_[res], r.slotTime[k % r.slots]});
    if (t0 >= until) {
      wake_ = std::min(wake_, t0);
      break;
    }
    if (cur.tile == 0) {
      const QueueHeader h = readQueueHeader(mem, ch, cur.loc.address);
      if (!cur.ram && queueOccupancy(h.rdPtr, h.wrPtr, cur.slots) >= cur.slots) break;  // queue full
      cur.entryPtr = h.wrPtr;
    }
    const uint64_t ser = nocSerializationCycles(model_.noc, r.msgSize);
    const uint64_t xfer = transferCycles(cur.loc, r.msgSize);
    cs.portBusy[noc] = t0 + ser;
    dramBusy_[res] = t0 + xfer;
    const uint64_t slotBase = cur.loc.address + kQueueHeaderBytes + (cur.entryPtr % cur.slots) * cur.entryBytes;
    const uint64_t dst = slotBase + uint64_t{cur.tile} * cur.msgSize;
    const uint8_t* src = l1.data() + r.base + (k % r.slots) * r.msgSize;
    if (p.untilizeCDim ? !writeUntilized(p, cur.loc, slotBase, cur.tile, src)
                       : !mem.write(ch, dst, std::span<const uint8_t>(src, r.msgSize))) {
      setFault(s, "dram-address", "write of " + std::to_string(r.msgSize) + " bytes at " + (cur.loc.host ? "host " : "") + "channel " +
                                      std::to_string(ch) + " address " + support::hexLiteral(dst) + " is outside the channel");
      return true;
    }
    if (++cur.tile == cur.tilesPerEntry) {
      cur.tile = 0;
      ++cur.entry;
      // A queue's tail moves one slot per entry; a ram's by its header's
      // wr_autoinc (global_wrptr_autoinc), 0 rewriting its slot in place.
      QueueHeader h = readQueueHeader(mem, ch, cur.loc.address);
      const uint32_t step = cur.ram ? h.wrAutoinc : 1;
      if (step != 0) {
        h.wrPtr = wrapPointer(uint64_t{cur.entryPtr} + step, cur.slots);
        writeQueueHeader(mem, ch, cur.loc.address, h);
      }
    }
    const uint32_t hops = nocHops(noc, cs.noc, cur.loc.core, soc_.gridX, soc_.gridY);
    tileSent(s, r, t0 + ser, windowed);
    ++counters_.dramWriteTiles;
    counters_.dramWriteBytes += r.msgSize;
    noteTransfer(s, TransferKind::DramWrite, t0, t0 + std::max(ser, xfer) + nocLatencyCycles(model_.noc, hops), r.msgSize);
    touch(s, t0 + std::max(ser, xfer) + nocLatencyCycles(model_.noc, hops));
    moved = true;
  }
  return moved;
}

// One msg of an untilized output into the slot at `slotBase`, which holds the
// whole tensor row-major (blob_model.hpp): msg `j` of the slot is part of
// slice z = j / (blocks x block msgs) and, within it, block
// k = (j / block msgs) % blocks (the pipe's gather order: slice by slice,
// each core's block in turn); its bytes continue the block's rows, each row
// landing at its place in the tensor's row.
bool StreamEngine::writeUntilized(const StreamPhase& p, const DramLocation& loc, uint64_t slotBase, uint32_t j,
                                  const uint8_t* src) {
  Dram& mem = memOf(loc);
  // A msg is one tile of tileR x tileC datums (32x32 unless tile_dim says less).
  const uint64_t tileR = p.untilizeTileR, tileC = p.untilizeTileC;
  const uint64_t eb = p.msgSize / (tileR * tileC);  // bytes per datum
  const uint64_t blockMsgs = uint64_t{p.untilizeRDim} * p.untilizeCDim;
  const uint64_t blockRowBytes = uint64_t{p.untilizeCDim} * tileC * eb, fullRowBytes = uint64_t{p.untilizeFullCDim} * tileC * eb;
  const uint64_t blocksPerRow = p.untilizeFullCDim / p.untilizeCDim;
  const uint64_t blocks = blocksPerRow * (p.untilizeFullRDim / p.untilizeRDim);
  const uint64_t z = j / (blockMsgs * blocks), k = (j / blockMsgs) % blocks, m = j % blockMsgs;
  const uint64_t blockBase = slotBase + z * uint64_t{p.untilizeFullRDim} * tileR * fullRowBytes +
                             (k / blocksPerRow) * p.untilizeRDim * tileR * fullRowBytes + (k % blocksPerRow) * blockRowBytes;
  for (uint64_t done = 0; done < p.msgSize;) {
    const uint64_t b = m * p.msgSize + done, row = b / blockRowBytes, col = b % blockRowBytes;
    const uint64_t len = std::min<uint64_t>(blockRowBytes - col, p.msgSize - done);
    if (!mem.write(loc.channel, blockBase + row * fullRowBytes + col, std::span<const uint8_t>(src + done, len))) return false;
    done += len;
  }
  return true;
}

bool StreamEngine::step(Stream& s, uint64_t until) {
  bool moved = false;
  for (;;) {
    if (s.done || fault_) return moved;
    if (!s.entered) {
      if (!enterPhase(s)) return moved;
      moved = true;
    }
    const StreamPhase& p = s.phases[s.phase];
    if (p.dramInput) moved |= stepDramRead(s, until);
    else if (s.ethRx) moved |= stepEthReceive(s, until);
    if (fault_) return true;
    if (p.remoteReceiver) moved |= stepSend(s, until);
    else if (p.dramOutput) moved |= stepDramWrite(s, until);
    if (fault_) return true;
    if (!phaseComplete(s)) return moved;
    completePhase(s);
    moved = true;
  }
}

// --- Running -------------------------------------------------------------------------

void StreamEngine::start(uint64_t now) {
  now_ = now;
  wake_ = ~uint64_t{0};
  for (auto& cs : cores_)
    if (cs) cs->portBusy = {now, now};
  std::fill(dramBusy_.begin(), dramBusy_.end(), now);
}

uint64_t StreamEngine::runPrologue(uint64_t now) {
  std::vector<uint64_t> channelTime(dramBusy_.size(), 0);
  // Gradient accumulators: the whole ram cell into the operand buffer, tile k
  // at slot k (the kernel adds every input's tile k there in place). The
  // kernel's counters stay 0: the buffer is kernel-local.
  for (auto& sp : streams_) {
    Stream& s = *sp;
    if (!s.gradient) continue;
    const StreamPhase& p = s.phases.front();
    const DramLocation loc = *decodeDramNocAddress(soc_, p.dramBufNocAddr);  // checked by configure
    Dram& mem = memOf(loc);
    const QueueHeader h = readQueueHeader(mem, loc.channel, loc.address);
    const uint32_t slots = h.slots ? h.slots : std::max<uint32_t>(1, p.dramBufSizeQSlots);
    const uint64_t entryBytes = uint64_t{p.dramBufSizeTiles} * p.msgSize;
    auto cell = std::make_unique<GradientCell>();
    cell->stream = &s;
    cell->loc = loc;
    cell->slotAddress = loc.address + kQueueHeaderBytes + (wrapPointer(h.wrPtr, slots) % slots) * entryBytes;
    if (!mem.inRange(loc.channel, cell->slotAddress, uint64_t{p.numMsgs} * p.msgSize)) {
      setFault(s, "dram-address", std::string("gradient accumulator: the ram cell's slot at ") + (loc.host ? "host " : "") +
                                      "channel " + std::to_string(loc.channel) + " address " +
                                      support::hexLiteral(cell->slotAddress) + " ends past the channel");
      return 0;
    }
    std::span<uint8_t> l1 = s.core->core->l1();
    for (uint32_t k = 0; k < p.numMsgs; ++k) {
      mem.read(loc.channel, cell->slotAddress + uint64_t{k} * p.msgSize,
               l1.subspan(p.bufAddr + size_t{k} * p.msgSize, p.msgSize));
      channelTime[busyIndex(loc)] += transferCycles(loc, p.msgSize);
      ++s.tilesIn;
      ++counters_.dramReadTiles;
      ++counters_.prologueTiles;
      counters_.dramReadBytes += p.msgSize;
    }
    gradients_.push_back(std::move(cell));
  }
  for (auto& sp : streams_) {
    Stream& s = *sp;
    if (s.done || s.phases.size() != 1 || s.iters != 1 || s.operand < 0) continue;
    const StreamPhase& p = s.phases.front();
    if (!p.dramInput || !p.localReceiver || p.numMsgs == 0 || p.numMsgs > p.bufSize / p.msgSize) continue;
    if (!enterPhase(s)) {
      if (fault_) return 0;
      continue;
    }
    Ring& r = *s.ring;
    DramCursor& cur = *s.cursor;
    const bool windowed = p.srcPeriodTiles > 0;
    std::span<uint8_t> l1 = r.core->l1();
    while (s.in < s.n && readerSlotWritten(cur)) {
      const uint32_t ptr = cur.readPtr();
      const uint32_t tile = windowed ? periodTile(p, s.in) : cur.tile;
      const uint64_t src = cur.loc.address + kQueueHeaderBytes + (ptr % cur.slots) * cur.entryBytes +
                           uint64_t{tile} * cur.msgSize;
      const uint32_t dst = r.base + static_cast<uint32_t>(r.reserved % r.slots) * r.msgSize;
      if (!memOf(cur.loc).read(cur.loc.channel, src, l1.subspan(dst, r.msgSize))) {
        setFault(s, "dram-address", "prologue read at channel " + std::to_string(cur.loc.channel) + " address " +
                                        support::hexLiteral(src) + " is outside the channel");
        return 0;
      }
      if (inject_) inject_->dramRead(s, l1.subspan(dst, r.msgSize), cur.loc, src, now);
      channelTime[busyIndex(cur.loc)] += transferCycles(cur.loc, r.msgSize);
      ++r.reserved;
      ++r.valid;
      r.core->addTilesReceived(static_cast<uint32_t>(r.operand), 1);
      ++s.in;
      ++s.tilesIn;
      ++counters_.dramReadTiles;
      ++counters_.prologueTiles;
      counters_.dramReadBytes += r.msgSize;
      if (!windowed && ++cur.tile == cur.tilesPerEntry) {
        if (cur.ram) cur.ramSlot += cur.ramStep;  // without periods too: rd_autoinc per entry
        moveReaderPast(s, cur);
      }
    }
    if (phaseComplete(s)) completePhase(s);
  }
  (void)now;
  // Each resource's time plus its latency (the last entry is the PCIe link).
  uint64_t longest = 0;
  for (size_t i = 0; i < channelTime.size(); ++i)
    if (channelTime[i])
      longest = std::max(longest, channelTime[i] + (i == dram_.channelCount() ? model_.pcie.latency : model_.dram.latency));
  return longest;
}

void StreamEngine::kernelFinished(CoreCoord noc, uint64_t cycle) {
  for (auto& cell : gradients_) {
    Stream& s = *cell->stream;
    if (cell->stored || s.core->noc != noc) continue;
    cell->stored = true;
    const StreamPhase& p = s.phases.front();
    CoreSlot& cs = *s.core;
    Dram& mem = memOf(cell->loc);
    const size_t res = busyIndex(cell->loc);
    const uint32_t port = p.outgoingDataNoc & 1;
    const uint32_t hops = nocHops(port, cs.noc, cell->loc.core, soc_.gridX, soc_.gridY);
    const std::span<const uint8_t> l1 = s.core->core->l1();
    for (uint32_t k = 0; k < p.numMsgs; ++k) {
      // As a dram_output tile: the core's NOC port, then the channel.
      const uint64_t t0 = std::max({cycle, cs.portBusy[port], dramBusy_[res]});
      const uint64_t ser = nocSerializationCycles(model_.noc, p.msgSize);
      const uint64_t xfer = transferCycles(cell->loc, p.msgSize);
      cs.portBusy[port] = t0 + ser;
      dramBusy_[res] = t0 + xfer;
      mem.write(cell->loc.channel, cell->slotAddress + uint64_t{k} * p.msgSize,
                l1.subspan(p.bufAddr + size_t{k} * p.msgSize, p.msgSize));  // in range: checked by the prologue
      ++s.tilesOut;
      ++counters_.dramWriteTiles;
      ++counters_.epilogueTiles;
      counters_.dramWriteBytes += p.msgSize;
      touch(s, t0 + std::max(ser, xfer) + nocLatencyCycles(model_.noc, hops));
    }
  }
}

bool StreamEngine::advance(uint64_t until) {
  wake_ = ~uint64_t{0};
  if (inject_) inject_->beforeAdvance(*this, now_);
  bool any = false;
  for (;;) {
    bool moved = deliverDue(until);
    // Releases asked for before the kernel wrote those tiles.
    for (size_t i = 0; i < releasePending_.size();) {
      Ring& r = *releasePending_[i];
      moved |= releaseWritten(r, now_);
      if (r.releaseScheduled < r.releaseAsked) {
        ++i;
        continue;
      }
      r.releasePending = false;
      releasePending_[i] = releasePending_.back();
      releasePending_.pop_back();
    }
    for (auto& s : streams_)
      if (!s->done) moved |= step(*s, until);
    if (fault_) return true;
    if (!moved) break;
    any = true;
  }
  now_ = std::max(now_, until);
  return any;
}

bool StreamEngine::done() const {
  if (!events_.empty()) return false;
  return std::all_of(streams_.begin(), streams_.end(), [](const auto& s) { return s->done; });
}

bool StreamEngine::busy() const { return !events_.empty() || wake_ != ~uint64_t{0}; }

std::optional<uint64_t> StreamEngine::nextWakeTime() const {
  uint64_t t = wake_;
  if (!events_.empty()) t = std::min(t, events_.top().time);
  if (t == ~uint64_t{0}) return std::nullopt;
  return t;
}

uint64_t StreamEngine::lastActivity(CoreCoord noc) const {
  const CoreSlot* cs = coreAt(static_cast<uint32_t>(noc.x), static_cast<uint32_t>(noc.y));
  return cs ? cs->lastActivity : 0;
}

std::vector<StreamStatus> StreamEngine::status() const {
  std::vector<StreamStatus> out;
  for (const auto& s : streams_) out.push_back(StreamStatus{s->name, s->phase, s->iter, s->done, s->tilesIn, s->tilesOut});
  std::sort(out.begin(), out.end(), [](const StreamStatus& a, const StreamStatus& b) { return a.name < b.name; });
  return out;
}

std::optional<StreamStatus> StreamEngine::status(const StreamName& name) const {
  const Stream* s = find(name);
  if (!s) return std::nullopt;
  return StreamStatus{s->name, s->phase, s->iter, s->done, s->tilesIn, s->tilesOut};
}

}  // namespace tessera::sim
