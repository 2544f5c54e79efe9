#include "sim/tensix_core.hpp"

#include "device/arch_params.hpp"
#include "sim/coprocessor.hpp"  // copFaultName
#include "support/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace tessera::sim {

namespace c = contract;

namespace {

// MMIO device code for a push to the instruction port with no coprocessor
// attached (outside the CopFault range).
constexpr uint32_t kNoCoprocessor = 0xFFFFFFFFu;
constexpr uint16_t kRiscvMachine = 243;
// Harts may not write any thread's code: the decode caches rely on it.
constexpr uint32_t kCodeBegin = c::kTrisc0CodeBase;
constexpr uint32_t kCodeEnd = c::kTrisc2CodeBase + c::kTrisc2CodeSize;

const char* semaphoreName(uint32_t s) {
  switch (s) {
  case c::kSemMathPack: return "MathPack";
  case c::kSemPackMath: return "PackMath";
  }
  return nullptr;
}

std::string semaphoreLabel(uint32_t s) {
  std::string out = "semaphore " + std::to_string(s);
  if (const char* n = semaphoreName(s)) out += std::string(" (") + n + ")";
  return out;
}

bool inTileCounters(uint32_t a) {
  return a >= c::kTileCounterBase && a - c::kTileCounterBase < c::kOperandCount * c::kTileCounterStride;
}
bool inSemaphores(uint32_t a) {
  return a >= c::kSemaphoreBase && a - c::kSemaphoreBase < c::kSemaphoreCount * c::kSemaphoreStride;
}

} // namespace

const char* threadName(Thread t) {
  switch (t) {
  case c::kUnpackThread: return "unpack";
  case c::kMathThread: return "math";
  case c::kPackThread: return "pack";
  default: break;
  }
  return "?";
}

std::string threadLabel(Thread t) {
  return std::string(threadName(t)) + " (TRISC" + std::to_string(static_cast<unsigned>(t)) + ")";
}

std::string mmioRegisterName(uint32_t a) {
  if (a == c::kCopInstrPort) return "coprocessor instruction port";
  if (a == c::kCopStatus) return "coprocessor status";
  if (inTileCounters(a)) {
    const uint32_t o = (a - c::kTileCounterBase) / c::kTileCounterStride;
    const uint32_t r = (a - c::kTileCounterBase) % c::kTileCounterStride;
    const std::string base = "operand " + std::to_string(o);
    if (r == c::kTilesReceived) return base + " tiles received";
    if (r == c::kTilesAcked) return base + " tiles acked";
    if (r == c::kTilesCapacity) return base + " capacity";
    return "unmapped";
  }
  if (inSemaphores(a)) {
    const uint32_t s = (a - c::kSemaphoreBase) / c::kSemaphoreStride;
    const uint32_t r = (a - c::kSemaphoreBase) % c::kSemaphoreStride;
    if (r == c::kSemValue) return semaphoreLabel(s) + " value";
    if (r == c::kSemWait) return semaphoreLabel(s) + " wait";
    return "unmapped";
  }
  switch (a) {
  case c::kMailboxDone: return "mailbox done";
  case c::kDebugPutChar: return "debug char";
  case c::kDebugPutWord: return "debug word";
  case c::kCycleCounterLo: return "cycle counter";
  case c::kThreadId: return "thread id";
  }
  return "unmapped";
}

Region codeRegion(Thread t) {
  switch (t) {
  case c::kUnpackThread: return {c::kTrisc0CodeBase, c::kTrisc0CodeSize};
  case c::kMathThread: return {c::kTrisc1CodeBase, c::kTrisc1CodeSize};
  case c::kPackThread: return {c::kTrisc2CodeBase, c::kTrisc2CodeSize};
  default: break;
  }
  return {};
}

uint32_t workerL1Size(Arch arch) {
  switch (arch) {
  case Arch::Grayskull: return c::kGrayskullL1Size;
  case Arch::WormholeB0: return c::kWormholeB0L1Size;
  default: break;
  }
  return static_cast<uint32_t>(archParams(arch).defaultWorkerL1Size);
}

