// One simulated Tensix worker core: L1, three RV32IM harts (TRISC0 unpack,
// TRISC1 math, TRISC2 pack) with their local memories, the memory-mapped
// registers of lib/device/device_contract.h, and a scheduler that interleaves
// the harts, charges cycles and detects hangs.
//
// The coprocessor is not part of this class: the core forwards the words the
// harts store to the instruction port to a CoprocessorPort (below), which the
// coprocessor (lib/sim/coprocessor.hpp) implements. External agents (the
// stream engine, a test harness) move tile counters through the host API
// between scheduler slices.
#pragma once
#include "device/arch.hpp"
#include "device/device_contract.h"
#include "elf/elf.hpp"
#include "sim/rv32.hpp"
#include "sim/trace.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

using contract::Thread;

// "unpack", "math", "pack".
const char* threadName(Thread thread);
// "unpack (TRISC0)" etc., as reports print them.
std::string threadLabel(Thread thread);
// Human name of an MMIO register, e.g. "operand 16 tiles received",
// "semaphore 1 (PackMath) wait"; "unmapped" for addresses with no register.
std::string mmioRegisterName(uint32_t address);

// L1 address range [base, base + size) of a thread's code (and read-only data).
struct Region {
  uint32_t base = 0;
  uint32_t size = 0;
  bool contains(uint64_t address, uint64_t bytes) const {
    return address >= base && address + bytes <= uint64_t{base} + size;
  }
};
Region codeRegion(Thread thread);

// L1 size of a worker core of the arch (grayskull 1 MiB, others 1464 KiB).
uint32_t workerL1Size(Arch arch);

// ---------------------------------------------------------------------------
// The coprocessor interface.
//
// The core calls push() for every store a hart makes to kCopInstrPort, in
// program order per thread, and status() for every load of kCopStatus. The
// coprocessor reads and writes L1 through TensixCore::l1() (it gets the span
// when it is constructed). All calls happen on the scheduler's thread.
// ---------------------------------------------------------------------------
struct PortResult {
  enum class Kind : uint8_t {
    Accepted,  // the word is consumed
    Stall,     // not consumed now: the hart stays on its store and pushes the same word again later
    Fault,     // the instruction is invalid: the run stops with a coprocessor fault naming faultCode
  };
  Kind kind = Kind::Accepted;
  uint32_t cycles = 0;     // Accepted: cycles the issuing hart spends on this word beyond the store itself
  uint32_t faultCode = 0;  // Fault: a contract::CopFault code
  // Accepted: when the instruction keeps its unit busy (the trace's unit spans;
  // with an instruction FIFO not the push's cycle), and for how long.
  uint64_t busyStart = 0;
  uint32_t busyCycles = 0;

  static PortResult accepted(uint32_t extraCycles = 0, uint64_t busyStart = 0, uint32_t busyCycles = 0) {
    return {Kind::Accepted, extraCycles, 0, busyStart, busyCycles};
  }
  static PortResult stall() { return {Kind::Stall, 0, 0}; }
  static PortResult fault(uint32_t code) { return {Kind::Fault, 0, code}; }
};

class CoprocessorPort {
public:
  virtual ~CoprocessorPort() = default;
  // One word of `thread`'s instruction stream (opcode word or argument
  // word), at the hart's cycle `cycle`. A word that returns Stall is pushed
  // again, unchanged, on a later scheduler slice; nothing else of that thread
  // is pushed in between.
  virtual PortResult push(Thread thread, uint32_t word, uint64_t cycle) = 0;
  // Value of kCopStatus for `thread`: 0 or the CopFault of its last instruction.
  virtual uint32_t status(Thread thread) const = 0;
  // Any number that changes whenever the coprocessor's state changes in a
  // way that could let a stalled push proceed (e.g. a count of completed
  // instructions and freed source banks). The hang detector compares it
  // across slices; it must not change while nothing happens.
  virtual uint64_t progress() const = 0;
  // What `thread`'s stalled push waits for, for hang reports, e.g.
  // "srcA has no free bank (math has not consumed it)".
  virtual std::string waitReason(Thread thread) const = 0;
  // Cycles the math unit (FPU and SFPU) was busy so far this epoch (the
  // per-input timeline of loader --perf-check); 0 when not known.
  virtual uint64_t mathBusyCycles() const { return 0; }
  // Whether `thread`'s stalled push may proceed once the hart's clock
  // reaches `cycle` although progress() has not changed (e.g. a queue that
  // drains with time). The core lets a stalled hart sleep through a slice
  // only when this is false (RunOptions::sleepWhileWaiting).
  virtual bool stallMayEndBy(Thread thread, uint64_t cycle) const { return false; }
  // The cycle by which every instruction `thread` pushed has finished, when
  // instructions run asynchronously (an instruction FIFO); 0 otherwise.
  virtual uint64_t doneAt(Thread) const { return 0; }
};

