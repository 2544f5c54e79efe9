#include "loader/artifact_build.hpp"

#include "support/file_io.hpp"
#include "support/hashing.hpp"
#include "support/parallel.hpp"
#include "support/subprocess.hpp"
#include "support/yaml_tree.hpp"
#include "support/tool_output.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace tessera::loader {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStampDir = ".stamps";

std::string runningExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.string();
}

bool isExecutable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<std::string> searchPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && isExecutable(fs::path(dir) / name)) return (fs::path(dir) / name).string();
  return std::nullopt;
}

// One stage invocation. `stamp` empty: always runs (hlkc).
struct Job {
  std::string stage;                // "pipegen"
  std::string what;                 // "temporal epoch 3", for messages
  std::vector<std::string> argv;
  std::vector<std::string> inputs;  // files whose bytes decide staleness
  std::vector<std::string> outputs; // must exist for the job to be up to date
  std::string stamp;                // BUILD/.stamps/<name>
  // Which failure is reported does not depend on timing: the kernel chain's
  // (chain 0) before the pipe chain's (chain 1); within the pipe chain the
  // lowest rank (0 net2pipe, 1 + i the i-th epoch's pipegen and blobgen).
  int chain = 0;
  size_t rank = 0;
};

struct StageCount {
  int ran = 0, upToDate = 0;
  std::string summary; // the tool's own stdout summary (hlkc)
};

class Builder {
public:
  Builder(const BuildOptions& o, std::ostream& out, std::ostream& err) : opt_(o), out_(out), err_(err) {}

  int run();

private:
  std::string tool(const std::string& name) const { return findStageTool(name, opt_.toolsDir); }
  std::string path(const std::string& rel) const { return (fs::path(opt_.buildDir) / rel).string(); }
  std::vector<std::string> archFlag() const {
    return opt_.arch.empty() ? std::vector<std::string>{} : std::vector<std::string>{"--arch", opt_.arch};
  }
  Job stampedJob(std::string stage, std::string what, std::vector<std::string> argv, std::string input,
                 std::string output, const std::string& stampName) const {
    Job job{std::move(stage), std::move(what), std::move(argv), {std::move(input)}, {std::move(output)},
            path(std::string(kStampDir) + "/" + stampName)};
    if (!opt_.clusterFile.empty() && job.stage != "net2hlks") job.inputs.push_back(opt_.clusterFile);
    return job;
  }
  // --cluster FILE, for the stages that read the cluster (docs/cluster.md).
  void addCluster(std::vector<std::string>& argv) const {
    if (!opt_.clusterFile.empty()) argv.insert(argv.end(), {"--cluster", opt_.clusterFile});
  }

  // Runs `job` unless its stamp says it is up to date. False: it failed
  // (reported) or the build was stopped by an earlier failure.
  bool runJob(const Job& job);
  std::optional<std::string> stampKey(const Job& job, std::string& error) const;
  void fail(const Job& job, int code, const std::string& message);
  // Whether `job` need not run: an earlier failure decides the report already.
  bool superseded(const Job& job) const;
  void count(const std::string& stage, bool ran, const std::string& summary = {});

  // Runs net2hlks or net2pipe (netlist in, build dir out), then reads the
  // index file it wrote. nullptr: failed (reported).
  std::unique_ptr<yaml::Document> netlistStage(const std::string& stage, const std::string& index);
  bool kernelChain();
  bool pipeChain();
  bool epochJobs(const std::string& arch, const std::vector<std::pair<uint32_t, std::string>>& epochs);

  const BuildOptions& opt_;
  std::ostream& out_;
  std::ostream& err_;
  unsigned jobs_ = 1;
  struct Failure {
    bool set = false;
    size_t rank = 0;
    int code = 0;
    std::string message;
  };
  mutable std::mutex mu_; // guards err_, counts_, failures_
  std::map<std::string, StageCount> counts_;
  Failure failures_[2]; // per chain
};