void writeOperandEntry(std::span<uint8_t> l1, uint32_t operand, const c::OperandEntry& entry) {
  const size_t at = c::kOperandTableBase + size_t{operand} * sizeof(c::OperandEntry);
  if (operand >= c::kOperandCount || at + sizeof entry > l1.size()) return;
  std::memcpy(l1.data() + at, &entry, sizeof entry);
}

c::OperandEntry readOperandEntry(std::span<const uint8_t> l1, uint32_t operand) {
  c::OperandEntry entry{};
  const size_t at = c::kOperandTableBase + size_t{operand} * sizeof(c::OperandEntry);
  if (operand < c::kOperandCount && at + sizeof entry <= l1.size()) std::memcpy(&entry, l1.data() + at, sizeof entry);
  return entry;
}

void writeEpochInfo(std::span<uint8_t> l1, const c::EpochInfo& info) {
  if (c::kEpochInfoBase + sizeof info <= l1.size()) std::memcpy(l1.data() + c::kEpochInfoBase, &info, sizeof info);
}

const char* hartStateName(HartState s) {
  switch (s) {
  case HartState::Absent: return "absent";
  case HartState::Running: return "running";
  case HartState::Stalled: return "stalled";
  case HartState::Polling: return "polling";
  case HartState::Done: return "done";
  case HartState::Faulted: return "faulted";
  }
  return "?";
}

const char* coreStopName(CoreStop s) {
  switch (s) {
  case CoreStop::Done: return "done";
  case CoreStop::Fault: return "fault";
  case CoreStop::Hang: return "hang";
  case CoreStop::CycleLimit: return "cycle-limit";
  }
  return "?";
}

bool CoreRunResult::ok() const {
  if (stop != CoreStop::Done) return false;
  return std::all_of(harts.begin(), harts.end(), [](const HartReport& h) { return h.exitCode == 0; });
}

// The MMIO window as the harts see it: forwards to the core.
class TensixCore::Mmio final : public MmioDevice {
public:
  explicit Mmio(TensixCore& core) : core_(core) {}
  MmioResult load(const Hart& hart, uint32_t address) override { return core_.mmioLoad(hart, address); }
  MmioResult store(const Hart& hart, uint32_t address, uint32_t value) override {
    return core_.mmioStore(hart, address, value);
  }

private:
  TensixCore& core_;
};

TensixCore::TensixCore(const CoreConfig& config)
    : config_(config), l1_(config.l1Size ? config.l1Size : workerL1Size(config.arch), 0), mmio_(std::make_unique<Mmio>(*this)) {
  for (uint32_t t = 0; t < c::kThreadCount; ++t) {
    local_[t].assign(c::kLocalMemSize, 0);
    const Region code = codeRegion(static_cast<Thread>(t));
    Bus bus;
    bus.l1 = l1_;
    bus.local = local_[t];
    bus.localBase = c::kLocalMemBase;
    bus.mmioBase = c::kMmioBase;
    bus.mmioSize = c::kMmioSize;
    bus.mmio = mmio_.get();
    bus.codeBase = code.base;
    bus.codeSize = code.size;
    bus.protectBase = kCodeBegin;
    bus.protectSize = kCodeEnd - kCodeBegin;
    harts_[t] = std::make_unique<Hart>(t, bus, config.cycleModel);
  }
  sems_[c::kSemPackMath] = 2;  // both dest halves start free for math
}

TensixCore::~TensixCore() = default;

// --- Programs ----------------------------------------------------------------