// Per-input timing, recorded only when asked (TensixCore::setRecordTimeline;
// loader --perf-check): each event is a hart's cycle with the operand's tile
// count so far and the math unit's busy cycles so far.
struct TimelineEvent {
  uint64_t cycle = 0;
  uint64_t tiles = 0;
  uint64_t mathBusy = 0;
};
struct CoreTimeline {
  std::optional<uint64_t> firstUnpack;      // the unpack thread's first UNPACK instruction
  std::vector<TimelineEvent> outputPushes;  // pack pushes to output operand 16
  std::vector<TimelineEvent> input0Pops;    // unpack pops of input operand 0
  // Per thread (unpack, math, pack): its coprocessor instructions' busy
  // spans (TensixCore::setRecordSpans; loader --trace, sim/trace.hpp).
  std::array<std::vector<UnitSpan>, contract::kThreadCount> busy;
};

// ---------------------------------------------------------------------------
// Operand table (host side): the firmware's job, written before the harts run.
// ---------------------------------------------------------------------------
void writeOperandEntry(std::span<uint8_t> l1, uint32_t operand, const contract::OperandEntry& entry);
contract::OperandEntry readOperandEntry(std::span<const uint8_t> l1, uint32_t operand);
void writeEpochInfo(std::span<uint8_t> l1, const contract::EpochInfo& info);

// ---------------------------------------------------------------------------
// Running.
// ---------------------------------------------------------------------------
struct CoreConfig {
  Arch arch = Arch::Grayskull;
  std::string name = "core";  // reports say "core '<name>'"
  uint32_t l1Size = 0;        // bytes; 0: the arch's worker L1 (an ethernet core has its own, smaller)
  CycleModel cycleModel{};
};

struct RunOptions {
  uint64_t sliceCycles = 256;          // scheduler slice: each hart runs until its clock reaches the slice end
  uint64_t maxCycles = uint64_t{1} << 34;  // stop (CycleLimit) when the core clock passes this
  uint32_t hangSlices = 16;            // consecutive slices without progress that make a hang
  // A hart that stalled or only polled in its last slice sleeps (its clock
  // moves to the slice end without running) until a tile counter,
  // semaphore, mailbox or the coprocessor changes: rerunning it could only
  // stall or poll again. Same results; a woken hart resumes where it went
  // to sleep, so cycles may differ by the few cycles of a poll loop's phase.
  bool sleepWhileWaiting = false;
  // A hart that stalls keeps its clock while the other harts of the core run
  // on in the same slice; when one of them changes what it may wait for (a
  // semaphore post, a coprocessor push), it retries at its own clock, and
  // the semaphore post's or the instruction's cycle stamp sets when it
  // proceeds. Without it a stall lasts to the slice end.
  bool exactWakes = false;
};

enum class HartState : uint8_t {
  Absent,   // no program loaded: counts as done
  Running,  // made progress in the last slice (or has not run yet)
  Stalled,  // a store that cannot complete (semaphore wait, coprocessor port)
  Polling,  // reads MMIO registers that do not change, and writes nothing
  Done,     // stored to kMailboxDone, or ecall
  Faulted,
};
const char* hartStateName(HartState state);

struct HartReport {
  Thread thread = contract::kUnpackThread;
  HartState state = HartState::Absent;
  uint32_t pc = 0;
  uint64_t instructions = 0;
  uint64_t cycles = 0;       // the hart's clock (at its end when done)
  uint64_t stallCycles = 0;  // cycles spent stalled on a store
  uint32_t exitCode = 0;     // Done
  std::string waitsFor;      // Stalled/Polling: e.g. "semaphore 1 (PackMath) = 0"
};

enum class CoreStop : uint8_t {
  Done,        // every loaded hart finished (exit codes in the hart reports)
  Fault,       // a hart faulted (CoreRunResult::fault)
  Hang,        // no hart could make progress for RunOptions::hangSlices slices
  CycleLimit,  // RunOptions::maxCycles passed
};
const char* coreStopName(CoreStop stop);  // "done", "fault", "hang", "cycle-limit"

struct CoreFault {
  Thread thread = contract::kUnpackThread;
  std::string category;  // faultKindName(), or "coprocessor-fault", "no-coprocessor", "breakpoint"
  Fault detail;          // pc, instruction word, address, code from the hart
};

