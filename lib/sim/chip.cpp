#include "sim/chip.hpp"

#include "device/arch_params.hpp"
#include "sim/fault_injection.hpp"
#include "sim/firmware.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace tessera::sim {

namespace c = contract;

namespace {

// The per-thread lines of a core's report (as TensixCore's own hang report).
std::string threadLines(const CoreRunResult& r, const std::string& indent) {
  std::string s;
  for (const HartReport& h : r.harts) {
    if (h.state == HartState::Absent) continue;
    s += "\n" + indent + threadLabel(h.thread) + " pc " + support::hexLiteral(h.pc) + ": ";
    switch (h.state) {
    case HartState::Done: s += "done (exit " + std::to_string(h.exitCode) + ")"; break;
    case HartState::Stalled:
    case HartState::Polling: s += "waits for " + h.waitsFor; break;
    default: s += hartStateName(h.state); break;
    }
  }
  return s;
}

}  // namespace

const char* chipStopName(ChipStop s) {
  switch (s) {
  case ChipStop::Done: return "done";
  case ChipStop::Fault: return "fault";
  case ChipStop::Hang: return "hang";
  case ChipStop::CycleLimit: return "cycle-limit";
  }
  return "?";
}

bool ChipRunResult::ok() const {
  if (stop != ChipStop::Done) return false;
  for (const CoreEpochReport& c : cores)
    if (c.kernel && !c.harts.ok()) return false;
  return true;
}

struct Chip::Worker {
  std::unique_ptr<TensixCore> core;
  std::unique_ptr<Coprocessor> cop;
  std::unique_ptr<CoprocessorPortAdapter> port;
};

Chip::Chip(const SocDescriptor& soc) : Chip(soc, DataMovementModel::forArch(soc.arch)) {}

Chip::Chip(const SocDescriptor& soc, const DataMovementModel& model)
    : soc_(soc), model_(model), dram_(soc_), host_(kHostMemoryChannels, kHostChannelBytes),
      engine_(std::make_unique<StreamEngine>(soc_, dram_, model_, &host_)) {
  workers_.resize(static_cast<size_t>(std::max(1, soc_.gridX)) * static_cast<size_t>(std::max(1, soc_.gridY)));
}

Chip::~Chip() = default;

static std::optional<uint32_t> ethChannelOf(const SocDescriptor& soc, CoreCoord noc) {
  for (size_t k = 0; k < soc.ethCores.size(); ++k)
    if (soc.ethCores[k] == noc) return static_cast<uint32_t>(k);
  return std::nullopt;
}

bool Chip::isEthernetCore(CoreCoord noc) const { return ethChannelOf(soc_, noc).has_value(); }

void Chip::setEthernet(const EthPorts& ports) {
  id_ = ports.chip;
  engine_->setEthernet(ports);
}

Chip::Worker* Chip::worker(CoreCoord noc) {
  if (noc.x < 0 || noc.y < 0 || noc.x >= soc_.gridX || noc.y >= soc_.gridY) return nullptr;
  const bool isWorker = soc_.isWorker(noc);
  const std::optional<uint32_t> ethChan = isWorker ? std::nullopt : ethChannelOf(soc_, noc);
  if (!isWorker && (!ethChan || soc_.ethL1Size == 0)) return nullptr;
  auto& w = workers_[static_cast<size_t>(noc.y) * soc_.gridX + noc.x];
  if (!w) {
    w = std::make_unique<Worker>();
    CoreConfig cfg;
    cfg.arch = soc_.arch;
    cfg.name = toString(noc);
    if (ethChan) {  // an ethernet core: its own L1, streams only
      cfg.name = "eth" + std::to_string(*ethChan) + "@" + toString(noc);
      cfg.l1Size = static_cast<uint32_t>(std::min<uint64_t>(soc_.ethL1Size, UINT32_MAX));
    }
    w->core = std::make_unique<TensixCore>(cfg);
    if (!ethChan) {
      w->cop = std::make_unique<Coprocessor>(w->core->l1(), copCycleModelFor(soc_.arch),
                                             static_cast<uint32_t>(destTiles(soc_.arch, false)));
      w->port = std::make_unique<CoprocessorPortAdapter>(*w->cop);
      w->core->setCoprocessor(w->port.get());
    }
    engine_->attachCore(noc, *w->core, ethChan.has_value());
  }
  return w.get();
}