std::optional<std::string> Builder::stampKey(const Job& job, std::string& error) const {
  support::Sha256 h;
  h.field("tessera-stage-stamp-1");
  for (const std::string& a : job.argv) h.field(a);
  std::error_code sizeError, timeError;
  auto size = fs::file_size(job.argv[0], sizeError);
  auto mtime = fs::last_write_time(job.argv[0], timeError);
  h.field(sizeError || timeError ? "?" : std::to_string(size) + "@" + std::to_string(mtime.time_since_epoch().count()));
  for (const std::string& in : job.inputs) {
    auto bytes = readFile(in);
    if (!bytes) {
      error = "cannot read '" + in + "': " + bytes.error();
      return std::nullopt;
    }
    h.field(in);
    h.field(*bytes);
  }
  return h.hexDigest();
}

void Builder::fail(const Job& job, int code, const std::string& message) {
  std::lock_guard lock(mu_);
  Failure& f = failures_[job.chain];
  if (f.set && f.rank <= job.rank) return;
  f = Failure{true, job.rank, code, message};
}

bool Builder::superseded(const Job& job) const {
  std::lock_guard lock(mu_);
  if (failures_[0].set) return true; // a kernel-chain failure is reported whatever the pipes do
  const Failure& own = failures_[job.chain];
  return own.set && own.rank <= job.rank;
}

void Builder::count(const std::string& stage, bool ran, const std::string& summary) {
  std::lock_guard lock(mu_);
  StageCount& c = counts_[stage];
  (ran ? c.ran : c.upToDate)++;
  if (!summary.empty()) c.summary = summary;
}

bool Builder::runJob(const Job& job) {
  if (superseded(job)) return false;
  std::string key, error;
  if (!job.stamp.empty()) {
    auto k = stampKey(job, error);
    if (!k) {
      fail(job, 1, "loader: error: " + job.stage + " (" + job.what + "): " + error + "\n");
      return false;
    }
    key = *k;
    bool outputsThere = std::all_of(job.outputs.begin(), job.outputs.end(), [](const std::string& p) {
      std::error_code ec;
      return fs::exists(p, ec);
    });
    if (auto stamp = readFile(job.stamp); outputsThere && stamp && *stamp == key + "\n") {
      count(job.stage, false);
      return true;
    }
    std::error_code ec;
    fs::remove(job.stamp, ec); // a stopped run must not leave a stamp that vouches for half-written outputs
  }
  if (opt_.verbose) {
    std::lock_guard lock(mu_);
    err_ << shellQuote(job.argv) << "\n";
  }
  ProcessResult r = runProcess(job.argv);
  if (!r.started) {
    fail(job, 2, "loader: error: " + job.stage + ": " + r.error + " (build the tools, or give --tools-dir)\n");
    return false;
  }
  if (!r.ok()) {
    std::string msg = "loader: error: stage " + job.stage + " failed on " + job.what + " (" + r.describe() +
                      "): " + shellQuote(job.argv) + "\n" + r.err;
    if (!r.err.empty() && r.err.back() != '\n') msg += "\n";
    // A tool's usage error is ours (we built its command line); its input errors are the netlist's.
    fail(job, r.exitCode == 2 ? 2 : 1, msg);
    return false;
  }
  if (!r.err.empty()) { // warnings: the user sees them once, when the stage runs
    std::lock_guard lock(mu_);
    err_ << r.err;
  }
  if (auto written = job.stamp.empty() ? Expected<void>() : writeFileAtomic(job.stamp, key + "\n"); !written) {
    fail(job, 2, "loader: error: cannot write '" + job.stamp + "': " + written.error() + "\n");
    return false;
  }
  std::string summary = r.out.substr(0, r.out.find('\n'));
  count(job.stage, true, summary);
  return true;
}

