#include "loader/driver.hpp"

#include "device/soc_descriptor.hpp"
#include "golden/ops.hpp"
#include "hlk/config.hpp"
#include "loader/artifact_build.hpp"
#include "loader/golden_target.hpp"
#include "loader/host_io.hpp"
#include "loader/output_check.hpp"
#include "loader/perf_check.hpp"
#include "loader/perf_report.hpp"
#include "loader/run_setup.hpp"
#include "loader/sim_target.hpp"
#include "loader/trace_writer.hpp"
#include "sim/cluster_transport.hpp"
#include "sim/fault_injection.hpp"
#include "netlist/multichip.hpp"
#include "netlist/parser.hpp"
#include "netlist/shape.hpp"
#include "netlist/target.hpp"
#include "netlist/test_driver.hpp"
#include "netlist/validator.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"
#include "support/parallel.hpp"
#include "support/yaml_tree.hpp"

#include <cctype>
#include <chrono>
#include <ctime>
#include <iostream>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

namespace tessera::loader {

using formats::Tensor;

namespace {

constexpr const char* kTool = "loader";
// At most this much packed stimulus is kept from the reference run for the
// chip run (about 500 M values of Bfp8_b; beyond it the chip run generates).
constexpr size_t kSharedStimulusBytes = size_t{512} << 20;

using sim::WireReader;
using sim::WireWriter;

// An exit code every MPI rank agrees on: rank 0's.
struct WireRc {
  int rc;
  int agree(sim::ClusterTransport& net) const {
    WireWriter w;
    w.u32(static_cast<uint32_t>(rc));
    const std::vector<std::vector<uint8_t>> all = net.allGather(w.bytes);
    WireReader r(all.front());
    return static_cast<int>(r.u32());
  }
};



// A value for a param the user did not give: test-args names the usual ones
// ($p_microbatch_count <- microbatch_count, $p_loop_count <- program_loop_count).
std::optional<int64_t> testArgDefault(const netlist::Netlist& nl, const std::string& param) {
  if (!nl.testConfig) return std::nullopt;
  for (const auto& e : nl.testConfig->extra) {
    if (e.key != "test-args" || !e.value.is_object()) continue;
    std::string bare = param.substr(param.starts_with("$p_") ? 3 : 1);
    for (const std::string& key : {bare, "program_" + bare})
      if (auto it = e.value.find(key); it != e.value.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return std::nullopt;
}



} // namespace

namespace {

// The reference run and the target run share everything but the target.
struct RunSetup {
  const netlist::Netlist* nl;
  std::vector<const netlist::Program*> programs;
  std::map<std::string, int64_t> given;
  std::map<std::string, int64_t> driverGiven; // the test driver's params (after --param, before test-args)
  std::vector<std::string> preloaded;          // host-fed rams the driver writes before the run
  uint64_t seed;
  bool trace;
  Arch arch; // decides the temporal epochs
  GeneratedEntries* generated = nullptr; // stimulus entries shared between the runs
};

// One run of the programs: its queues and what the host pushed.
struct Execution {
  std::unique_ptr<runtime::QueueStore> store;
  std::unique_ptr<HostIo> host;
  int64_t executes = 0;
};

// Runs every program on `target`. `announce`: print a line per program. A
// run-time error becomes a diagnostic (returns false).
// `recording`: log what ops write; `recordPushes`: log what the host pushes.
bool runPrograms(const RunSetup& s, runtime::Target& target, std::map<std::string, Tensor> inputs, bool recording,
                 bool recordPushes, bool announce, Execution& ex, DiagnosticEngine& diags, std::ostream& out,
                 std::ostream& err) {
  const netlist::Netlist& nl = *s.nl;
  ex.store = std::make_unique<runtime::QueueStore>(nl);
  ex.store->recordWrites(recording);
  ex.host = std::make_unique<HostIo>(nl, std::move(inputs), s.seed, recordPushes);
  ex.host->share(s.generated);
  ex.host->attach(*ex.store);
  for (const auto& name : s.preloaded)
    for (const auto& q : nl.queues)
      if (q.name == name) ex.host->preload(q, *ex.store);
  runtime::Interpreter interp(nl, *ex.store, target, *ex.host, s.arch);
  if (s.trace) interp.trace = [&](const std::string& line) { out << "  " << line << "\n"; };
  std::string running;
  try {
    for (const auto* p : s.programs) {
      std::map<std::string, int64_t> params;
      for (const auto* v : declaredParams(*p)) {
        if (auto g = s.given.find(v->name); g != s.given.end()) params[v->name] = g->second;
        else if (auto dg = s.driverGiven.find(v->name); dg != s.driverGiven.end()) params[v->name] = dg->second;
        else if (auto d = testArgDefault(nl, v->name)) params[v->name] = *d;
        else {
          params[v->name] = 1;
          if (announce)
            err << kTool << ": note: param " << v->name << " of program '" << p->name
                << "' not given (--param) nor in test-args; using 1\n";
        }
      }
      int64_t before = interp.executeCount();
      running = p->name;
      if (s.trace) out << "program " << p->name << "\n";
      interp.run(*p, params);
      if (announce) out << "program " << p->name << ": " << interp.executeCount() - before << " executes\n";
    }
  } catch (const runtime::RuntimeError& e) {
    out << "program " << running << ": failed" << (announce ? "" : " on the reference model") << "\n";
    diags.error(e.rule, e.loc, e.what());
    return false;
  } catch (const std::invalid_argument& e) { // stimulus config the host cannot generate
    out << "program " << running << ": failed\n";
    diags.error("stimulus", nl.testConfig ? nl.testConfig->loc : SourceLoc{}, e.what());
    return false;
  }
  ex.executes = interp.executeCount();
  return true;
}

// Runs another target, timing its executes (--profile: simulated cycles
// per second) and reporting progress after each: on a terminal a line
// rewritten in place once the run has lasted a second (long runs only), with
// --progress one line per execute (logs, tests); otherwise silent.
class TimedTarget : public runtime::Target {
public:
  enum class Progress { None, InPlace, Lines };
  TimedTarget(runtime::Target& inner, const SimTarget* sim, Progress progress, std::ostream& err)
      : inner_(inner), sim_(sim), progress_(progress), err_(err), start_(std::chrono::steady_clock::now()) {}
  ~TimedTarget() override { finish(); }
  std::string name() const override { return inner_.name(); }
  void execute(runtime::EpochIo& io) override { launch(runtime::Launch{0, {&io}}); }
  void launch(const runtime::Launch& l) override {
    auto begin = std::chrono::steady_clock::now();
    const double cpuBegin = processCpuSeconds();
    inner_.launch(l);
    auto end = std::chrono::steady_clock::now();
    seconds_ += std::chrono::duration<double>(end - begin).count();
    cpuSeconds_ += processCpuSeconds() - cpuBegin;
    executes_ += static_cast<int64_t>(l.graphs.size());
    if (progress_ == Progress::None || (progress_ == Progress::InPlace && end - start_ < std::chrono::seconds(1)))
      return;
    std::string line = "loader: " + std::to_string(executes_) + (executes_ == 1 ? " execute" : " executes");
    if (sim_)
      line += ", " + std::to_string(sim_->epochsRun()) + (sim_->epochsRun() == 1 ? " epoch" : " epochs") +
              " on the chip, " + std::to_string(sim_->totalCycles()) + " cycles, " + std::to_string(sim_->tilesMoved()) +
              " tiles moved";
    const bool lines = progress_ == Progress::Lines;
    err_ << (lines ? "" : "\r\033[K") << line << (lines ? "\n" : "") << std::flush;
    shown_ = true;
  }
  // Clears an in-place progress line (the terminal is left as it was).
  void finish() {
    if (shown_ && progress_ == Progress::InPlace) err_ << "\r\033[K" << std::flush;
    shown_ = false;
  }
  double seconds() const { return seconds_; } // wall time inside the target's executes
  // CPU time of the process (all its threads) inside the executes: on a
  // shared machine the figure that says how fast the simulator is.
  double cpuSeconds() const { return cpuSeconds_; }

private:
  runtime::Target& inner_;
  const SimTarget* sim_;
  Progress progress_;
  std::ostream& err_;
  std::chrono::steady_clock::time_point start_;
  int64_t executes_ = 0;
  double seconds_ = 0;
  double cpuSeconds_ = 0;
  bool shown_ = false;

  static double processCpuSeconds() {
    timespec t{};
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return 0.0;
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  }
};

// The build directory `loader run` uses when none is given.
std::string defaultBuildDir(const std::string& netlist) {
  return (std::filesystem::path("tessera-build") / std::filesystem::path(netlist).stem()).string();
}

// Where `loader run` keeps a copy of the netlist in a build directory (its own
// subdirectory: a netlist may be named like an artifact, e.g. epochs.yaml).
std::filesystem::path netlistCopyDir(const std::string& buildDir) { return std::filesystem::path(buildDir) / "netlist"; }

// Beside the copy, `run` records the test driver it applied, so `deploy`
// feeds and judges the copy as `run` did (its path no longer says).
std::filesystem::path recordedDriverFile(const std::string& buildDir) { return netlistCopyDir(buildDir) / "test-defaults"; }

// `loader deploy DIR`: the netlist the artifacts were built from, as `run` copied it there.
Expected<std::string> deployedNetlist(const std::string& dir) {
  std::string epochs = (std::filesystem::path(dir) / "epochs.yaml").string();
  auto index = yaml::Document::readMapFile(epochs);
  if (!index) return Failure{index.error() + " (build it with: loader run <netlist> --build-dir " + dir + ")"};
  const std::string name = (*index)->root()["netlist"].Scalar();
  if (name.empty()) return Failure{"'" + epochs + "' names no netlist"};
  std::string path = (netlistCopyDir(dir) / name).string();
  if (std::filesystem::exists(path)) return path;
  return Failure{"'" + dir + "' has no copy of its netlist '" + name +
                 "' (loader run writes one; copy the netlist there)"};
}

} // namespace

namespace {

// runLoader in one process, or as one rank of `net` (--mpi): the ranks run
// the same steps on the same inputs, so they take the same branches; only
// rank 0 builds, prints (`out` and `err` of the others are null streams),
// writes files and runs the reference model.
int runLoaderOn(const LoaderOptions& optsIn, std::ostream& out, std::ostream& err, sim::ClusterTransport* net) {
  LoaderOptions opts = optsIn;
  const bool root = !net || net->rank() == 0;
  // Rank 0's answer on every rank (collective).
  auto agree = [&](int rc) {
    if (!net) return rc;
    WireRc w{rc};
    return w.agree(*net);
  };
  PrintOptions print{opts.maxErrors, false, false};
  const bool runCommand = opts.command == "run", deployCommand = opts.command == "deploy";
  if (opts.target != "golden" && opts.target != "sim") {
    toolError(err, kTool) << "unknown target '" << opts.target << "' (available: golden, sim)\n";
    return 2;
  }
  if (!opts.defaults.empty() && !netlist::findTestDriver(opts.defaults)) {
    std::string list;
    for (const auto& d : netlist::testDrivers()) list += (list.empty() ? "" : ", ") + d.name;
    toolError(err, kTool) << "--defaults '" << opts.defaults << "': unknown test driver (available: " << list << ")\n";
    return 2;
  }
  if (deployCommand) {
    Expected<std::string> netlist = deployedNetlist(opts.buildDir);
    if (!netlist) {
      toolError(err, kTool) << "deploy: " << netlist.error() << "\n";
      return 2;
    }
    opts.netlist = *netlist;
  }
  if (runCommand && opts.target == "sim" && opts.buildDir.empty()) opts.buildDir = defaultBuildDir(opts.netlist);
  std::optional<sim::InjectSpec> injectSpec;
  if (int rc = checkOptionCombinations(opts, net != nullptr, injectSpec, err)) return rc;
  std::optional<SimArtifacts> artifacts;
  auto loadArtifacts = [&]() -> bool {
    Expected<SimArtifacts> loaded = loadSimArtifacts(opts.buildDir);
    if (!loaded) {
      toolError(err, kTool) << "--build-dir: " << loaded.error() << "\n";
      return false;
    }
    artifacts = std::move(*loaded);
    return true;
  };
  if (opts.target == "sim" && !runCommand && !loadArtifacts()) return 2;
  std::optional<Arch> requested;
  if (!parseArchOption(opts.arch, kTool, err, requested)) return 2;

  auto text = readFile(opts.netlist);
  if (!text) {
    toolError(err, opts.netlist) << "cannot read netlist: " << text.error() << "\n";
    return 1;
  }
  SourceBuffer source(opts.netlist, std::move(*text));
  DiagnosticEngine diags;
  std::optional<netlist::Netlist> parsed = netlist::parseNetlist(source, diags);
  if (!parsed) {
    printDiagnostics(err, source, diags, print);
    return 1;
  }
  // Test-config sections the netlist leaves out: the defaults of its test driver.
  const netlist::TestDriver* driver = opts.defaults.empty() ? nullptr : netlist::findTestDriver(opts.defaults);
  if (!driver && deployCommand) {
    if (auto name = readFile(recordedDriverFile(opts.buildDir).string())) {
      while (!name->empty() && std::isspace(static_cast<unsigned char>(name->back()))) name->pop_back();
      driver = netlist::findTestDriver(*name);
    }
  }
  if (!driver) driver = &netlist::testDriverForPath(opts.netlist);
  const netlist::AppliedDefaults applied = netlist::applyTestDriver(*parsed, *driver);
  const netlist::Netlist& nl = *parsed;
  Arch arch = requested ? *requested : (nl.devices.arch.empty() ? Arch::Grayskull : nl.devices.arch.front().value);
  SocDescriptor device = loadBundledDescriptor(defaultDescriptorName(arch));
  // The chips the netlist's target_devices name: --cluster, else the arch's default.
  DeviceCache clusters;
  if (!opts.cluster.empty())
    if (int rc = clusters.loadCluster(opts.cluster, kTool, err, print)) return rc;
  const ClusterDescriptor* cluster = clusters.clusterFor(arch, device, netlist::chipsNamed(nl));
  if (!cluster) return 1; // an invalid --cluster file: its errors are printed
  std::string archFlag = opts.arch; // what the stage tools are told
  if (diags.errorCount() == 0) {
    const DiagnosticEngine parsed = diags;
    netlist::validateNetlist(nl, netlist::ValidationTarget{arch, &device, cluster}, diags);
    // Without --arch, a netlist its first arch rejects runs on the first
    // arch it lists that accepts it (netlist::firstAcceptingArch), with a note.
    if (!requested && diags.errorCount() > 0)
      if (auto other = netlist::firstAcceptingArch(nl, arch, clusters, parsed)) {
        out << kTool << ": note: " << netlist::archFallbackNote(arch, diags, other->target.arch, "running on")
            << " (--arch picks one)\n";
        arch = other->target.arch;
        device = *other->target.device;
        cluster = other->target.cluster;
        diags = std::move(other->diags);
        archFlag = std::string(archName(arch));
      }
  }
  if (printDiagnostics(err, source, diags, print) > 0) return 1;
  // Buffers that share DRAM behave on the chip as on silicon (the tile written
  // last wins, a shared header moves for both) while the reference keeps them
  // apart: a failed chip run of such a file says so (docs/loader.md).
  std::string overlapNote;
  {
    size_t overlaps = 0;
    std::string each;
    for (const auto& d : diags.diagnostics())
      if (d.rule == "dram-overlap") ++overlaps, each += "  " + d.message + "\n";
    if (overlaps)
      overlapNote = std::string(kTool) + ": note: this netlist's DRAM buffers overlap (" + std::to_string(overlaps) +
                    " dram-overlap warning" + (overlaps == 1 ? "" : "s") +
                    "): on the chip they share memory, as on silicon, while the reference model keeps every buffer "
                    "apart, so this failure may be the file's own\n" + each;
  }

  if (applied.any()) {
    std::string what;
    auto add = [&](const std::string& part) { what += (what.empty() ? "" : ", ") + part; };
    if (applied.stimulus) add("stimulus-config");
    if (applied.comparison) add("comparison-config");
    if (!applied.zeroed.empty()) {
      std::string names;
      for (const auto& q : applied.zeroed) names += (names.empty() ? "'" : ", '") + q + "'";
      add("0 in every slot of " + names);
    }
    out << kTool << ": test-config defaults of " << driver->name << " (" << driver->source << "): " << what << "\n";
  }


  // Programs and params: usage errors, reported before anything is built or run.
  std::optional<ProgramChoice> choice = choosePrograms(nl, opts, *driver, out, err);
  if (!choice) return 2;

  // `loader run` on the chip: bring the build directory up to date, keeping a
  // copy of the netlist there so `loader deploy DIR` can run it later.
  if (net && cluster->chipCount() < 2) {
    toolError(err, kTool) << "--mpi spreads the chips of a cluster over MPI ranks, but " << opts.netlist
        << " runs on one chip (run it without --mpi)\n";
    return 2;
  }
  // With --mpi rank 0 builds while the others wait, then all load the result.
  if (runCommand && opts.target == "sim") {
    auto build = [&]() -> int {
      std::filesystem::create_directories(netlistCopyDir(opts.buildDir));
      std::string copy = (netlistCopyDir(opts.buildDir) / std::filesystem::path(opts.netlist).filename()).string();
      if (auto written = writeIfChanged(copy, std::string(source.text())); !written) {
        toolError(err, kTool) << "cannot write '" << copy << "': " << written.error() << "\n";
        return 2;
      }
      const std::string record = recordedDriverFile(opts.buildDir).string();
      if (auto written = writeIfChanged(record, driver->name + "\n"); !written) {
        toolError(err, kTool) << "cannot write '" << record << "': " << written.error() << "\n";
        return 2;
      }
      out << kTool << ": building " << opts.buildDir << "\n";
      BuildOptions build{opts.netlist, opts.buildDir, archFlag, opts.toolsDir, opts.threads, opts.verbose,
                         opts.pipegenArgs, opts.hlkcCacheDir, opts.cluster, opts.pipesFrom, {}};
      const netlist::ValidationTarget target{arch, &device, cluster};
      build.importPipes = [&](const std::string& dir, const std::vector<ForeignEpoch>& epochs) {
        return importForeignPipes(nl, target, dir, epochs);
      };
      return buildArtifacts(build, out, err);
    };
    if (int rc = agree(root ? build() : 0); rc != 0) return rc;
    if (!loadArtifacts()) return 2;
  }
  if (artifacts && artifacts->netlist != std::filesystem::path(opts.netlist).filename().string()) {
    toolError(err, kTool) << "--build-dir '" << opts.buildDir << "' holds the artifacts of '" << artifacts->netlist
        << "', not of '" << std::filesystem::path(opts.netlist).filename().string()
        << "' (loader run " << opts.netlist << " --build-dir <dir>)\n";
    return 2;
  }
  if (artifacts && !artifacts->arch.empty() && artifacts->arch != archName(arch)) {
    toolError(err, kTool) << "--build-dir '" << opts.buildDir << "' was built for " << artifacts->arch << ", not "
        << archName(arch) << " (loader run --arch " << archName(arch) << ")\n";
    return 2;
  }

  // Inputs from .npy files: every host-fed queue an op reads needs one.
  std::map<std::string, Tensor> inputs;
  if (!opts.inputsDir.empty() && !readNpyInputs(nl, opts.inputsDir, diags, inputs)) {
    printDiagnostics(err, source, diags, print);
    return 1;
  }

  // The reference: `run`/`deploy` on the chip check every op-fed queue
  // against the host reference model, unless --expected gives the values.
  const bool checkAgainstGolden = !opts.command.empty() && opts.target == "sim" && opts.expectedDir.empty();
  // The driver's zeroed rams the host feeds: written before the run, as the
  // driver does, so a view written by an earlier program keeps what it wrote.
  std::vector<std::string> preloaded;
  for (const auto& name : applied.zeroed)
    for (const auto& q : nl.queues)
      if (q.name == name && isHostSide(q) && q.type.value == netlist::IoType::Ram) preloaded.push_back(name);
  RunSetup setup{&nl, choice->programs, choice->given, choice->driverGiven, preloaded, opts.seed, opts.trace, arch};
  // The chip run takes the stimulus entries the reference run generated
  // (the same seed: the same bits) instead of generating them again.
  GeneratedEntries generated(kSharedStimulusBytes);
  // Only the reference's log is kept: its queues and host go before the
  // chip runs (a large netlist's queues are gigabytes).
  std::map<std::string, std::vector<formats::PackedTensor>> referenceLog;
  bool referenceFailed = false;
  if (checkAgainstGolden && root) {
    GoldenTarget golden(nl, arch, opts.threads);
    Execution reference;
    golden.setPartialsInPlace(hlk::gradientPartialsInPlace(nl, netlist::ValidationTarget{arch, &device, cluster}));
    setup.generated = &generated;
    if (runPrograms(setup, golden, inputs, true, false, false, reference, diags, out, err)) {
      out << kTool << ": reference model (golden): " << reference.executes << " executes\n";
      referenceLog = reference.store->releaseWriteLog();
    } else {
      printDiagnostics(err, source, diags, print);
      referenceFailed = true;
    }
  }
  generated.filling = false;
  // --mpi: the other ranks stop too when rank 0's reference run failed.
  if (agree(referenceFailed ? 1 : 0) != 0) return 1;

  // Entries are kept for --outputs/--expected and the reference check only:
  // a large training netlist writes gigabytes over a run.
  const bool recording = !opts.outputsDir.empty() || !opts.expectedDir.empty() || checkAgainstGolden;
  std::unique_ptr<GoldenTarget> golden;
  std::unique_ptr<sim::FaultInjector> injector;  // before simTarget, which holds it
  std::unique_ptr<SimTarget> simTarget;
  runtime::Target* targetPtr = nullptr;
  PerfReport perf;
  PerfChecker perfCheck(nl, arch);
  const bool tracing = !opts.traceFile.empty() || !opts.reportFile.empty();
  const bool checking = opts.perfCheck || !opts.reportFile.empty();  // the report shows the perf-check table
  TraceLog traceLog(arch, device);
  if (artifacts) {
    // A cluster of several chips runs on sim::Cluster (-j threads); one chip as before.
    simTarget = std::make_unique<SimTarget>(nl, device, std::move(*artifacts), *cluster,
                                            opts.threads ? opts.threads : defaultJobs());
    simTarget->setTransport(net);
    if (opts.trace) simTarget->trace = [&](const std::string& line) { out << "    " << line << "\n"; };
    simTarget->recordTimeline = checking;
    simTarget->recordTrace = tracing;
    simTarget->chipThreads = opts.threads ? opts.threads : 1;  // only an explicit -j (docs/loader.md)
    simTarget->allowDualViewRace = opts.allowDualViewRace;
    simTarget->warn = [&](const std::string& what) { toolWarning(err, kTool) << what << "\n"; };
    if (injectSpec) {
      if (simTarget->multiChip()) {
        toolError(err, kTool) << "--inject: one chip only (this netlist runs on a cluster)\n";
        return 2;
      }
      injector = std::make_unique<sim::FaultInjector>(*injectSpec);
      simTarget->inject = injector.get();
    }
    if (!opts.perfReport.empty() || opts.profile || checking || tracing) {
      simTarget->onEpoch = [&](const SimEpochInfo& e, const sim::ChipRunResult& r) {
        if (!opts.perfReport.empty() || opts.profile || tracing)
          perf.add(e.id, e.graph, r, static_cast<int>(device.workers.size()));
        if (checking) perfCheck.add(e.id, e.graph, r);
        if (tracing) traceLog.add(e.id, e.graph, r);
      };
      simTarget->onClusterEpoch = [&](const SimEpochInfo& e, const sim::ClusterRunResult& r) {
        perf.addCluster(e.id, e.graph, r, static_cast<int>(device.workers.size()));
        if (tracing) traceLog.addCluster(e.id, e.graph, r);
      };
    }
    targetPtr = simTarget.get();
  } else {
    golden = std::make_unique<GoldenTarget>(nl, arch, opts.threads);
    golden->setPartialsInPlace(hlk::gradientPartialsInPlace(nl, netlist::ValidationTarget{arch, &device, cluster}));
    targetPtr = golden.get();
  }
  out << kTool << ": " << opts.netlist << " on target " << targetPtr->name() << " (" << archName(arch) << ")\n";
  Execution ex;
  const bool terminal = &err == &std::cerr && ::isatty(2);
  TimedTarget timed(*targetPtr, simTarget.get(),
                    opts.progress ? TimedTarget::Progress::Lines
                                  : (terminal ? TimedTarget::Progress::InPlace : TimedTarget::Progress::None),
                    err);
  // Pushes are logged for --outputs only (the check compares op-fed queues).
  bool ran = runPrograms(setup, timed, std::move(inputs), recording, !opts.outputsDir.empty(), true, ex, diags, out,
                         err);
  timed.finish();
  if (injector)
    err << kTool << ": injected fault " << injector->text() << ": "
        << (injector->landed().empty() ? std::string("did not land (too few events of its kind)")
                                       : "landed: " + injector->landed())
        << "\n";
  if (!ran) {
    printDiagnostics(err, source, diags, print);
    if (simTarget) err << overlapNote;
    return 1;
  }
  if (!root) return 0;  // rank 0 writes, checks and answers for every rank

  // Outputs: every entry ops wrote into each op-fed queue, in write order; and
  // what the host pushed into each host-fed one, so a run can be reproduced.
  OutputCheckRequest request{recording, checkAgainstGolden ? &referenceLog : nullptr, opts.outputsDir,
                             opts.expectedDir};
  std::optional<bool> checkFailed =
      checkOutputs(nl, *ex.store, *ex.host, request, diags, [&] { printDiagnostics(err, source, diags, print); }, out,
                   err);
  if (!checkFailed) return 1;
  bool failed = *checkFailed;
  if (simTarget && (!opts.perfReport.empty() || opts.profile)) out << perf.table();
  if (!opts.perfReport.empty()) {
    perf.setBinaries(simTarget->binariesCounters());
    const std::string report = perf.json(opts.netlist, std::string(archName(arch))).dump(2) + "\n";
    if (auto written = writeFileAtomic(opts.perfReport, report); !written) {
      toolError(err, kTool) << "cannot write '" << opts.perfReport << "': " << written.error() << "\n";
      return 1;
    }
    out << "perf report -> " << opts.perfReport << "\n";
  }
  if (simTarget && opts.perfCheck) {
    bool perfPassed = true;
    out << perfCheck.report(perfPassed);
    failed |= !perfPassed;
  }
  if (simTarget && !opts.traceFile.empty()) {
    if (auto written = writeFileAtomic(opts.traceFile, traceLog.traceJson(opts.netlist)); !written) {
      toolError(err, kTool) << "cannot write '" << opts.traceFile << "': " << written.error() << "\n";
      return 1;
    }
    out << "trace -> " << opts.traceFile << "\n";
  }
  if (simTarget && !opts.reportFile.empty()) {
    bool perfPassed = true;
    const std::string checks = nl.perfCheck ? perfCheck.report(perfPassed) : std::string();
    if (auto written = writeFileAtomic(opts.reportFile, traceLog.reportHtml(opts.netlist, perf, checks)); !written) {
      toolError(err, kTool) << "cannot write '" << opts.reportFile << "': " << written.error() << "\n";
      return 1;
    }
    out << "report -> " << opts.reportFile << "\n";
  }
  if (opts.profile && simTarget) {
    char rate[192];
    const double cycles = static_cast<double>(simTarget->totalCycles());
    std::snprintf(rate, sizeof rate, " in %.3f s on the simulator (%.3g cycles/s), %.3f s CPU (%.3g cycles per CPU second)",
                  timed.seconds(), timed.seconds() > 0 ? cycles / timed.seconds() : 0.0, timed.cpuSeconds(),
                  timed.cpuSeconds() > 0 ? cycles / timed.cpuSeconds() : 0.0);
    out << "profile (sim): " << simTarget->epochsRun() << " epochs, " << simTarget->totalCycles() << " cycles" << rate
        << "\n";
    const sim::BinariesCounters b = simTarget->binariesCounters();
    out << "profile (sim): binaries cache: " << b.commands << " epoch commands, " << b.pushes << " images pushed ("
        << b.pushedBytes << " bytes), " << b.hits << " cache hits, " << b.evictions << " evictions\n";
    if (ex.host)
      out << "profile (sim): stimulus: " << ex.host->reused() << " entries from the reference run, "
          << ex.host->generated() << " generated\n";
  } else if (opts.profile) {
    out << "profile (golden, " << golden->threads() << (golden->threads() == 1 ? " thread" : " threads")
        << "; wall time per op type):\n";
    char line[160];
    for (const auto& [type, p] : golden->profile()) {
      std::snprintf(line, sizeof line, "  %-24s %8lld calls %10.3f s", type.c_str(), static_cast<long long>(p.calls), p.seconds);
      out << line;
      if (p.flops > 0) {
        std::snprintf(line, sizeof line, "  %.3f GFLOP, %.2f GFLOP/s", p.flops / 1e9, p.seconds > 0 ? p.flops / 1e9 / p.seconds : 0.0);
        out << line;
      }
      out << "\n";
    }
  }
  // Under --inject the question is whether the fault was seen: a run that
  // passes although one landed is reported, never a PASS (docs/loader.md).
  if (!failed && injector && !injector->landed().empty()) {
    toolError(err, kTool) << "injected fault " << injector->text()
        << " landed but every check passed: not detected (the changed value reached no output, or the "
           "comparison-config tolerated it)\n";
    out << "UNDETECTED\n";
    return 1;
  }
  if (failed && simTarget && checkAgainstGolden) err << overlapNote;
  out << (failed ? "FAIL" : "PASS") << "\n";
  return failed ? 1 : 0;
}

} // namespace

int runLoader(const LoaderOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.mpi) return runLoaderOn(options, out, err, nullptr);
  Expected<std::unique_ptr<sim::ClusterTransport>> mpi = sim::makeMpiTransport();
  if (!mpi) {
    toolError(err, kTool) << "--mpi: " << mpi.error() << "\n";
    return 2;
  }
  std::unique_ptr<sim::ClusterTransport> net = std::move(*mpi);
  std::ostream none(nullptr);  // ranks other than 0 print nothing
  const bool root = net->rank() == 0;
  const int rc = runLoaderOn(options, root ? out : none, root ? err : none, net.get());
  out.flush();
  err.flush();
  WireRc w{rc};
  return w.agree(*net);  // every rank exits with rank 0's code
}

} // namespace tessera::loader