TensixCore* Chip::core(CoreCoord noc) {
  Worker* w = worker(noc);
  return w ? w->core.get() : nullptr;
}

const TensixCore* Chip::findCore(CoreCoord noc) const {
  if (noc.x < 0 || noc.y < 0 || noc.x >= soc_.gridX || noc.y >= soc_.gridY) return nullptr;
  const auto& w = workers_[static_cast<size_t>(noc.y) * soc_.gridX + noc.x];
  return w ? w->core.get() : nullptr;
}

Coprocessor* Chip::coprocessor(CoreCoord noc) {
  Worker* w = worker(noc);
  return w ? w->cop.get() : nullptr;  // none on an ethernet core
}

void Chip::setCoreName(CoreCoord noc, const std::string& name) {
  if (TensixCore* c = core(noc)) c->setName(name);
}

void Chip::beginEpoch() {
  for (auto& w : workers_) {
    if (!w) continue;
    w->core->resetForEpoch();
    if (w->cop) {
      w->cop->reset();
      w->cop->resetCounters();
    }
    clearOverlay(*w->core);
  }
  engine_->clear();
}

bool Chip::loadKernelDir(CoreCoord noc, const std::string& dir, std::string& error) {
  TensixCore* c = core(noc);
  if (!c || !coprocessor(noc)) {
    error = c ? "core '" + c->name() + "' is an ethernet core: it runs no kernel" : "no functional worker at NOC " + toString(noc);
    return false;
  }
  static const char* const kFiles[c::kThreadCount] = {"unpack.elf", "math.elf", "pack.elf"};
  for (uint32_t t = 0; t < c::kThreadCount; ++t) {
    const std::string path = (std::filesystem::path(dir) / kFiles[t]).string();
    std::string why;
    if (!c->loadElfFile(static_cast<Thread>(t), path, why)) {
      error = "core '" + c->name() + "': " + why;
      return false;
    }
  }
  return true;
}

bool Chip::loadBlobHex(CoreCoord noc, const std::string& hexText, std::string& error) {
  TensixCore* c = core(noc);
  if (!c) {
    error = "no functional worker at NOC " + toString(noc);
    return false;
  }
  Expected<std::vector<blob::HexSegment>> segs = blob::readHex(hexText);
  if (!segs) {
    error = "core '" + c->name() + "': blob hex: " + segs.error();
    return false;
  }
  return loadOverlayHex(*c, *segs, error);
}

bool Chip::loadBlobWords(CoreCoord noc, std::span<const uint32_t> words, std::string& error) {
  TensixCore* c = core(noc);
  if (!c) {
    error = "no functional worker at NOC " + toString(noc);
    return false;
  }
  return loadOverlayWords(*c, words, error);
}

struct Chip::Run {
  struct Used {
    CoreCoord noc;
    TensixCore* core = nullptr;
    bool kernel = false;
    bool blob = false;
    uint32_t streams = 0;
    bool finished = false;  // harts done (or none)
    uint64_t start = 0;     // the harts' first slice (options.startCycles)
    CoreRunResult harts;
    std::optional<CoreRunResult> stepped;  // this round's step() result
    bool progressed = false;               // this round's lastStepProgressed()
  };
  ChipRunOptions options;
  uint64_t slice = 1;
  std::vector<Used> used;
  RunOptions coreOptions;
  ChipRunResult result;
  bool reported = false;
};

void Chip::fail(const std::string& category, const std::string& coreName, const std::string& message) {
  ChipRunResult& result = run_->result;
  result.stop = ChipStop::Fault;
  result.faultCategory = category;
  result.faultCore = coreName;
  result.message = message;
}