std::unique_ptr<yaml::Document> Builder::netlistStage(const std::string& stage, const std::string& index) {
  std::vector<std::string> argv{tool(stage)};
  for (auto& a : archFlag()) argv.push_back(a);
  if (stage == "net2pipe") addCluster(argv);
  argv.insert(argv.end(), {opt_.netlist, "-o", opt_.buildDir});
  Job job = stampedJob(stage, opt_.netlist, argv, opt_.netlist, path(index), stage);
  job.chain = stage == "net2pipe" ? 1 : 0;
  if (!runJob(job)) return nullptr;
  auto doc = yaml::Document::readMapFile(path(index));
  if (!doc) {
    fail(job, 1, "loader: error: " + stage + ": " + doc.error() + "\n");
    return nullptr;
  }
  return std::move(*doc);
}

bool Builder::kernelChain() {
  auto manifest = netlistStage("net2hlks", "manifest.yaml");
  if (!manifest) return false;
  std::vector<std::string> dirs;
  yaml::Node ops = manifest->root()["ops"];
  for (size_t i = 0; ops.IsSequence() && i < ops.size(); ++i) dirs.push_back(path(ops[i]["kernel"].Scalar()));
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  if (dirs.empty()) return true;
  Job hlkc{"hlkc", std::to_string(dirs.size()) + " kernels", {tool("hlkc")}, {}, {}, {}};
  hlkc.argv.insert(hlkc.argv.end(), {"--arch", manifest->root()["arch"].Scalar(), "-j", std::to_string(jobs_)});
  if (!opt_.hlkcCacheDir.empty()) hlkc.argv.insert(hlkc.argv.end(), {"--cache-dir", opt_.hlkcCacheDir});
  hlkc.argv.insert(hlkc.argv.end(), dirs.begin(), dirs.end());
  return runJob(hlkc);
}

bool Builder::epochJobs(const std::string& arch, const std::vector<std::pair<uint32_t, std::string>>& epochs) {
  // One epoch's pipegen then blobgen per call; after a failure the later
  // epochs are skipped (the earlier ones run on: the lowest failing epoch
  // is the one reported, whatever the timing).
  parallelFor(epochs.size(), jobs_, [&](size_t i) {
    const auto& [id, pipegenYaml] = epochs[i];
    const std::string what = "temporal epoch " + std::to_string(id);
    const std::string overlay = fs::path(pipegenYaml).parent_path().string();
    const std::string blobYaml = (fs::path(overlay) / "blob.yaml").string();
    const std::string blobs = path("temporal_epoch_" + std::to_string(id) + "/blobs");
    std::vector<std::string> pg{tool("pipegen"), "--arch", arch};
    addCluster(pg);
    pg.insert(pg.end(), opt_.pipegenArgs.begin(), opt_.pipegenArgs.end());
    pg.insert(pg.end(), {pipegenYaml, "-o", blobYaml});
    Job pipegen = stampedJob("pipegen", what, pg, pipegenYaml, blobYaml, "pipegen." + std::to_string(id));
    pipegen.chain = 1;
    pipegen.rank = 1 + i;
    if (!runJob(pipegen)) return;
    std::vector<std::string> bg{tool("blobgen"), "--arch", arch};
    addCluster(bg);
    bg.insert(bg.end(), {blobYaml, "-o", blobs});
    Job blobgen = stampedJob("blobgen", what, bg, blobYaml, blobs, "blobgen." + std::to_string(id));
    blobgen.chain = 1;
    blobgen.rank = 1 + i;
    runJob(blobgen);
  });
  std::lock_guard lock(mu_);
  return !failures_[1].set;
}