bool TensixCore::loadProgram(Thread t, const elf::Image& image, std::string& error) {
  const std::string who = std::string(threadName(t)) + " thread";
  if (t >= c::kThreadCount) {
    error = "no such thread " + std::to_string(static_cast<unsigned>(t));
    return false;
  }
  if (image.machine != kRiscvMachine) {
    error = who + ": not a RISC-V executable (e_machine " + std::to_string(image.machine) + ")";
    return false;
  }
  const Region code = codeRegion(t);
  const Region local{c::kLocalMemBase, c::kLocalMemSize};
  auto regionText = [&] {
    return "its code region [" + support::hexLiteral(code.base) + ", " + support::hexLiteral(uint64_t{code.base} + code.size) +
           ") and local memory [" + support::hexLiteral(local.base) + ", " + support::hexLiteral(uint64_t{local.base} + local.size) + ")";
  };
  // Validate everything first: no partial loads.
  for (const elf::Segment& seg : image.segments) {
    if (seg.memSize == 0) continue;
    if (seg.bytes.size() > seg.memSize) {
      error = who + ": segment at " + support::hexLiteral(seg.vaddr) + " has more file bytes than memory bytes";
      return false;
    }
    if (!code.contains(seg.vaddr, seg.memSize) && !local.contains(seg.vaddr, seg.memSize)) {
      error = who + ": segment [" + support::hexLiteral(seg.vaddr) + ", " + support::hexLiteral(uint64_t{seg.vaddr} + seg.memSize) +
              ") is outside " + regionText();
      return false;
    }
  }
  if (!code.contains(image.entry, 4) || image.entry % 4 != 0) {
    error = who + ": entry point " + support::hexLiteral(image.entry) + " is not in its code region [" + support::hexLiteral(code.base) + ", " +
            support::hexLiteral(uint64_t{code.base} + code.size) + ")";
    return false;
  }
  std::fill_n(l1_.begin() + code.base, code.size, uint8_t{0});
  std::fill(local_[t].begin(), local_[t].end(), uint8_t{0});
  for (const elf::Segment& seg : image.segments) {
    if (seg.memSize == 0) continue;
    uint8_t* dst = code.contains(seg.vaddr, seg.memSize) ? l1_.data() + seg.vaddr
                                                         : local_[t].data() + (seg.vaddr - local.base);
    std::copy(seg.bytes.begin(), seg.bytes.end(), dst);  // the rest stays zero (.bss)
  }
  Hart& h = *harts_[t];
  h.reset(image.entry);
  h.setReg(2, c::kLocalMemBase + c::kLocalMemSize);  // sp: crt0 may set its own
  loaded_[t] = true;
  track_[t] = HartTrack{};
  track_[t].state = HartState::Running;
  debug_[t].clear();
  return true;
}

bool TensixCore::loadElf(Thread t, std::span<const uint8_t> bytes, std::string& error) {
  Expected<elf::Image> image = elf::parseElf32(bytes);
  if (!image) {
    error = std::string(threadName(t)) + " thread: " + image.error();
    return false;
  }
  return loadProgram(t, *image, error);
}

bool TensixCore::loadElfFile(Thread t, const std::string& path, std::string& error) {
  // Messages read "<thread> thread: '<path>': <what>".
  const std::string prefix = std::string(threadName(t)) + " thread: ";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = prefix + "'" + path + "': cannot open the file";
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!loadElf(t, bytes, error)) {
    if (error.rfind(prefix, 0) == 0) error.erase(0, prefix.size());
    error = prefix + "'" + path + "': " + error;
    return false;
  }
  return true;
}

// --- Host side ---------------------------------------------------------------

void TensixCore::addTilesReceived(uint32_t operand, uint32_t count) {
  received_.at(operand) += count;
  ++version_;
}

void TensixCore::addTilesAcked(uint32_t operand, uint32_t count) {
  acked_.at(operand) += count;
  ++version_;
}

void TensixCore::postSemaphore(uint32_t index, uint32_t count) {
  sems_.at(index) += count;
  ++version_;
}

// --- MMIO ----------------------------------------------------------------------

void TensixCore::notePoll(Thread t, uint32_t address, uint32_t value) {
  HartTrack& tr = track_[t];
  ++tr.mmioReads;
  for (uint32_t i = 0; i < tr.pollCount; ++i) {
    PollEntry& e = tr.poll[i];
    if (e.address != address) continue;
    if (e.value != value) tr.sawChange = true;
    e.value = value;
    e.readThisSlice = true;
    return;
  }
  // A register not read before is new information.
  tr.sawChange = true;
  if (tr.pollCount < tr.poll.size()) tr.poll[tr.pollCount++] = PollEntry{address, value, true};
}