void Chip::reportCores(CoreStop snapshotStop) {
  ChipRunResult& result = run_->result;
  if (run_->reported) return;
  run_->reported = true;
  for (Run::Used& u : run_->used) {
    CoreEpochReport rep;
    rep.noc = u.noc;
    rep.name = u.core->name();
    rep.kernel = u.kernel;
    rep.blob = u.blob;
    rep.streams = u.streams;
    rep.harts = u.kernel && u.finished ? u.harts : u.core->snapshot(snapshotStop);
    rep.cycles = std::max(u.kernel ? rep.harts.cycles : 0, engine_->lastActivity(u.noc));
    if (const Coprocessor* cop = coprocessor(u.noc)) rep.cop = cop->counters();
    if (run_->options.recordTimeline || run_->options.recordTrace) rep.timeline = u.core->timeline();
    result.cycles = std::max(result.cycles, rep.cycles);
    result.cores.push_back(std::move(rep));
  }
  result.cycles = std::max(result.cycles, engine_->lastActivity());
  result.streams = engine_->counters();
  result.ethLinks = engine_->ethLinks();
  if (run_->options.recordTrace) result.transfers = engine_->takeTransfers();
}

bool Chip::startRun(const ChipRunOptions& options) {
  run_ = std::make_unique<Run>();
  run_->options = options;
  run_->result.chip = id_;
  run_->result.inputCount = options.epoch.inputCount;
  ChipRunResult& result = run_->result;
  const uint64_t slice = run_->slice = std::max<uint64_t>(1, options.sliceCycles);
  std::vector<Run::Used>& used = run_->used;

  // --- Firmware: epoch start on every core with a blob or a program.
  for (int y = 0; y < soc_.gridY && result.message.empty(); ++y)
    for (int x = 0; x < soc_.gridX && result.message.empty(); ++x) {
      const auto& w = workers_[static_cast<size_t>(y) * soc_.gridX + x];
      if (!w) continue;
      TensixCore& core = *w->core;
      Run::Used u;
      u.noc = CoreCoord{x, y};
      u.core = &core;
      for (uint32_t t = 0; t < c::kThreadCount; ++t) u.kernel |= core.loaded(static_cast<Thread>(t));
      u.blob = hasOverlayBlob(core);
      if (!u.kernel && !u.blob) continue;
      if (u.blob) {
        std::string error;
        std::optional<blob::CoreBlob> b = readOverlayBlob(core, error);
        if (!b) {
          fail("bad-blob", core.name(), error);
          break;
        }
        if (b->x != static_cast<uint32_t>(x) || b->y != static_cast<uint32_t>(y)) {
          fail("bad-blob", core.name(),
               "core '" + core.name() + "': the blob in its L1 is for core " + std::to_string(b->x) + "-" +
                   std::to_string(b->y) + " (x-y), not " + toString(u.noc));
          break;
        }
        if (b->chip != id_) {
          fail("bad-blob", core.name(),
               "core '" + core.name() + "': the blob in its L1 is for chip " + std::to_string(b->chip) +
                   ", not chip " + std::to_string(id_));
          break;
        }
        if (!writeOperandTableFromBlob(core, *b, error)) {
          fail("bad-blob", core.name(), error);
          break;
        }
        StreamFault f;
        if (!engine_->configure(*b, f)) {
          fail(f.category, f.core, f.message);
          break;
        }
        u.streams = static_cast<uint32_t>(b->streams.size());
      }
      core.writeEpochInfo(options.epoch);
      core.setRecordTimeline((options.recordTimeline || options.recordTrace) && u.kernel);
      core.setRecordSpans(options.recordTrace && u.kernel);
      if (options.afterFirmware) options.afterFirmware(u.noc, core);
      u.finished = !u.kernel;
      if (auto it = options.startCycles.find(u.noc); it != options.startCycles.end() && u.kernel) {
        // Rounded up to a slice so the core's slices stay aligned with the rounds.
        u.start = (it->second + slice - 1) / slice * slice;
        core.startAt(u.start);
      }
      used.push_back(std::move(u));
    }
  if (result.stop == ChipStop::Fault) return false;

  // --- Prologue.
  engine_->setInjector(options.inject);
  engine_->recordTransfers(options.recordTrace);
  engine_->start(0);
  result.prologueCycles = engine_->runPrologue(0);
  if (const auto& f = engine_->fault()) {
    fail(f->category, f->core, f->message);
    return false;
  }
  run_->coreOptions.sliceCycles = slice;
  run_->coreOptions.maxCycles = ~uint64_t{0};
  run_->coreOptions.hangSlices = ~uint32_t{0};
  run_->coreOptions.sleepWhileWaiting = true;
  run_->coreOptions.exactWakes = true;
  if (options.threads > 1 && (!pool_ || pool_->jobs() != options.threads))
    pool_ = std::make_unique<WorkerPool>(options.threads);
  return true;
}

