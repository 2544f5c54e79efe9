// The stream engine's wait reports (stream_engine.hpp): why a stream that
// has not finished is waiting, in words, for deadlock and timeout messages.
#include "sim/stream_engine.hpp"

#include "sim/fault_injection.hpp"
#include "sim/tensix_core.hpp"
#include "support/text_format.hpp"

#include <algorithm>

#include "sim/stream_engine_state.hpp"

namespace tessera::sim {

using namespace engine_detail;

std::string StreamEngine::waitReason(const Stream& s) const {
  const StreamPhase& p = s.phases[s.phase];
  std::vector<std::string> why;
  if (!s.entered) {
    if (s.ring) {
      const Ring& r = *s.ring;
      why.push_back("its previous buffer at " + support::hexLiteral(r.base) + " to drain (" +
                    std::to_string(r.reserved - std::min(r.reserved, ringFreed(r))) + " tiles not yet sent)");
    } else {
      why.push_back("to start the phase");
    }
    std::string out;
    for (const std::string& w : why) out += (out.empty() ? "" : "; ") + w;
    return out;
  }
  const Ring& r = *s.ring;
  const uint64_t end = s.first + s.n;
  const uint64_t valid = ringValid(r);
  const bool windowed = p.sourceEndpoint && p.srcPeriodTiles > 0;
  const uint64_t next = windowed ? r.periodBase + periodTile(p, s.out) : r.sent;  // next tile to send on
  const bool sending = (p.remoteReceiver || p.dramOutput) && s.out < s.n;
  const std::string opText = s.operand >= 0 ? "operand " + std::to_string(s.operand) : std::string();
  auto counters = [&] {
    const uint32_t op = static_cast<uint32_t>(s.operand);
    return "received " + std::to_string(r.core->tilesReceived(op)) + ", acked " +
           std::to_string(r.core->tilesAcked(op)) + ", capacity " + std::to_string(r.slots);
  };
  // Source side.
  if (p.sourceEndpoint && sending && next >= valid) {
    if (windowed)
      why.push_back("data: the packer to push " + opText + " (tile " + std::to_string(periodTile(p, s.out)) +
                    " of a " + std::to_string(p.srcPeriodTiles) + "-tile period; " + counters() + ")");
    else
      why.push_back("data: the packer to push " + opText + " (" + std::to_string(s.out) + " of " +
                    std::to_string(s.n) + " tiles of this phase pushed; " + counters() + ")");
  }
  if (s.ethRx || s.ethDest)
    if (std::string w = ethWaitReason(s); !w.empty()) why.push_back(w);
  if (sending && s.core->portBusy[p.outgoingDataNoc & 1] == kPortStalled)
    why.push_back("its core's NOC " + std::to_string(p.outgoingDataNoc & 1) + " sender port, which is stalled");
  if (p.remoteSource && r.reserved < end && !s.ethRx) {
    const uint64_t got = r.reserved - std::min(r.reserved, s.first);
    if (ringFree(r) == 0) {
      if (!p.localReceiver)
        why.push_back("its buffer to drain (full: " + std::to_string(r.slots) + " tiles)");
    } else if (p.src.empty()) {
      why.push_back("data from a sender (" + std::to_string(got) + " of " + std::to_string(s.n) + " tiles received)");
    } else {
      const StreamName& from = p.src[s.srcIdx % p.src.size()];
      std::string w = "data from " + streamNameText(from) + " (" + std::to_string(got) + " of " +
                      std::to_string(s.n) + " tiles received)";
      if (!find(from)) w += ": no such stream is configured";
      else if (find(from)->done) w += ": that stream has finished all its phases";
      why.push_back(w);
    }
  }
  if (p.dramInput && s.in < s.n && s.cursor) {
    const DramCursor& cur = *s.cursor;
    if (ringFree(r) == 0) {
      if (!p.localReceiver) why.push_back("its buffer to drain (full: " + std::to_string(r.slots) + " tiles)");
    } else if (!cur.ram) {
      const QueueHeader h = readQueueHeader(memOf(cur.loc), cur.loc.channel, cur.loc.address);
      const uint32_t ptr = cur.readPtr();
      if (queueOccupancy(h.rdPtr, ptr, cur.slots) >= queueOccupancy(h.rdPtr, h.wrPtr, cur.slots))
        why.push_back(std::string(cur.loc.host ? "host memory" : "DRAM") + " data: the queue buffer at channel " + std::to_string(cur.loc.channel) + " address " +
                      support::hexLiteral(cur.loc.address) + " holds no entry at pointer " + std::to_string(ptr) + " (rd_ptr " +
                      std::to_string(h.rdPtr) + ", wr_ptr " + std::to_string(h.wrPtr) + ", " +
                      std::to_string(cur.slots) + " slots)");
    }
  }
  // Destination side.
  if (p.localReceiver && valid < end && ringFree(r) == 0)
    why.push_back("the kernel to pop " + opText + " (buffer full: " + counters() + ")");
  if (p.remoteReceiver && sending && next < valid && !s.ethDest) {
    for (size_t i = 0; i < s.dests.size(); ++i) {
      const Stream* d = s.dests[i];
      const std::string dn = streamNameText(p.dest[i]);
      if (!d) {
        why.push_back("receiver " + dn + ": no such stream is configured");
        continue;
      }
      if (d->done) {
        why.push_back("receiver " + dn + ": it has finished all its phases");
        continue;
      }
      if (!d->entered) {
        why.push_back("receiver " + dn + " to start its phase " + std::to_string(d->phase));
        continue;
      }
      const StreamPhase& dp = d->phases[d->phase];
      if (!dp.remoteSource) {
        why.push_back("receiver " + dn + " to reach a remote_source phase (it is in phase " +
                      std::to_string(d->phase) + ")");
        continue;
      }
      if (!dp.src.empty() && !(dp.src[d->srcIdx % dp.src.size()] == s.name)) {
        why.push_back("receiver " + dn + " to take its tiles (its phase " + std::to_string(d->phase) +
                      " expects data from " + streamNameText(dp.src[d->srcIdx % dp.src.size()]) + ")");
        continue;
      }
      const Ring& dr = *d->ring;
      if (dr.reserved >= d->first + d->n) {
        why.push_back("receiver " + dn + " to finish its phase " + std::to_string(d->phase) + " (all " +
                      std::to_string(d->n) + " tiles taken)");
        continue;
      }
      if (ringFree(dr) == 0)
        why.push_back("credits from " + dn + ": its buffer is full (" + std::to_string(dr.slots) + " of " +
                      std::to_string(dr.slots) + " tiles)");
    }
  }
  if (p.dramOutput && sending && next < valid && s.cursor && s.cursor->tile == 0 && !s.cursor->ram) {
    const DramCursor& cur = *s.cursor;
    const QueueHeader h = readQueueHeader(memOf(cur.loc), cur.loc.channel, cur.loc.address);
    if (queueOccupancy(h.rdPtr, h.wrPtr, cur.slots) >= cur.slots)
      why.push_back(std::string(cur.loc.host ? "host memory" : "DRAM") + " space: the queue buffer at channel " + std::to_string(cur.loc.channel) + " address " +
                    support::hexLiteral(cur.loc.address) + " is full (rd_ptr " + std::to_string(h.rdPtr) + ", wr_ptr " +
                    std::to_string(h.wrPtr) + ", " + std::to_string(cur.slots) + " slots)");
  }
  if (sending && next >= valid && !p.sourceEndpoint && why.empty())
    why.push_back("data (" + std::to_string(valid - std::min(valid, s.first)) + " of " + std::to_string(s.n) +
                  " tiles of this phase arrived)");
  if (why.empty()) why.push_back("transfers in flight");
  std::string out;
  for (const std::string& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

std::string StreamEngine::describe(const Stream& s) const {
  const StreamPhase& p = s.phases[s.phase];
  std::string out = "core '" + s.coreName() + "' stream " + std::to_string(s.name.streamId) + " phase " +
                    std::to_string(s.phase) + " (phase_id " + std::to_string(p.phaseId) + ", iteration " +
                    std::to_string(s.iter + 1) + " of " + std::to_string(s.iters);
  if (s.entered) {
    const Ring& r = *s.ring;
    const uint64_t doneTiles = p.localReceiver ? ringValid(r) - std::min(ringValid(r), s.first) : s.out;
    out += ", " + std::to_string(doneTiles) + " of " + std::to_string(s.n) + " tiles";
  }
  return out + "): waits for " + waitReason(s);
}

std::vector<std::string> StreamEngine::waitingReport() const {
  std::vector<const Stream*> order;
  for (const auto& s : streams_)
    if (!s->done) order.push_back(s.get());
  std::sort(order.begin(), order.end(), [](const Stream* a, const Stream* b) { return a->name < b->name; });
  std::vector<std::string> out;
  for (const Stream* s : order) out.push_back(describe(*s));
  return out;
}

}  // namespace tessera::sim