MmioResult TensixCore::mmioLoad(const Hart& hart, uint32_t a) {
  const Thread t = static_cast<Thread>(hart.id());
  uint32_t v = 0;
  if (a == c::kCopStatus) {
    v = cop_ ? cop_->status(t) : 0;
  } else if (inTileCounters(a)) {
    const uint32_t o = (a - c::kTileCounterBase) / c::kTileCounterStride;
    switch ((a - c::kTileCounterBase) % c::kTileCounterStride) {
    case c::kTilesReceived: v = received_[o]; break;
    case c::kTilesAcked: v = acked_[o]; break;
    case c::kTilesCapacity: v = readOperandEntry(l1_, o).capacityTiles; break;
    default: return MmioResult::accessFault();
    }
  } else if (inSemaphores(a)) {
    const uint32_t s = (a - c::kSemaphoreBase) / c::kSemaphoreStride;
    if ((a - c::kSemaphoreBase) % c::kSemaphoreStride != c::kSemValue) return MmioResult::accessFault();
    v = sems_[s];
  } else if (a == c::kCycleCounterLo) {
    v = static_cast<uint32_t>(hart.cycles());
  } else if (a == c::kThreadId) {
    v = t;
  } else {
    return MmioResult::accessFault();
  }
  notePoll(t, a, v);
  return MmioResult::ok(v);
}

uint32_t TensixCore::drainCycles(const Hart& hart, Thread t) const {
  const uint64_t done = cop_ ? cop_->doneAt(t) : 0;
  return done > hart.cycles() ? static_cast<uint32_t>(std::min<uint64_t>(done - hart.cycles(), UINT32_MAX)) : 0;
}

MmioResult TensixCore::mmioStore(const Hart& hart, uint32_t a, uint32_t v) {
  const Thread t = static_cast<Thread>(hart.id());
  HartTrack& tr = track_[t];
  if (a == c::kCopInstrPort) {
    if (!cop_) return MmioResult::deviceFault(kNoCoprocessor);
    const PortResult r = cop_->push(t, v, hart.cycles());  // FIFO model: r.cycles is the wait for room
    switch (r.kind) {
    case PortResult::Kind::Accepted:
      ++tr.mmioWrites;
      // An UNPACK's opcode word (its argument word, an L1 address, has a zero top byte).
      if (recordTimeline_ && t == c::kUnpackThread && !timeline_.firstUnpack && (v >> 24) == 0x10)
        timeline_.firstUnpack = hart.cycles();
      if (recordSpans_ && r.busyCycles) noteUnitBusy(timeline_.busy[t], r.busyStart, r.busyCycles);
      return MmioResult::ok(0, r.cycles);
    case PortResult::Kind::Stall: return MmioResult::stall();
    case PortResult::Kind::Fault: return MmioResult::deviceFault(r.faultCode);
    }
    return MmioResult::deviceFault(c::kCopIllegalInstruction);
  }
  if (inTileCounters(a)) {
    const uint32_t o = (a - c::kTileCounterBase) / c::kTileCounterStride;
    switch ((a - c::kTileCounterBase) % c::kTileCounterStride) {
    case c::kTilesReceived: received_[o] += v; break;
    case c::kTilesAcked: acked_[o] += v; break;
    default: return MmioResult::accessFault();  // capacity is read-only
    }
    if (recordTimeline_ && v != 0) {
      const uint64_t math = cop_ ? cop_->mathBusyCycles() : 0;
      if (o == c::kFirstOutputOperand && t == c::kPackThread && (a - c::kTileCounterBase) % c::kTileCounterStride == c::kTilesReceived)
        timeline_.outputPushes.push_back({hart.cycles(), received_[o], math});
      if (o == 0 && t == c::kUnpackThread && (a - c::kTileCounterBase) % c::kTileCounterStride == c::kTilesAcked)
        timeline_.input0Pops.push_back({hart.cycles(), acked_[o], math});
    }
    ++version_;
    ++tr.mmioWrites;
    return MmioResult::ok(0, drainCycles(hart, t));
  }
  if (inSemaphores(a)) {
    const uint32_t s = (a - c::kSemaphoreBase) / c::kSemaphoreStride;
    uint32_t extra = 0;
    std::vector<TimedPost>& posts = semPosts_[s];
    switch ((a - c::kSemaphoreBase) % c::kSemaphoreStride) {
    case c::kSemValue:
      sems_[s] += v;
      // exactWakes: a waiter that runs at an earlier clock takes the post no
      // earlier than the poster made it.
      if (const uint32_t d = drainCycles(hart, t); (d != 0 || exactWakes_) && v != 0) posts.push_back({hart.cycles() + d, v});
      break;
    case c::kSemWait: {
      if (sems_[s] == 0) return MmioResult::stall();
      uint64_t timed = 0;
      for (const TimedPost& p : posts) timed += p.count;
      if (timed >= sems_[s] && !posts.empty()) {  // no untimed unit left: take the oldest post
        if (posts.front().at > hart.cycles()) extra = static_cast<uint32_t>(std::min<uint64_t>(posts.front().at - hart.cycles(), UINT32_MAX));
        if (--posts.front().count == 0) posts.erase(posts.begin());
      }
      --sems_[s];
      break;
    }
    default: return MmioResult::accessFault();
    }
    ++version_;
    ++tr.mmioWrites;
    return MmioResult::ok(0, extra);
  }
  switch (a) {
  case c::kMailboxDone: {
    ++version_;
    ++tr.mmioWrites;
    MmioResult r = MmioResult::halt(v);
    r.extraCycles = drainCycles(hart, t);  // the thread ends when its instructions have
    return r;
  }
  case c::kDebugPutChar:
    debug_[t].push_back(static_cast<char>(v & 0xFF));
    ++tr.mmioWrites;
    return MmioResult::ok();
  case c::kDebugPutWord: {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x\n", v);
    debug_[t] += buf;
    ++tr.mmioWrites;
    return MmioResult::ok();
  }
  }
  return MmioResult::accessFault();  // read-only or unmapped
}