Chip::Round Chip::runRound(uint64_t now, uint64_t until) {
  Round round;
  round.asleep = true;
  std::vector<Run::Used>& used = run_->used;
  auto stepCore = [&](size_t i) {
    Run::Used& u = used[i];
    if (u.finished || u.start > now) return;
    u.stepped = u.core->step(run_->coreOptions, true);
    u.progressed = u.core->lastStepProgressed();
  };
  if (run_->options.inject) {
    std::vector<TensixCore*> running;
    for (const Run::Used& u : used)
      if (u.kernel && !u.finished && u.start <= now) running.push_back(u.core);
    run_->options.inject->beforeRound(now, running);
  }
  // The slices of every core (side by side on the pool's threads), then what
  // they mean for the chip, in core order.
  if (pool_ && run_->options.threads > 1) pool_->parallelFor(used.size(), stepCore);
  else for (size_t i = 0; i < used.size(); ++i) stepCore(i);
  for (Run::Used& u : used) {
    if (u.finished) continue;
    if (u.start > now) {  // still reading its binaries: a known future event, not a hang
      round.hartsRunning = true;
      round.progress = true;
      round.hartWake = round.hartWake ? std::min(*round.hartWake, u.start) : u.start;
      continue;
    }
    std::optional<CoreRunResult> r = std::move(u.stepped);
    u.stepped.reset();
    round.progress |= u.progressed;
    if (u.progressed) round.asleep = false;
    if (!r) {
      round.hartsRunning = true;
      if (!u.core->asleep()) round.asleep = false;
      continue;
    }
    round.asleep = false;
    if (r->stop == CoreStop::Fault) {
      fail(r->fault ? r->fault->category : "fault", u.core->name(), r->message);
      u.finished = true;
      u.harts = std::move(*r);
      round.fault = true;
      return round;
    }
    u.finished = true;
    u.harts = std::move(*r);
    engine_->kernelFinished(u.noc, u.harts.cycles);  // firmware epilogue: gradient accumulators back to DRAM
  }
  if (engine_->advance(until)) {
    round.progress = true;
    round.asleep = false;
  }
  if (const auto& f = engine_->fault()) {
    fail(f->category, f->core, f->message);
    round.fault = true;
    return round;
  }
  const bool allFinished =
      std::all_of(run_->used.begin(), run_->used.end(), [](const Run::Used& u) { return u.finished; });
  round.done = allFinished && engine_->done();
  if (round.done)
    if (std::optional<StreamFault> f = engine_->auditCredits()) {
      fail(f->category, f->core, f->message);
      round.done = false;
      round.fault = true;
    }
  return round;
}

uint64_t Chip::skipIdle(const Round& round, uint64_t now) {
  if (!round.asleep) return now;
  std::optional<uint64_t> wake = engine_->nextWakeTime();
  if (round.hartWake) wake = wake ? std::min(*wake, *round.hartWake) : *round.hartWake;
  if (!wake || *wake <= now) return now;
  const uint64_t slice = run_->slice;
  const uint64_t to = *wake / slice * slice;
  if (to <= now) return now;
  for (Run::Used& u : run_->used)
    if (!u.finished && u.start <= now) u.core->skipTo(to);
  return to;
}