bool Builder::pipeChain() {
  auto index = netlistStage("net2pipe", "epochs.yaml");
  if (!index) return false;
  std::vector<std::pair<uint32_t, std::string>> epochs;
  std::vector<ForeignEpoch> foreign;
  yaml::Node list = index->root()["epochs"];
  for (size_t i = 0; list.IsSequence() && i < list.size(); ++i) {
    const auto id = static_cast<uint32_t>(std::stoul(list[i]["epoch"].Scalar()));
    if (opt_.pipesFrom.empty()) {
      epochs.emplace_back(id, path(list[i]["pipegen"].Scalar()));
      continue;
    }
    // Beside our net2pipe's own file, so a later run without --pipes-from
    // finds ours untouched (and the stamps, which hold the paths, rebuild).
    ForeignEpoch e{id, {}, path("temporal_epoch_" + std::to_string(id) + "/imported/pipegen.yaml")};
    for (size_t g = 0; list[i]["graphs"].IsSequence() && g < list[i]["graphs"].size(); ++g)
      e.graphs.push_back(list[i]["graphs"][g].Scalar());
    epochs.emplace_back(id, e.output);
    foreign.push_back(std::move(e));
  }
  if (!opt_.pipesFrom.empty()) {
    if (std::string error = opt_.importPipes(opt_.pipesFrom, foreign); !error.empty()) {
      Job import{"net2pipe", "--pipes-from", {}, {}, {}, {}};
      import.chain = 1;
      fail(import, 1, "loader: error: " + error + (error.back() == '\n' ? "" : "\n"));
      return false;
    }
  }
  return epochJobs(index->root()["arch"].Scalar(), epochs);
}

int Builder::run() {
  jobs_ = opt_.jobs ? opt_.jobs : defaultJobs();
  for (const char* name : {"net2hlks", "hlkc", "net2pipe", "pipegen", "blobgen"}) {
    std::string t = tool(name);
    if (!isExecutable(t)) {
      toolError(err_, "loader") << "stage tool '" << name << "' not found"
           << (opt_.toolsDir.empty() ? " beside the loader nor in PATH" : " in --tools-dir '" + opt_.toolsDir + "'")
           << " (build the tools with scripts/build.sh, or give --tools-dir)\n";
      return 2;
    }
  }
  std::error_code ec;
  fs::create_directories(path(kStampDir), ec);
  if (ec) {
    toolError(err_, "loader") << "cannot create build directory '" << opt_.buildDir << "': " << ec.message() << "\n";
    return 2;
  }
  // The two chains share nothing until the run: the kernels compile while
  // the pipes are planned.
  bool kernelsOk = true;
  std::thread kernels([&] { kernelsOk = kernelChain(); });
  bool pipesOk = pipeChain();
  kernels.join();
  for (const Failure& f : failures_)
    if (f.set) {
      err_ << f.message;
      return f.code;
    }
  if (!kernelsOk || !pipesOk) return 1;
  for (const char* stage : {"net2hlks", "hlkc", "net2pipe", "pipegen", "blobgen"}) {
    auto it = counts_.find(stage);
    if (it == counts_.end()) continue;
    const StageCount& c = it->second;
    out_ << "  " << stage << ":";
    for (int i = static_cast<int>(std::string_view(stage).size()); i < 9; ++i) out_ << ' ';
    if (c.ran) out_ << " ran " << c.ran;
    if (c.ran && c.upToDate) out_ << ",";
    if (c.upToDate) out_ << " up to date " << c.upToDate;
    if (!c.summary.empty() && std::string_view(stage) == "hlkc") out_ << " (" << c.summary << ")";
    out_ << "\n";
  }
  return 0;
}

} // namespace

std::string findStageTool(const std::string& name, const std::string& toolsDir) {
  std::vector<fs::path> candidates;
  if (!toolsDir.empty()) {
    candidates = {fs::path(toolsDir) / name, fs::path(toolsDir) / "tools" / name / name};
  } else if (std::string self = runningExecutable(); !self.empty()) {
    fs::path dir = fs::path(self).parent_path();
    candidates = {dir / name, dir.parent_path() / name / name};
  }
  for (const auto& c : candidates)
    if (isExecutable(c)) return c.lexically_normal().string();
  if (!toolsDir.empty()) return (fs::path(toolsDir) / name).string(); // reported as missing when run
  return searchPath(name).value_or(name);
}

int buildArtifacts(const BuildOptions& options, std::ostream& out, std::ostream& err) {
  return Builder(options, out, err).run();
}

} // namespace tessera::loader