// --- Scheduler ---------------------------------------------------------------

std::string TensixCore::waitDescription(Thread t) const {
  const HartTrack& tr = track_[t];
  const Hart& h = *harts_[t];
  if (tr.state == HartState::Stalled) {
    const uint32_t a = h.lastStop().stallAddress;
    if (a == c::kCopInstrPort)
      return "the coprocessor: " + (cop_ ? cop_->waitReason(t) : std::string("no coprocessor"));
    if (inSemaphores(a)) {
      const uint32_t s = (a - c::kSemaphoreBase) / c::kSemaphoreStride;
      return semaphoreLabel(s) + " (value " + std::to_string(sems_[s]) + ")";
    }
    return mmioRegisterName(a);
  }
  if (tr.state != HartState::Polling) return {};
  // Group what the polling loop read: tile counters by operand, then the rest.
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  std::array<bool, c::kOperandCount> operandSeen{};
  for (uint32_t i = 0; i < tr.pollCount; ++i) {
    const PollEntry& e = tr.poll[i];
    if (!e.readThisSlice) continue;
    if (inTileCounters(e.address)) {
      const uint32_t o = (e.address - c::kTileCounterBase) / c::kTileCounterStride;
      if (operandSeen[o]) continue;
      operandSeen[o] = true;
      add("operand " + std::to_string(o) + " tile counters (received " + std::to_string(received_[o]) + ", acked " +
          std::to_string(acked_[o]) + ", capacity " + std::to_string(readOperandEntry(l1_, o).capacityTiles) + ")");
    } else if (inSemaphores(e.address)) {
      const uint32_t s = (e.address - c::kSemaphoreBase) / c::kSemaphoreStride;
      add(semaphoreLabel(s) + " (value " + std::to_string(sems_[s]) + ")");
    } else {
      add(mmioRegisterName(e.address) + " (" + std::to_string(e.value) + ")");
    }
  }
  return out;
}

CoreRunResult TensixCore::snapshot(CoreStop stop) const {
  CoreRunResult r;
  r.stop = stop;
  r.cycles = 0;
  for (uint32_t i = 0; i < c::kThreadCount; ++i) {
    const Thread t = static_cast<Thread>(i);
    const Hart& h = *harts_[i];
    const HartTrack& tr = track_[i];
    HartReport& rep = r.harts[i];
    rep.thread = t;
    rep.state = tr.state;
    rep.pc = h.pc();
    rep.instructions = h.instructions();
    rep.cycles = h.cycles();
    rep.stallCycles = tr.stallCycles;
    rep.exitCode = tr.exitCode;
    rep.waitsFor = waitDescription(t);
    if (tr.stopped) {
      rep.state = HartState::Stalled;
      rep.waitsFor = "nothing: the hart stopped (injected fault)";
    }
    if (loaded_[i]) r.cycles = std::max(r.cycles, h.cycles());
  }
  if (stop != CoreStop::Done) r.cycles = std::max(r.cycles, now_);
  return r;
}

