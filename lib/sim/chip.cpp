#include "sim/chip.hpp"

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
    : soc_(soc), model_(model), dram_(soc_), host_(kHostChannels, kHostChannelBytes),
      engine_(std::make_unique<StreamEngine>(soc_, dram_, model_, &host_)) {
  workers_.resize(static_cast<size_t>(std::max(1, soc_.gridX)) * static_cast<size_t>(std::max(1, soc_.gridY)));
}

Chip::~Chip() = default;

Chip::Worker* Chip::worker(CoreCoord noc) {
  if (noc.x < 0 || noc.y < 0 || noc.x >= soc_.gridX || noc.y >= soc_.gridY || !soc_.isWorker(noc)) return nullptr;
  auto& w = workers_[static_cast<size_t>(noc.y) * soc_.gridX + noc.x];
  if (!w) {
    w = std::make_unique<Worker>();
    CoreConfig cfg;
    cfg.arch = soc_.arch;
    cfg.name = toString(noc);
    w->core = std::make_unique<TensixCore>(cfg);
    w->cop = std::make_unique<Coprocessor>(w->core->l1());
    w->port = std::make_unique<CoprocessorPortAdapter>(*w->cop);
    w->core->setCoprocessor(w->port.get());
    engine_->attachCore(noc, *w->core);
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
  return w ? w->cop.get() : nullptr;
}

void Chip::setCoreName(CoreCoord noc, const std::string& name) {
  if (TensixCore* c = core(noc)) c->setName(name);
}

void Chip::beginEpoch() {
  for (auto& w : workers_) {
    if (!w) continue;
    w->core->resetForEpoch();
    w->cop->reset();
    w->cop->resetCounters();
    clearOverlay(*w->core);
  }
  engine_->clear();
}

bool Chip::loadKernelDir(CoreCoord noc, const std::string& dir, std::string& error) {
  TensixCore* c = core(noc);
  if (!c) {
    error = "no functional worker at NOC " + toString(noc);
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
  std::string why;
  std::optional<std::vector<blob::HexSegment>> segs = blob::readHex(hexText, why);
  if (!segs) {
    error = "core '" + c->name() + "': blob hex: " + why;
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

ChipRunResult Chip::runEpoch(const ChipRunOptions& options) {
  ChipRunResult result;
  struct Used {
    CoreCoord noc;
    TensixCore* core = nullptr;
    bool kernel = false;
    bool blob = false;
    uint32_t streams = 0;
    bool finished = false;  // harts done (or none)
    uint64_t start = 0;     // the harts' first slice (options.startCycles)
    CoreRunResult harts;
  };
  const uint64_t slice = std::max<uint64_t>(1, options.sliceCycles);
  std::vector<Used> used;
  auto fail = [&](const std::string& category, const std::string& coreName, const std::string& message) {
    result.stop = ChipStop::Fault;
    result.faultCategory = category;
    result.faultCore = coreName;
    result.message = message;
  };

  // --- Firmware: epoch start on every core with a blob or a program.
  for (int y = 0; y < soc_.gridY && result.message.empty(); ++y)
    for (int x = 0; x < soc_.gridX && result.message.empty(); ++x) {
      const auto& w = workers_[static_cast<size_t>(y) * soc_.gridX + x];
      if (!w) continue;
      TensixCore& core = *w->core;
      Used u;
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
      if (options.afterFirmware) options.afterFirmware(u.noc, core);
      u.finished = !u.kernel;
      if (auto it = options.startCycles.find(u.noc); it != options.startCycles.end() && u.kernel) {
        // Rounded up to a slice so the core's slices stay aligned with the rounds.
        u.start = (it->second + slice - 1) / slice * slice;
        core.startAt(u.start);
      }
      used.push_back(std::move(u));
    }

  auto reportCores = [&](CoreStop snapshotStop) {
    for (Used& u : used) {
      CoreEpochReport rep;
      rep.noc = u.noc;
      rep.name = u.core->name();
      rep.kernel = u.kernel;
      rep.blob = u.blob;
      rep.streams = u.streams;
      rep.harts = u.kernel && u.finished ? u.harts : u.core->snapshot(snapshotStop);
      rep.cycles = std::max(u.kernel ? rep.harts.cycles : 0, engine_->lastActivity(u.noc));
      if (const Coprocessor* cop = coprocessor(u.noc)) rep.cop = cop->counters();
      result.cycles = std::max(result.cycles, rep.cycles);
      result.cores.push_back(std::move(rep));
    }
    result.cycles = std::max(result.cycles, engine_->lastActivity());
    result.streams = engine_->counters();
  };
  if (result.stop == ChipStop::Fault) {
    reportCores(CoreStop::Fault);
    return result;
  }

  // --- Prologue, then the rounds.
  engine_->start(0);
  result.prologueCycles = engine_->runPrologue(0);
  if (const auto& f = engine_->fault()) {
    fail(f->category, f->core, f->message);
    reportCores(CoreStop::Fault);
    return result;
  }
  RunOptions coreOptions;
  coreOptions.sliceCycles = slice;
  coreOptions.maxCycles = ~uint64_t{0};
  coreOptions.hangSlices = ~uint32_t{0};

  uint64_t now = 0;
  uint32_t idle = 0;
  for (;;) {
    const uint64_t until = now + slice;
    bool progress = false;
    bool hartsRunning = false;
    for (Used& u : used) {
      if (u.finished) continue;
      if (u.start > now) {  // still reading its binaries: a known future event, not a hang
        hartsRunning = true;
        progress = true;
        continue;
      }
      std::optional<CoreRunResult> r = u.core->step(coreOptions, true);
      progress |= u.core->lastStepProgressed();
      if (!r) {
        hartsRunning = true;
        continue;
      }
      if (r->stop == CoreStop::Fault) {
        fail(r->fault ? r->fault->category : "fault", u.core->name(), r->message);
        u.finished = true;
        u.harts = std::move(*r);
        reportCores(CoreStop::Fault);
        return result;
      }
      u.finished = true;
      u.harts = std::move(*r);
      engine_->kernelFinished(u.noc, u.harts.cycles);  // firmware epilogue: gradient accumulators back to DRAM
    }
    progress |= engine_->advance(until);
    if (const auto& f = engine_->fault()) {
      fail(f->category, f->core, f->message);
      reportCores(CoreStop::Fault);
      return result;
    }
    now = until;
    const bool allFinished = std::all_of(used.begin(), used.end(), [](const Used& u) { return u.finished; });
    if (allFinished && engine_->done()) break;
    if (!progress && !engine_->busy()) ++idle;
    else idle = 0;
    if (idle >= std::max<uint32_t>(1, options.hangRounds) || now >= options.maxCycles) {
      const bool hang = idle >= std::max<uint32_t>(1, options.hangRounds);
      result.stop = hang ? ChipStop::Hang : ChipStop::CycleLimit;
      result.waitingStreams = engine_->waitingReport();
      reportCores(hang ? CoreStop::Hang : CoreStop::CycleLimit);
      result.message = hang ? "chip: hang at cycle " + std::to_string(now) + ": no core or stream can make progress"
                            : "chip: cycle limit reached at cycle " + std::to_string(now);
      if (!result.waitingStreams.empty()) {
        result.message += "\n  waiting streams:";
        for (const std::string& s : result.waitingStreams) result.message += "\n    " + s;
      }
      bool header = false;
      for (const CoreEpochReport& c : result.cores) {
        if (!c.kernel) continue;
        bool waiting = false;
        for (const HartReport& h : c.harts.harts)
          waiting |= h.state != HartState::Absent && h.state != HartState::Done;
        if (!waiting) continue;
        if (!header) result.message += "\n  waiting threads:";
        header = true;
        result.message += "\n    core '" + c.name + "':" + threadLines(c.harts, "      ");
      }
      return result;
    }
    // Only streams left and nothing for them to do until a later cycle: skip there.
    if (!hartsRunning && !progress) {
      if (std::optional<uint64_t> wake = engine_->nextWakeTime(); wake && *wake > now)
        now = std::min(options.maxCycles, *wake / slice * slice);
    }
  }

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
  return result;
}

}  // namespace tessera::sim
