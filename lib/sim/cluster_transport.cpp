#include "sim/cluster_transport.hpp"

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace tessera::sim {

namespace {

// Numbers and plain structs go as their bytes (one build on every rank).
template <typename T>
void pod(WireWriter& w, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  w.raw(&v, sizeof v);
}
template <typename T>
void pod(WireReader& r, T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  r.raw(&v, sizeof v);
}

// The structs below have strings, so they go field by field: a field added to
// one of them must be added here too (the sizes catch it at compile time).
static_assert(sizeof(HartReport) == 80, "HartReport changed: update writeHart/readHart (cluster_transport.cpp)");
static_assert(sizeof(CoreRunResult) == 360, "CoreRunResult changed: update writeCore/readCore (cluster_transport.cpp)");
static_assert(sizeof(CoreEpochReport) == 696, "CoreEpochReport changed: update writeChipResult/readChipResult");
static_assert(sizeof(ChipRunResult) == 320, "ChipRunResult changed: update writeChipResult/readChipResult");
static_assert(sizeof(CoreTimeline) == 136, "CoreTimeline changed: update writeTimeline/readTimeline");

void writeHart(WireWriter& w, const HartReport& h) {
  pod(w, h.thread);
  pod(w, h.state);
  w.u32(h.pc);
  w.u64(h.instructions);
  w.u64(h.cycles);
  w.u64(h.stallCycles);
  w.u32(h.exitCode);
  w.str(h.waitsFor);
}
void readHart(WireReader& r, HartReport& h) {
  pod(r, h.thread);
  pod(r, h.state);
  h.pc = r.u32();
  h.instructions = r.u64();
  h.cycles = r.u64();
  h.stallCycles = r.u64();
  h.exitCode = r.u32();
  h.waitsFor = r.str();
}

void writeCore(WireWriter& w, const CoreRunResult& c) {
  pod(w, c.stop);
  w.u64(c.cycles);
  w.u8(c.fault ? 1 : 0);
  if (c.fault) {
    pod(w, c.fault->thread);
    w.str(c.fault->category);
    pod(w, c.fault->detail);
  }
  for (const HartReport& h : c.harts) writeHart(w, h);
  w.str(c.message);
}
void readCore(WireReader& r, CoreRunResult& c) {
  pod(r, c.stop);
  c.cycles = r.u64();
  if (r.u8()) {
    CoreFault f;
    pod(r, f.thread);
    f.category = r.str();
    pod(r, f.detail);
    c.fault = std::move(f);
  }
  for (HartReport& h : c.harts) readHart(r, h);
  c.message = r.str();
}

void putName(WireWriter& w, const blob::StreamName& n) { pod(w, n); }
blob::StreamName getName(WireReader& r) {
  blob::StreamName n;
  pod(r, n);
  return n;
}

}  // namespace

void WireWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void WireWriter::u64(uint64_t v) {
  u32(static_cast<uint32_t>(v));
  u32(static_cast<uint32_t>(v >> 32));
}
void WireWriter::str(const std::string& s) {
  u64(s.size());
  raw(s.data(), s.size());
}
void WireWriter::raw(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  bytes.insert(bytes.end(), b, b + n);
}

void WireReader::raw(void* p, size_t n) {
  if (n > in_.size() - at_) throw std::runtime_error("cluster transport: truncated message");
  if (n) std::memcpy(p, in_.data() + at_, n);
  at_ += n;
}
uint8_t WireReader::u8() {
  uint8_t v = 0;
  raw(&v, 1);
  return v;
}
uint32_t WireReader::u32() {
  uint8_t b[4];
  raw(b, 4);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}
uint64_t WireReader::u64() {
  const uint64_t lo = u32();
  return lo | uint64_t{u32()} << 32;
}
std::string WireReader::str() {
  const uint64_t n = u64();
  if (n > in_.size() - at_) throw std::runtime_error("cluster transport: truncated message");
  std::string s(reinterpret_cast<const char*>(in_.data() + at_), n);
  at_ += n;
  return s;
}

void writeTimelineEvents(WireWriter& w, const std::vector<TimelineEvent>& events) {
  w.u64(events.size());
  for (const TimelineEvent& e : events) pod(w, e);
}

std::vector<TimelineEvent> readTimelineEvents(WireReader& in) {
  std::vector<TimelineEvent> events(in.u64());
  for (TimelineEvent& e : events) pod(in, e);
  return events;
}

void writeTimeline(WireWriter& w, const CoreTimeline& t) {
  w.u8(t.firstUnpack.has_value());
  w.u64(t.firstUnpack.value_or(0));
  writeTimelineEvents(w, t.outputPushes);
  writeTimelineEvents(w, t.input0Pops);
  for (const std::vector<UnitSpan>& spans : t.busy) {
    w.u64(spans.size());
    for (const UnitSpan& s : spans) pod(w, s);
  }
}

CoreTimeline readTimeline(WireReader& in) {
  CoreTimeline t;
  const bool hasFirst = in.u8() != 0;
  const uint64_t first = in.u64();
  if (hasFirst) t.firstUnpack = first;
  t.outputPushes = readTimelineEvents(in);
  t.input0Pops = readTimelineEvents(in);
  for (std::vector<UnitSpan>& spans : t.busy) {
    spans.resize(in.u64());
    for (UnitSpan& s : spans) pod(in, s);
  }
  return t;
}

void writeChipResult(WireWriter& w, const ChipRunResult& r) {
  w.u32(r.chip);
  pod(w, r.stop);
  w.u64(r.cycles);
  w.u64(r.prologueCycles);
  w.u64(r.binariesCycles);
  w.u64(r.binariesReadBytes);
  w.u32(r.inputCount);
  w.str(r.faultCategory);
  w.str(r.faultCore);
  w.u64(r.cores.size());
  for (const CoreEpochReport& c : r.cores) {
    pod(w, c.noc);
    w.str(c.name);
    w.u8(c.kernel);
    w.u8(c.blob);
    w.u32(c.streams);
    w.u64(c.cycles);
    writeCore(w, c.harts);
    pod(w, c.cop);
    writeTimeline(w, c.timeline);
  }
  w.u64(r.waitingStreams.size());
  for (const std::string& s : r.waitingStreams) w.str(s);
  pod(w, r.streams);
  w.str(r.message);
  w.u64(r.ethLinks.size());
  for (const EthLinkCounters& l : r.ethLinks) pod(w, l);
  w.u64(r.transfers.size());
  for (const TransferSpan& t : r.transfers) pod(w, t);
}

ChipRunResult readChipResult(WireReader& in) {
  ChipRunResult r;
  r.chip = in.u32();
  pod(in, r.stop);
  r.cycles = in.u64();
  r.prologueCycles = in.u64();
  r.binariesCycles = in.u64();
  r.binariesReadBytes = in.u64();
  r.inputCount = in.u32();
  r.faultCategory = in.str();
  r.faultCore = in.str();
  const uint64_t cores = in.u64();
  for (uint64_t i = 0; i < cores; ++i) {
    CoreEpochReport c;
    pod(in, c.noc);
    c.name = in.str();
    c.kernel = in.u8() != 0;
    c.blob = in.u8() != 0;
    c.streams = in.u32();
    c.cycles = in.u64();
    readCore(in, c.harts);
    pod(in, c.cop);
    c.timeline = readTimeline(in);
    r.cores.push_back(std::move(c));
  }
  const uint64_t waiting = in.u64();
  for (uint64_t i = 0; i < waiting; ++i) r.waitingStreams.push_back(in.str());
  pod(in, r.streams);
  r.message = in.str();
  const uint64_t links = in.u64();
  for (uint64_t i = 0; i < links; ++i) {
    EthLinkCounters l;
    pod(in, l);
    r.ethLinks.push_back(l);
  }
  r.transfers.resize(in.u64());
  for (TransferSpan& t : r.transfers) pod(in, t);
  return r;
}

void writeEthSetup(WireWriter& w, const EthSetup& s) {
  w.u64(s.receivers.size());
  for (const EthReceiverInfo& r : s.receivers) appendReceiverInfo(w.bytes, r);
  w.u64(s.senders.size());
  for (const EthSenderInfo& x : s.senders) {
    putName(w, x.sender);
    putName(w, x.receiver);
    w.u32(x.chan);
    w.u32(x.peer.chip);
    w.u32(x.peer.chan);
    w.u32(x.msgSize);
  }
}

EthSetup readEthSetup(WireReader& in) {
  EthSetup s;
  const uint64_t receivers = in.u64();
  for (uint64_t i = 0; i < receivers; ++i) {
    EthReceiverInfo r;
    std::span<const uint8_t> rest = in.rest();
    size_t at = 0;
    if (!readReceiverInfo(rest, at, r)) throw std::runtime_error("cluster transport: truncated handshake");
    in.at() += at;
    s.receivers.push_back(r);
  }
  const uint64_t senders = in.u64();
  for (uint64_t i = 0; i < senders; ++i) {
    EthSenderInfo x;
    x.sender = getName(in);
    x.receiver = getName(in);
    x.chan = in.u32();
    x.peer.chip = in.u32();
    x.peer.chan = in.u32();
    x.msgSize = in.u32();
    s.senders.push_back(x);
  }
  return s;
}

void shareByChip(ClusterTransport& net, std::map<ChipId, std::vector<uint8_t>>& perChip) {
  if (net.ranks() == 1) return;
  WireWriter w;
  for (const auto& [chip, bytes] : perChip)
    if (net.isLocal(chip)) {
      w.u32(chip);
      w.u64(bytes.size());
      w.raw(bytes.data(), bytes.size());
    }
  const std::vector<std::vector<uint8_t>> all = net.allGather(w.bytes);
  perChip.clear();
  for (const std::vector<uint8_t>& from : all) {
    WireReader r(from);
    while (!r.done()) {
      const ChipId chip = r.u32();
      std::vector<uint8_t>& bytes = perChip[chip];
      bytes.resize(r.u64());
      r.raw(bytes.data(), bytes.size());
    }
  }
}

}  // namespace tessera::sim