CoreRunResult TensixCore::finish(CoreStop stop, std::optional<CoreFault> fault) {
  CoreRunResult r = snapshot(stop);
  r.fault = std::move(fault);
  const std::string core = "core '" + config_.name + "'";
  auto hartLines = [&] {
    std::string s;
    for (const HartReport& h : r.harts) {
      s += "\n  " + threadLabel(h.thread);
      if (h.state == HartState::Absent) {
        s += ": no program";
        continue;
      }
      s += " pc " + support::hexLiteral(h.pc) + ": ";
      switch (h.state) {
      case HartState::Done: s += "done (exit " + std::to_string(h.exitCode) + ")"; break;
      case HartState::Stalled:
      case HartState::Polling: s += "waits for " + h.waitsFor; break;
      default: s += hartStateName(h.state); break;
      }
    }
    return s;
  };
  switch (stop) {
  case CoreStop::Done:
    r.message = core + ": done at cycle " + std::to_string(r.cycles);
    for (const HartReport& h : r.harts)
      if (h.state == HartState::Done && h.exitCode != 0)
        r.message += "\n  " + threadLabel(h.thread) + " exited with code " + std::to_string(h.exitCode);
    break;
  case CoreStop::Fault: {
    const CoreFault& f = *r.fault;
    const Fault& d = f.detail;
    r.message = core + ": " + f.category + " in thread " + threadLabel(f.thread) + " at pc " + support::hexLiteral(d.pc);
    if (f.category == "coprocessor-fault") {
      const uint32_t word = harts_[f.thread]->reg((d.word >> 20) & 31);
      r.message += ": " + std::string(copFaultName(d.code)) + " (pushed word " + support::hexLiteral(word) + ")";
    } else if (f.category == "no-coprocessor") {
      r.message += ": store to the coprocessor instruction port, but no coprocessor is attached";
    } else if (f.category == "breakpoint") {
      r.message += ": ebreak";
    } else if (d.kind == FaultKind::IllegalInstruction) {
      r.message += ": instruction word " + support::hexLiteral(d.word);
    } else if (d.kind == FaultKind::MisalignedFetch) {
      r.message += ": jump target " + support::hexLiteral(d.address);
    } else if (d.kind == FaultKind::FetchAccessFault) {
      const Region code = codeRegion(f.thread);
      r.message += ": outside the thread's code region [" + support::hexLiteral(code.base) + ", " +
                   support::hexLiteral(uint64_t{code.base} + code.size) + ")";
    } else {
      r.message += ": address " + support::hexLiteral(d.address);
      if (d.address >= c::kMmioBase && d.address - c::kMmioBase < c::kMmioSize)
        r.message += " (" + mmioRegisterName(d.address) + ")";
      if (d.kind == FaultKind::CodeWrite) r.message += " (code regions are read-only while the core runs)";
    }
    break;
  }
  case CoreStop::Hang:
    r.message = core + ": hang at cycle " + std::to_string(r.cycles) + ": no thread can make progress" + hartLines();
    break;
  case CoreStop::CycleLimit:
    r.message = core + ": cycle limit reached at cycle " + std::to_string(r.cycles) + hartLines();
    break;
  }
  return r;
}