ChipRunResult Chip::finishRun(ChipStop stop, uint64_t now) {
  ChipRunResult& result = run_->result;
  switch (stop) {
  case ChipStop::Fault:
    reportCores(CoreStop::Fault);
    break;
  case ChipStop::Hang:
  case ChipStop::CycleLimit: {
    const bool hang = stop == ChipStop::Hang;
    result.stop = stop;
    result.waitingStreams = engine_->waitingReport();
    reportCores(hang ? CoreStop::Hang : CoreStop::CycleLimit);
    result.message = hang ? "chip: hang at cycle " + std::to_string(now) + ": no core or stream can make progress"
                          : "chip: cycle limit reached at cycle " + std::to_string(now);
    result.message += waitingText(result, "  ");
    break;
  }
  case ChipStop::Done:
    // --- Epilogue: the DRAM pointers are already final (the streams moved them).
    reportCores(CoreStop::Done);
    result.stop = ChipStop::Done;
    result.message = "chip: epoch done at cycle " + std::to_string(result.cycles) + " (" +
                     std::to_string(result.streams.tilesMoved()) + " tile transfers)";
    for (const CoreEpochReport& c : result.cores)
      for (const HartReport& h : c.harts.harts)
        if (c.kernel && h.state == HartState::Done && h.exitCode != 0)
          result.message += "\n  core '" + c.name + "' " + threadLabel(h.thread) + " exited with code " +
                            std::to_string(h.exitCode);
    break;
  }
  ChipRunResult out = std::move(result);
  run_.reset();
  return out;
}

ChipRunResult Chip::runEpoch(const ChipRunOptions& options) {
  if (!startRun(options)) return finishRun(ChipStop::Fault, 0);
  const uint64_t slice = std::max<uint64_t>(1, options.sliceCycles);
  uint64_t now = 0;
  uint32_t idle = 0;
  for (;;) {
    const uint64_t until = now + slice;
    const Round round = runRound(now, until);
    if (round.fault) return finishRun(ChipStop::Fault, until);
    now = until;
    if (round.done) break;
    if (!round.progress && !engine_->busy()) ++idle;
    else idle = 0;
    if (idle >= std::max<uint32_t>(1, options.hangRounds) || now >= options.maxCycles)
      return finishRun(idle >= std::max<uint32_t>(1, options.hangRounds) ? ChipStop::Hang : ChipStop::CycleLimit, now);
    // Only streams left and nothing for them to do until a later cycle: skip there.
    if (!round.hartsRunning && !round.progress) {
      if (std::optional<uint64_t> wake = engine_->nextWakeTime(); wake && *wake > now)
        now = std::min(options.maxCycles, *wake / slice * slice);
    } else if (round.asleep) {
      // Every hart sleeps until the streams deliver: skip the rounds before their next event.
      now = std::min(options.maxCycles, skipIdle(round, now));
    }
  }
  return finishRun(ChipStop::Done, now);
}

std::string waitingText(const ChipRunResult& result, const std::string& indent) {
  std::string s;
  if (!result.waitingStreams.empty()) {
    s += "\n" + indent + "waiting streams:";
    for (const std::string& w : result.waitingStreams) s += "\n" + indent + "  " + w;
  }
  bool header = false;
  for (const CoreEpochReport& c : result.cores) {
    if (!c.kernel) continue;
    bool waiting = false;
    for (const HartReport& h : c.harts.harts) waiting |= h.state != HartState::Absent && h.state != HartState::Done;
    if (!waiting) continue;
    if (!header) s += "\n" + indent + "waiting threads:";
    header = true;
    s += "\n" + indent + "  core '" + c.name + "':" + threadLines(c.harts, indent + "    ");
  }
  return s;
}

}  // namespace tessera::sim