struct CoreRunResult {
  CoreStop stop = CoreStop::Done;
  uint64_t cycles = 0;  // core clock: the latest hart clock
  std::optional<CoreFault> fault;
  std::array<HartReport, contract::kThreadCount> harts{};
  // A few lines: why the run stopped and, for hangs/limits/faults, each
  // hart's thread, pc and state or what it waits for.
  std::string message;
  bool ok() const;  // Done and every exit code 0
};

// Called between slices. Acts on the core through its host API. Returns true
// while it has work that can proceed without the core changing anything
// (e.g. data in flight), which keeps the hang detector from firing.
using Agent = std::function<bool(class TensixCore&)>;

class TensixCore {
public:
  explicit TensixCore(const CoreConfig& config = {});
  ~TensixCore();
  TensixCore(const TensixCore&) = delete;
  TensixCore& operator=(const TensixCore&) = delete;

  const std::string& name() const { return config_.name; }
  void setName(std::string name) { config_.name = std::move(name); }  // reports say "core '<name>'"
  Arch arch() const { return config_.arch; }
  std::span<uint8_t> l1() { return l1_; }
  std::span<const uint8_t> l1() const { return l1_; }
  std::span<uint8_t> localMemory(Thread thread) { return local_[thread]; }
  // Not owned; may be null (then the instruction port faults).
  void setCoprocessor(CoprocessorPort* port) { cop_ = port; }

  // --- Programs. Segments must lie in the thread's code region (L1) or its
  // local memory; the entry point in the code region. On error nothing is
  // loaded and `error` names the thread and the address. Loading zeroes the
  // thread's code region and local memory, resets its hart to the entry with
  // sp at the top of local memory.
  bool loadProgram(Thread thread, const elf::Image& image, std::string& error);
  bool loadElf(Thread thread, std::span<const uint8_t> bytes, std::string& error);
  bool loadElfFile(Thread thread, const std::string& path, std::string& error);
  bool loaded(Thread thread) const { return loaded_[thread]; }

  // --- Host side (firmware, stream engine, harness). Changes count as
  // progress for the hang detector.
  void writeOperand(uint32_t operand, const contract::OperandEntry& entry) { writeOperandEntry(l1_, operand, entry); }
  contract::OperandEntry operand(uint32_t operand) const { return readOperandEntry(l1_, operand); }
  void writeEpochInfo(const contract::EpochInfo& info) { sim::writeEpochInfo(l1_, info); }
  uint32_t tilesReceived(uint32_t operand) const { return received_.at(operand); }
  uint32_t tilesAcked(uint32_t operand) const { return acked_.at(operand); }
  uint32_t tilesOccupied(uint32_t operand) const { return received_.at(operand) - acked_.at(operand); }
  void addTilesReceived(uint32_t operand, uint32_t count);
  void addTilesAcked(uint32_t operand, uint32_t count);
  uint32_t semaphore(uint32_t index) const { return sems_.at(index); }
  void postSemaphore(uint32_t index, uint32_t count);
  // Bytes the thread wrote to kDebugPutChar / kDebugPutWord (words as 8 hex digits and a newline).
  const std::string& debugLog(Thread thread) const { return debug_[thread]; }

  const Hart& hart(Thread thread) const { return *harts_[thread]; }
  Hart& hart(Thread thread) { return *harts_[thread]; }
  uint64_t cycles() const { return now_; }

  // --- Scheduler. run() = step() until it returns a result, calling the
  // agent after every slice. step() runs one slice; `externalPending` is
  // the agent's last answer (see Agent).
  CoreRunResult run(const RunOptions& options = {}, const Agent& agent = {});
  std::optional<CoreRunResult> step(const RunOptions& options, bool externalPending);
  // Snapshot of every hart (state, pc, counters, what it waits for).
  CoreRunResult snapshot(CoreStop stop) const;