std::optional<CoreRunResult> TensixCore::runHart(uint32_t i, uint64_t sliceEnd, const RunOptions& options, bool& anyBusy) {
  const Thread t = static_cast<Thread>(i);
  HartTrack& tr = track_[i];
  Hart& h = *harts_[i];
  tr.asleep = false;
  tr.mmioReads = 0;
  tr.mmioWrites = 0;
  tr.sawChange = false;
  for (PollEntry& e : tr.poll) e.readThisSlice = false;
  const uint64_t instructionsBefore = h.instructions();
  const uint64_t l1StoresBefore = h.l1Stores();

  const StopInfo s = h.run(Hart::kNoLimit, sliceEnd);
  switch (s.reason) {
  case StopReason::Faulted: {
    tr.state = HartState::Faulted;
    const Fault& f = h.fault();
    std::string category = faultKindName(f.kind);
    if (f.kind == FaultKind::DeviceFault)
      category = f.code == kNoCoprocessor ? "no-coprocessor" : "coprocessor-fault";
    return finish(CoreStop::Fault, CoreFault{t, category, f});
  }
  case StopReason::Halted:
    if (s.halt == HaltCause::Ebreak) {
      tr.state = HartState::Faulted;
      Fault f;
      f.kind = FaultKind::None;
      f.pc = h.pc();
      return finish(CoreStop::Fault, CoreFault{t, "breakpoint", f});
    }
    tr.state = HartState::Done;  // mailbox done or ecall: exit code from the store or a0
    tr.exitCode = s.exitCode;
    anyBusy = true;
    break;
  case StopReason::Stalled:
    // exactWakes: the clock stays at the stall until a retry in this slice
    // or the end of the step.
    if (!options.exactWakes) {
      if (h.cycles() < sliceEnd) tr.stallCycles += sliceEnd - h.cycles();
      h.advanceCyclesTo(sliceEnd);
    }
    tr.state = HartState::Stalled;
    // A stall after retiring instructions still made progress this slice.
    if (h.instructions() != instructionsBefore) anyBusy = true;
    break;
  case StopReason::Budget: {
    const bool wrote = tr.mmioWrites > 0 || h.l1Stores() != l1StoresBefore;
    if (tr.mmioReads > 0 && !tr.sawChange && !wrote) {
      tr.state = HartState::Polling;
    } else {
      tr.state = HartState::Running;
      anyBusy = true;
    }
    break;
  }
  }
  if (tr.state == HartState::Polling || tr.state == HartState::Stalled) {
    // What it saw when it stopped: a later change may let it on.
    tr.asleep = options.sleepWhileWaiting;
    tr.sleepVersion = version_;
    tr.sleepCopProgress = cop_ ? cop_->progress() : 0;
  }
  return std::nullopt;
}

std::optional<CoreRunResult> TensixCore::step(const RunOptions& options, bool externalPending) {
  const uint64_t sliceEnd = now_ + std::max<uint64_t>(1, options.sliceCycles);
  exactWakes_ = options.exactWakes;
  bool anyBusy = false;
  auto waiting = [&](const HartTrack& tr) { return tr.state == HartState::Stalled || tr.state == HartState::Polling; };
  auto changedSince = [&](const HartTrack& tr) {
    return version_ != tr.sleepVersion || (cop_ ? cop_->progress() : 0) != tr.sleepCopProgress;
  };
  for (uint32_t i = 0; i < c::kThreadCount; ++i) {
    const Thread t = static_cast<Thread>(i);
    HartTrack& tr = track_[i];
    if (tr.state == HartState::Absent || tr.state == HartState::Done || tr.state == HartState::Faulted) continue;
    Hart& h = *harts_[i];
    if (tr.stopped) {
      h.advanceCyclesTo(sliceEnd);
      continue;
    }
    if (tr.asleep) {
      // Nothing it polls or stalls on changed since it went to sleep: running
      // it would only poll or stall again until the slice end.
      const bool copWakes = tr.state == HartState::Stalled && cop_ && cop_->stallMayEndBy(t, sliceEnd);
      if (!changedSince(tr) && !copWakes) {
        if (options.exactWakes) continue;  // a change later in this slice may wake it (below)
        if (tr.state == HartState::Stalled && h.cycles() < sliceEnd) tr.stallCycles += sliceEnd - h.cycles();
        h.advanceCyclesTo(sliceEnd);
        continue;
      }
    }
    if (std::optional<CoreRunResult> r = runHart(i, sliceEnd, options, anyBusy)) return r;
  }
  if (options.exactWakes) {
    // Retry every waiting hart whose registers or coprocessor changed since
    // it stopped, at its own clock, until none is left; a retry costs at
    // least its store's cycles, so the slice end bounds this.
    for (bool again = true; again;) {
      again = false;
      for (uint32_t i = 0; i < c::kThreadCount; ++i) {
        HartTrack& tr = track_[i];
        if (!waiting(tr) || harts_[i]->cycles() >= sliceEnd || !changedSince(tr)) continue;
        if (std::optional<CoreRunResult> r = runHart(i, sliceEnd, options, anyBusy)) return r;
        again = true;
      }
    }
    for (uint32_t i = 0; i < c::kThreadCount; ++i) {
      HartTrack& tr = track_[i];
      Hart& h = *harts_[i];
      if (!waiting(tr) || h.cycles() >= sliceEnd) continue;
      if (tr.state == HartState::Stalled) tr.stallCycles += sliceEnd - h.cycles();
      h.advanceCyclesTo(sliceEnd);
    }
  }
  now_ = sliceEnd;

  bool allDone = true;
  for (const HartTrack& tr : track_)
    if (tr.state != HartState::Absent && tr.state != HartState::Done) allDone = false;
  lastStepProgress_ = anyBusy;
  if (allDone) {
    lastStepProgress_ = true;
    return finish(CoreStop::Done);
  }

  const uint64_t copProgress = cop_ ? cop_->progress() : 0;
  const bool changed = version_ != lastVersion_ || copProgress != lastCopProgress_;
  lastStepProgress_ = anyBusy || changed;
  lastVersion_ = version_;
  lastCopProgress_ = copProgress;
  if (!anyBusy && !changed && !externalPending) {
    ++idleSlices_;
  } else {
    idleSlices_ = 0;
  }
  if (idleSlices_ >= std::max<uint32_t>(1, options.hangSlices)) return finish(CoreStop::Hang);
  if (now_ >= options.maxCycles) return finish(CoreStop::CycleLimit);
  return std::nullopt;
}

void TensixCore::resetForEpoch() {
  received_.fill(0);
  acked_.fill(0);
  sems_.fill(0);
  sems_[c::kSemPackMath] = 2;
  for (auto& p : semPosts_) p.clear();
  loaded_.fill(false);
  for (HartTrack& tr : track_) tr = HartTrack{};
  for (std::string& d : debug_) d.clear();
  timeline_ = CoreTimeline{};
  for (auto& h : harts_) h->reset(0);
  now_ = 0;
  ++version_;
  lastVersion_ = version_;
  lastCopProgress_ = cop_ ? cop_->progress() : 0;
  idleSlices_ = 0;
  lastStepProgress_ = false;
}

void TensixCore::startAt(uint64_t cycle) {
  now_ = std::max(now_, cycle);
  for (auto& h : harts_) h->advanceCyclesTo(cycle);
}

bool TensixCore::threadActive(Thread thread) const {
  const HartTrack& tr = track_[thread];
  return loaded_[thread] && !tr.stopped && tr.state != HartState::Absent && tr.state != HartState::Done &&
         tr.state != HartState::Faulted;
}

bool TensixCore::asleep() const {
  for (uint32_t i = 0; i < c::kThreadCount; ++i) {
    const HartTrack& tr = track_[i];
    if (tr.state == HartState::Absent || tr.state == HartState::Done) continue;
    if (!tr.asleep || tr.sleepVersion != version_ || (cop_ ? cop_->progress() : 0) != tr.sleepCopProgress) return false;
    if (tr.state == HartState::Stalled && cop_ && cop_->stallMayEndBy(static_cast<Thread>(i), ~uint64_t{0})) return false;
  }
  return true;
}

void TensixCore::skipTo(uint64_t cycle) {
  if (cycle <= now_) return;
  now_ = cycle;
  for (uint32_t i = 0; i < c::kThreadCount; ++i) {
    HartTrack& tr = track_[i];
    if (tr.state == HartState::Absent || tr.state == HartState::Done) continue;
    Hart& h = *harts_[i];
    if (tr.state == HartState::Stalled && h.cycles() < cycle) tr.stallCycles += cycle - h.cycles();
    h.advanceCyclesTo(cycle);
  }
}

CoreRunResult TensixCore::run(const RunOptions& options, const Agent& agent) {
  bool pending = agent ? agent(*this) : false;  // e.g. feed the first tiles before the harts start
  for (;;) {
    if (std::optional<CoreRunResult> r = step(options, pending)) return std::move(*r);
    pending = agent ? agent(*this) : false;
  }
}

} // namespace tessera::sim