  // --- Chip hooks (lib/sim/chip.hpp). A chip steps many cores and runs the
  // stream engine between slices; it decides about hangs itself.
  // Whether the last step() made progress of its own: a hart retired useful
  // work or finished, or a tile counter, semaphore, mailbox or the
  // coprocessor changed (whatever `externalPending` said).
  bool lastStepProgressed() const { return lastStepProgress_; }
  // Back to a fresh core for the next epoch, keeping L1: tile counters 0,
  // semaphores at their start values, no programs loaded (every hart
  // absent), clock 0, debug logs empty.
  void resetForEpoch();
  // After loading, before the first step: the harts start at `cycle` (the
  // firmware was reading their binaries from DRAM until then).
  void startAt(uint64_t cycle);
  // RunOptions::sleepWhileWaiting: whether every hart still running sleeps
  // (the core cannot change anything before a counter, semaphore or the
  // coprocessor changes from outside), and the jump of such a core to a
  // later slice start: the sleeping harts' clocks move there (stall cycles
  // counted) as if it had run every slice in between.
  bool asleep() const;
  // Injected fault hart-stop (fault_injection.hpp): the thread never runs
  // again this epoch; reports say it waits for nothing, stopped.
  void stopThread(Thread thread) { track_[thread].stopped = true; }
  bool threadActive(Thread thread) const;  // loaded, not done, not faulted, not stopped
  void skipTo(uint64_t cycle);
  // Records the per-input timeline this epoch (kept across resetForEpoch's
  // clearing of the events; off by default: it costs memory per tile).
  void setRecordTimeline(bool on) { recordTimeline_ = on; }
  const CoreTimeline& timeline() const { return timeline_; }
  // Records the units' busy spans into the timeline (loader --trace; off by default).
  void setRecordSpans(bool on) { recordSpans_ = on; }

private:
  class Mmio;
  struct PollEntry {
    uint32_t address = 0;
    uint32_t value = 0;
    bool readThisSlice = false;
  };
  struct HartTrack {
    HartState state = HartState::Absent;
    uint64_t stallCycles = 0;
    uint32_t exitCode = 0;
    // Polling detection, reset every slice.
    uint32_t mmioReads = 0;
    uint32_t mmioWrites = 0;
    bool sawChange = false;
    std::array<PollEntry, 16> poll{};  // registers a polling loop reads; more count as changing
    uint32_t pollCount = 0;
    // RunOptions::sleepWhileWaiting: asleep since the core's version_ and the
    // coprocessor's progress() were these.
    bool asleep = false;
    bool stopped = false;  // stopThread
    uint64_t sleepVersion = 0;
    uint64_t sleepCopProgress = 0;
  };

  MmioResult mmioLoad(const Hart& hart, uint32_t address);
  MmioResult mmioStore(const Hart& hart, uint32_t address, uint32_t value);
  void notePoll(Thread thread, uint32_t address, uint32_t value);
  std::string waitDescription(Thread thread) const;
  CoreRunResult finish(CoreStop stop, std::optional<CoreFault> fault = std::nullopt);
  // Runs one hart to the slice end or its next stall; a fault ends the run.
  std::optional<CoreRunResult> runHart(uint32_t index, uint64_t sliceEnd, const RunOptions& options, bool& anyBusy);

  CoreConfig config_;
  bool recordTimeline_ = false;
  bool recordSpans_ = false;
  CoreTimeline timeline_;
  std::vector<uint8_t> l1_;
  std::array<std::vector<uint8_t>, contract::kThreadCount> local_;
  std::unique_ptr<Mmio> mmio_;
  std::array<std::unique_ptr<Hart>, contract::kThreadCount> harts_;
  std::array<bool, contract::kThreadCount> loaded_{};
  std::array<HartTrack, contract::kThreadCount> track_{};
  std::array<std::string, contract::kThreadCount> debug_;
  std::array<uint32_t, contract::kOperandCount> received_{};
  std::array<uint32_t, contract::kOperandCount> acked_{};
  std::array<uint32_t, contract::kSemaphoreCount> sems_{};
  // With an instruction FIFO, a thread's post takes effect when its pushed
  // instructions have finished: the cycle and count of each post not yet
  // taken, oldest first (units not covered here, e.g. initial values, are
  // available at once).
  struct TimedPost { uint64_t at; uint32_t count; };
  std::array<std::vector<TimedPost>, contract::kSemaphoreCount> semPosts_{};
  // Extra cycles a hart waits before a signal so its instructions have finished.
  uint32_t drainCycles(const Hart& hart, Thread t) const;
  CoprocessorPort* cop_ = nullptr;
  uint64_t now_ = 0;         // end of the last slice
  uint64_t version_ = 0;     // bumped by every counter/semaphore/mailbox change
  uint64_t lastVersion_ = 0;     // version_ at the end of the previous step
  uint64_t lastCopProgress_ = 0; // cop_->progress() at the end of the previous step
  uint32_t idleSlices_ = 0;
  bool lastStepProgress_ = false;
  bool exactWakes_ = false;  // RunOptions::exactWakes of the current step: every post is timed
};

} // namespace tessera::sim
