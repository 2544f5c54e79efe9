// hlkc driver: per kernel dir and thread, preprocess (cache key + deps),
// look the key up (this run, then the cache dir), else compile, link, check
// the ELF against the thread's regions, store it. Outputs are written once
// all three threads of a kernel succeeded, each by temp file + rename.
#include "hlkc/hlkc.hpp"

#include "device/device_contract.h"
#include "hlkc/depfile.hpp"
#include "hlkc/hlkc_config.hpp"
#include "support/hashing.hpp"
#include "support/parallel.hpp"
#include "support/subprocess.hpp"
#include "support/text_format.hpp"
#include "support/tool_output.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tessera::hlkc {
namespace ct = tessera::contract;
using support::Sha256;

namespace {

// Bump when anything that shapes an ELF changes without showing in the key
// (e.g. how hlkc post-processes outputs).
constexpr const char* kCacheFormat = "tessera-hlkc-cache-1";

const ArchInfo kArchs[] = {
    {"grayskull", "TESSERA_ARCH_GRAYSKULL", "grayskull",
     {ct::kTrisc0CodeBase, ct::kTrisc1CodeBase, ct::kTrisc2CodeBase},
     {ct::kTrisc0CodeSize, ct::kTrisc1CodeSize, ct::kTrisc2CodeSize},
     ct::kLocalMemBase, ct::kLocalMemSize},
    {"wormhole_b0", "TESSERA_ARCH_WORMHOLE_B0", "wormhole_b0",
     {ct::kTrisc0CodeBase, ct::kTrisc1CodeBase, ct::kTrisc2CodeBase},
     {ct::kTrisc0CodeSize, ct::kTrisc1CodeSize, ct::kTrisc2CodeSize},
     ct::kLocalMemBase, ct::kLocalMemSize},
    // Wormhole (A0) and Blackhole keep wormhole_b0's Tensix memory map in the
    // device contract (and its dest-as-input-B): the same linker scripts.
    {"wormhole", "TESSERA_ARCH_WORMHOLE", "wormhole_b0",
     {ct::kTrisc0CodeBase, ct::kTrisc1CodeBase, ct::kTrisc2CodeBase},
     {ct::kTrisc0CodeSize, ct::kTrisc1CodeSize, ct::kTrisc2CodeSize},
     ct::kLocalMemBase, ct::kLocalMemSize},
    {"blackhole", "TESSERA_ARCH_BLACKHOLE", "wormhole_b0",
     {ct::kTrisc0CodeBase, ct::kTrisc1CodeBase, ct::kTrisc2CodeBase},
     {ct::kTrisc0CodeSize, ct::kTrisc1CodeSize, ct::kTrisc2CodeSize},
     ct::kLocalMemBase, ct::kLocalMemSize},
};

constexpr const char* kThreadDefines[3] = {"-DTESSERA_THREAD_UNPACK=1", "-DTESSERA_THREAD_MATH=1",
                                           "-DTESSERA_THREAD_PACK=1"};

// Compile flags that shape the object (part of the cache key). Include
// directories are not: what they provide is in the preprocessed source.
const std::vector<std::string> kCompileFlags = {
    "--target=riscv32-unknown-elf", "-march=rv32im", "-mabi=ilp32",
    "-ffreestanding", "-fno-exceptions", "-fno-rtti", "-nostdlib", "-nostdlibinc",
    "-O2", "-std=c++17",
    "-mno-relax",               // ld.lld 14 cannot relax RISC-V (and rejects R_RISCV_ALIGN)
    "-ffunction-sections", "-fdata-sections",  // with --gc-sections: unused code is dropped
    "-fno-threadsafe-statics",  // no __cxa_guard_* in a single-threaded hart
};
const std::vector<std::string> kLinkFlags = {"--gc-sections", "-static", "--no-dynamic-linker"};

bool readWholeFile(const std::string& path, std::string& out, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      error = std::strerror(errno);
      ::close(fd);
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// Writes `data` to `path` through a unique temporary file in the same
// directory and a rename: readers see the old file or the whole new one,
// never a part, and concurrent writers of the same path cannot interleave.
bool writeFileAtomic(const std::string& path, std::string_view data, std::string& error) {
  std::string tmpl = path + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  const char* p = data.data();
  size_t left = data.size();
  bool ok = true;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (ok) ok = ::fchmod(fd, 0644) == 0;
  if (!ok) error = std::strerror(errno);
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = std::strerror(errno);
  }
  if (ok && ::rename(name.data(), path.c_str()) != 0) {
    ok = false;
    error = std::strerror(errno);
  }
  if (!ok) ::unlink(name.data());
  return ok;
}

bool isSoftwareHelper(const std::string& lldOutput) {
  // Calls the compiler emits for float arithmetic or 64-bit division, which
  // need a runtime library kernels do not have.
  static const char* kHelpers[] = {"__addsf3", "__subsf3", "__mulsf3", "__divsf3", "__adddf3", "__subdf3",
                                   "__muldf3", "__divdf3", "__fix",    "__float",  "__extendsfdf2",
                                   "__truncdfsf2", "__eqsf2", "__nesf2", "__ltsf2", "__lesf2", "__gtsf2",
                                   "__gesf2", "__unordsf2", "__eqdf2", "__ltdf2", "__gtdf2", "__udivdi3",
                                   "__divdi3", "__umoddi3", "__moddi3"};
  for (const char* h : kHelpers)
    if (lldOutput.find(std::string("undefined symbol: ") + h) != std::string::npos) return true;
  return false;
}

// SHA-256 of a file's contents, or "" when it cannot be read.
std::string hashFile(const std::string& path) {
  std::string data, error;
  if (!readWholeFile(path, data, error)) return {};
  return Sha256::hex(data);
}

int64_t nowNs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Modification time in ns since the epoch, or -1.
int64_t mtimeNs(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

struct Kernel {
  std::string dir;     // as given (for messages and output paths)
  std::string source;  // dir/hlks.cpp
  std::string outDir;
  std::string error;   // set: the dir is unusable
};

struct ThreadResult {
  bool ok = false;
  bool compiled = false;
  bool cacheHit = false;
  bool duplicate = false;
  std::string elf;
  std::vector<std::string> deps;
  std::string failure;     // first line after "hlkc: error: <dir>: "
  std::string toolOutput;  // clang/lld diagnostics printed after it
  std::string note;
  std::string warnings;    // clang's stderr of a successful compile
};

struct InFlight {
  bool done = false;
  bool ok = false;
  std::string elf;
};

class Driver {
public:
  Driver(const Options& o, std::ostream& out, std::ostream& err) : opt_(o), out_(out), err_(err) {}
  int run();

private:
  bool setUp();
  void runJob(size_t k, int t, ThreadResult& r);
  std::vector<std::string> compileArgs(const Kernel& kernel, int t) const;
  ProcessResult exec(const std::vector<std::string>& argv, const std::string& cwd = {});
  void log(const std::string& line);
  std::string cachePath(const std::string& key) const;
  bool loadCached(const std::string& path, int t, std::string& elf);
  void storeCached(const std::string& key, const std::string& elf);
  void publish(const std::shared_ptr<InFlight>& f, const ThreadResult& r);
  std::string manifestKey(const Kernel& kernel, int t) const;
  bool readManifest(const std::string& mkey, std::string& key, std::vector<std::string>& deps);
  void writeManifest(const std::string& mkey, const std::string& key, const std::vector<std::string>& deps,
                     int64_t startedNs);

  const Options& opt_;
  std::ostream& out_;
  std::ostream& err_;
  const ArchInfo* arch_ = nullptr;
  std::string clang_, lld_, kernelsDir_, clangId_, lldId_, cacheDir_, tmpDir_, cwd_;
  std::string scriptPath_[3], script_[3];
  std::vector<Kernel> kernels_;
  std::mutex logMu_;
  std::mutex flightMu_;
  std::condition_variable flightCv_;
  std::map<std::string, std::shared_ptr<InFlight>> inFlight_;
  std::atomic<bool> cacheWriteFailed_{false};
  std::string cacheWriteError_;
};

void Driver::log(const std::string& line) {
  std::lock_guard<std::mutex> lock(logMu_);
  err_ << line << '\n' << std::flush;
}

ProcessResult Driver::exec(const std::vector<std::string>& argv, const std::string& cwd) {
  if (opt_.verbose) log(cwd.empty() ? shellQuote(argv) : "cd " + shellQuote({cwd}) + " && " + shellQuote(argv));
  return runProcess(argv, cwd);
}

std::vector<std::string> Driver::compileArgs(const Kernel& kernel, int t) const {
  std::vector<std::string> a{clang_};
  a.insert(a.end(), kCompileFlags.begin(), kCompileFlags.end());
  a.push_back(kThreadDefines[t]);
  a.push_back(std::string("-D") + arch_->define + "=1");
  a.push_back("-I" + kernelsDir_ + "/include");
  a.push_back("-I" + fs::path(kernelsDir_).parent_path().string());  // device/device_contract.h
  a.push_back("-I" + kernel.dir);
  return a;
}

std::string Driver::cachePath(const std::string& key) const {
  return cacheDir_ + "/v2/" + key.substr(0, 2) + "/" + key + ".entry";
}

namespace {
// A cache entry is one header line, then the ELF (docs/hlkc.md, "Cache"):
// the header names the key the entry was stored under and the SHA-256 of
// the ELF bytes, so a truncated entry or one copied under another key is
// seen as such even when its bytes still parse as a valid ELF.
constexpr std::string_view kEntryTag = "tessera-hlkc-entry-2";

std::string entryHeader(const std::string& key, std::string_view elf) {
  return std::string(kEntryTag) + " " + key + " " + Sha256::hex(elf) + "\n";
}
} // namespace

bool Driver::loadCached(const std::string& path, int t, std::string& elf) {
  std::string error, entry;
  if (!readWholeFile(path, entry, error)) return false;
  const std::string key = fs::path(path).stem().string();
  const size_t headerSize = kEntryTag.size() + 1 + 64 + 1 + 64 + 1;
  bool intact = entry.size() > headerSize &&
                entry.compare(0, headerSize, entryHeader(key, std::string_view(entry).substr(headerSize))) == 0;
  std::optional<elf::Image> image;
  if (intact) {
    elf = entry.substr(headerSize);
    image = elf::parseElf32({reinterpret_cast<const uint8_t*>(elf.data()), elf.size()}).toOptional();
  }
  if (!image || checkImage(*image, t, *arch_)) {
    if (opt_.verbose) log("hlkc: ignoring a corrupt cache entry " + path);
    return false;
  }
  return true;
}

void Driver::storeCached(const std::string& key, const std::string& elf) {
  std::string path = cachePath(key);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string error;
  if (ec) error = ec.message();
  else if (writeFileAtomic(path, entryHeader(key, elf) + elf, error)) return;
  if (!cacheWriteFailed_.exchange(true)) {
    std::lock_guard<std::mutex> lock(logMu_);
    cacheWriteError_ = "cannot write to the cache " + cacheDir_ + ": " + error;
  }
}

void Driver::publish(const std::shared_ptr<InFlight>& f, const ThreadResult& r) {
  if (!f) return;
  {
    std::lock_guard<std::mutex> lock(flightMu_);
    f->done = true;
    f->ok = r.ok;
    if (r.ok) f->elf = r.elf;
  }
  flightCv_.notify_all();
}

// Direct mode (docs/hlkc.md, "Cache"): a manifest maps everything that
// determines clang -E's output without running it (the compiler, the flags,
// the include paths, the working directory, the kernel directory as given)
// to the cache key that -E produced and to the files it read, with their
// SHA-256. If every file still has the recorded hash, the key is known and a
// warm run starts no compiler at all.
std::string Driver::manifestKey(const Kernel& kernel, int t) const {
  Sha256 h;
  h.field(kCacheFormat);
  h.field("manifest");
  h.field(clangId_);
  h.field(lldId_);
  for (const std::string& a : compileArgs(kernel, t)) h.field(a);
  h.field(kernel.source);
  h.field(cwd_);
  for (const std::string& f : kLinkFlags) h.field(f);
  h.field(script_[t]);
  return h.hexDigest();
}

bool Driver::readManifest(const std::string& mkey, std::string& key, std::vector<std::string>& deps) {
  std::string text, error;
  std::string path = cacheDir_ + "/v2/" + mkey.substr(0, 2) + "/" + mkey + ".manifest";
  if (!readWholeFile(path, text, error)) return false;
  const std::string header = "tessera-hlkc-manifest-1\n";
  if (text.rfind(header, 0) != 0) return false;
  key.clear();
  deps.clear();
  size_t pos = header.size();
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) return false;  // truncated
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("key ", 0) == 0 && line.size() == 4 + 64) {
      key = line.substr(4);
    } else if (line.rfind("dep ", 0) == 0 && line.size() > 4 + 64 + 1 && line[4 + 64] == ' ') {
      std::string dep = line.substr(4 + 64 + 1);
      if (hashFile(dep) != line.substr(4, 64)) return false;  // changed (or gone)
      deps.push_back(dep);
    } else {
      return false;
    }
  }
  return key.size() == 64 && !deps.empty();
}

void Driver::writeManifest(const std::string& mkey, const std::string& key, const std::vector<std::string>& deps,
                           int64_t startedNs) {
  std::string text = "tessera-hlkc-manifest-1\nkey " + key + "\n";
  for (const std::string& dep : deps) {
    if (dep.find('\n') != std::string::npos) return;
    // A file modified since just before clang read it may have been read in
    // another state than the one hashed now: no manifest (-E next time).
    int64_t m = mtimeNs(dep);
    if (m < 0 || m >= startedNs - 2000000000LL) return;
    std::string data, error;
    if (!readWholeFile(dep, data, error)) return;
    // The output of these macros changes by itself: never skip -E for them.
    for (const char* macro : {"__DATE__", "__TIME__", "__TIMESTAMP__"})
      if (data.find(macro) != std::string::npos) return;
    text += "dep " + Sha256::hex(data) + " " + dep + "\n";
  }
  std::string path = cacheDir_ + "/v2/" + mkey.substr(0, 2) + "/" + mkey + ".manifest";
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string error;
  if (!ec) writeFileAtomic(path, text, error);  // best effort: a missing manifest only costs a -E
}

void Driver::runJob(size_t k, int t, ThreadResult& r) {
  const Kernel& kernel = kernels_[k];
  const std::string thread = kThreadNames[t];
  const std::string work = tmpDir_ + "/k" + std::to_string(k);
  const std::string base = work + "/" + thread;
  std::string error;

  // 0. Direct mode: the key from the manifest, if no input file changed.
  std::string mkey;
  if (!cacheDir_.empty()) {
    mkey = manifestKey(kernel, t);
    std::string key;
    if (readManifest(mkey, key, r.deps) && loadCached(cachePath(key), t, r.elf)) {
      r.ok = r.cacheHit = true;
      if (opt_.verbose) log("hlkc: " + kernel.dir + ": " + thread + ": cache hit (direct) " + cachePath(key));
      return;
    }
    r.deps.clear();
  }

  // 1. Preprocess: the cache key and the dependencies.
  const int64_t startedNs = nowNs();
  std::vector<std::string> pre = compileArgs(kernel, t);
  for (const char* a : {"-E", "-P", "-MD", "-MF"}) pre.push_back(a);
  pre.insert(pre.end(), {base + ".d", "-MT", "deps", kernel.source, "-o", base + ".ii"});
  ProcessResult res = exec(pre);
  if (!res.ok()) {
    r.failure = thread + " compile failed" + (res.signal ? " (" + res.describe() + ")" : "");
    r.toolOutput = res.started ? res.err : res.error + "\n";
    return;
  }
  std::string ii, d;
  if (!readWholeFile(base + ".ii", ii, error) || !readWholeFile(base + ".d", d, error)) {
    r.failure = thread + " compile failed: cannot read the preprocessor output: " + error;
    return;
  }
  r.deps = parseMakeDeps(d);

  Sha256 h;
  h.field(kCacheFormat);
  h.field(clangId_);
  h.field(lldId_);
  for (const std::string& f : kCompileFlags) h.field(f);
  h.field(kThreadDefines[t]);
  h.field(arch_->define);
  h.field("link");
  for (const std::string& f : kLinkFlags) h.field(f);
  h.field(script_[t]);
  h.field(ii);
  const std::string key = h.hexDigest();

  // 2. The same key earlier in this run: wait for it and share its ELF.
  std::shared_ptr<InFlight> mine, other;
  {
    std::lock_guard<std::mutex> lock(flightMu_);
    auto it = inFlight_.find(key);
    if (it != inFlight_.end()) other = it->second;
    else inFlight_[key] = mine = std::make_shared<InFlight>();
  }
  if (other) {
    std::unique_lock<std::mutex> lock(flightMu_);
    flightCv_.wait(lock, [&] { return other->done; });
    if (other->ok) {
      r.elf = other->elf;
      r.ok = r.duplicate = true;
      lock.unlock();
      if (opt_.verbose) log("hlkc: " + kernel.dir + ": " + thread + ": same as an earlier kernel (" + key.substr(0, 16) + ")");
      return;
    }
    // It failed: compile this one too, for diagnostics with our own paths.
  }
  struct Publisher {
    Driver* d;
    std::shared_ptr<InFlight> f;
    ThreadResult& r;
    ~Publisher() { d->publish(f, r); }
  } publisher{this, mine, r};

  // 3. The cache.
  if (!cacheDir_.empty()) {
    std::string path = cachePath(key);
    if (loadCached(path, t, r.elf)) {
      r.ok = r.cacheHit = true;
      if (opt_.verbose) log("hlkc: " + kernel.dir + ": " + thread + ": cache hit " + path);
      writeManifest(mkey, key, r.deps, startedNs);
      return;
    }
  }

  // 4. Compile and link.
  std::vector<std::string> cc = compileArgs(kernel, t);
  cc.insert(cc.end(), {"-c", kernel.source, "-o", base + ".o"});
  res = exec(cc);
  if (!res.ok()) {
    r.failure = thread + " compile failed" + (res.signal ? " (" + res.describe() + ")" : "");
    r.toolOutput = res.started ? res.err : res.error + "\n";
    return;
  }
  r.warnings = res.err;
  std::vector<std::string> ld{lld_, "-T", scriptPath_[t]};
  ld.insert(ld.end(), kLinkFlags.begin(), kLinkFlags.end());
  ld.insert(ld.end(), {"-o", thread + ".elf", thread + ".o"});
  res = exec(ld, work);
  if (!res.ok()) {
    r.failure = thread + " link failed" + (res.signal ? " (" + res.describe() + ")" : "");
    r.toolOutput = res.started ? res.err : res.error + "\n";
    if (isSoftwareHelper(res.err))
      r.note = "kernels run on rv32im without an FPU or a runtime library: no floating point arithmetic and no "
               "64-bit division (docs/kernels.md)";
    return;
  }
  if (!readWholeFile(base + ".elf", r.elf, error)) {
    r.failure = thread + " link failed: cannot read the linked ELF: " + error;
    return;
  }

  // 5. Check the regions.
  auto image = elf::parseElf32({reinterpret_cast<const uint8_t*>(r.elf.data()), r.elf.size()});
  if (!image) {
    r.failure = thread + ": the linker wrote an unreadable ELF: " + image.error();
    return;
  }
  if (auto problem = checkImage(*image, t, *arch_)) {
    r.failure = thread + " " + *problem;
    return;
  }
  r.ok = r.compiled = true;
  if (!cacheDir_.empty()) {
    storeCached(key, r.elf);
    writeManifest(mkey, key, r.deps, startedNs);
  }
}

bool Driver::setUp() {
  clang_ = opt_.clang.empty() ? defaultClang() : opt_.clang;
  lld_ = opt_.lld.empty() ? defaultLld() : opt_.lld;
  kernelsDir_ = opt_.kernelsDir.empty() ? defaultKernelsDir() : opt_.kernelsDir;
  std::error_code ec;
  // The linker runs in a temporary directory: absolute paths for what it reads.
  if (lld_.find('/') != std::string::npos) lld_ = fs::absolute(lld_, ec).string();
  kernelsDir_ = fs::absolute(kernelsDir_, ec).lexically_normal().string();
  while (kernelsDir_.size() > 1 && kernelsDir_.back() == '/') kernelsDir_.pop_back();

  // The toolchain's identity is what it says it is, not its file's date.
  ProcessResult v = exec({clang_, "--version"});
  if (!v.ok()) {
    toolError(err_, "hlkc") << (v.started ? "'" + clang_ + " --version' failed: " + v.describe() : v.error)
         << " (the compiler; --clang)\n";
    return false;
  }
  clangId_.clear();
  for (size_t pos = 0; pos < v.out.size();) {  // drop "InstalledDir:": where, not what
    size_t end = v.out.find('\n', pos);
    if (end == std::string::npos) end = v.out.size();
    std::string line = v.out.substr(pos, end - pos);
    if (line.rfind("InstalledDir:", 0) != 0) clangId_ += line + "\n";
    pos = end + 1;
  }
  v = exec({lld_, "--version"});
  if (!v.ok()) {
    toolError(err_, "hlkc") << (v.started ? "'" + lld_ + " --version' failed: " + v.describe() : v.error)
         << " (the linker; --lld)\n";
    return false;
  }
  lldId_ = v.out;

  std::string error;
  if (!fs::is_regular_file(kernelsDir_ + "/include/hlk_api.h", ec)) {
    toolError(err_, "hlkc") << "kernel library '" << kernelsDir_ << "' has no include/hlk_api.h (--kernels-dir)\n";
    return false;
  }
  for (int t = 0; t < 3; ++t) {
    scriptPath_[t] = kernelsDir_ + "/ld/" + arch_->ldDir + "/trisc" + std::to_string(t) + ".ld";
    if (!readWholeFile(scriptPath_[t], script_[t], error)) {
      toolError(err_, "hlkc") << "cannot read linker script '" << scriptPath_[t] << "': " << error << "\n";
      return false;
    }
  }

  if (!opt_.noCache) {
    cacheDir_ = opt_.cacheDir.empty() ? defaultCacheDir() : opt_.cacheDir;
    if (!cacheDir_.empty()) cacheDir_ = fs::absolute(cacheDir_, ec).lexically_normal().string();
  }
  if (opt_.verbose) log("hlkc: cache " + (cacheDir_.empty() ? std::string("disabled") : cacheDir_));
  cwd_ = fs::current_path(ec).string();

  const char* tmpRoot = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmpRoot && *tmpRoot ? tmpRoot : "/tmp") + "/hlkc-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    toolError(err_, "hlkc") << "cannot create a temporary directory " << tmpl << ": " << std::strerror(errno) << "\n";
    return false;
  }
  tmpDir_ = name.data();
  return true;
}

int Driver::run() {
  arch_ = findArch(opt_.arch);
  if (!arch_) {
    std::string names;
    for (const auto& n : archNames()) names += (names.empty() ? "" : ", ") + n;
    toolError(err_, "hlkc") << "unknown arch '" << opt_.arch << "' (known: " << names << ")\n";
    return kExitUsage;
  }
  if (opt_.kernelDirs.empty()) {
    toolError(err_, "hlkc") << "no kernel directory given\n";
    return kExitUsage;
  }
  if (!opt_.outDir.empty() && opt_.kernelDirs.size() > 1) {
    toolError(err_, "hlkc") << "--out-dir takes one kernel directory, got " << opt_.kernelDirs.size() << "\n";
    return kExitUsage;
  }

  // Kernel directories: unusable ones are reported, the rest still compile.
  std::set<std::string> seen;
  size_t badDirs = 0;
  for (const std::string& given : opt_.kernelDirs) {
    std::string dir = given;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    std::error_code ec;
    std::string canon = fs::weakly_canonical(dir, ec).string();
    if (!seen.insert(ec ? dir : canon).second) continue;  // the same dir twice: once
    Kernel k;
    k.dir = dir;
    k.source = (fs::path(dir) / "hlks.cpp").string();
    k.outDir = opt_.outDir.empty() ? dir : opt_.outDir;
    fs::file_status st = fs::status(dir, ec);
    if (!fs::exists(st)) k.error = "no such kernel directory";
    else if (!fs::is_directory(st)) k.error = "not a directory";
    else if (!fs::exists(k.source, ec)) k.error = "no hlks.cpp in the kernel directory";
    if (!k.error.empty()) ++badDirs;
    kernels_.push_back(std::move(k));
  }
  bool anyValid = badDirs < kernels_.size();

  struct TmpCleanup {
    std::string* dir;
    ~TmpCleanup() {
      if (!dir->empty()) {
        std::error_code ec;
        fs::remove_all(*dir, ec);
      }
    }
  } cleanup{&tmpDir_};
  if (anyValid && !setUp()) return kExitError;

  // Jobs: (kernel, thread), kernel-major.
  std::vector<std::pair<size_t, int>> jobs;
  for (size_t k = 0; k < kernels_.size(); ++k) {
    if (!kernels_[k].error.empty()) continue;
    std::error_code ec;
    fs::create_directories(tmpDir_ + "/k" + std::to_string(k), ec);
    for (int t = 0; t < 3; ++t) jobs.emplace_back(k, t);
  }
  std::vector<ThreadResult> results(kernels_.size() * 3);
  parallelFor(jobs.size(), opt_.jobs ? opt_.jobs : defaultJobs(), [&](size_t i) {
    auto [k, t] = jobs[i];
    ThreadResult& r = results[k * 3 + t];
    try {
      runJob(k, t, r);
    } catch (const std::exception& e) {
      r.ok = false;
      r.failure = std::string(kThreadNames[t]) + ": internal error: " + e.what();
    }
  });

  // Outputs, diagnostics and the depfile, in the order the dirs were given.
  size_t objects = 0, hits = 0, duplicates = 0, failed = 0;
  std::string depText;
  for (size_t k = 0; k < kernels_.size(); ++k) {
    const Kernel& kernel = kernels_[k];
    if (!kernel.error.empty()) {
      toolError(err_, "hlkc") << kernel.dir << ": " << kernel.error << "\n";
      ++failed;
      continue;
    }
    bool ok = true;
    for (int t = 0; t < 3; ++t) {
      const ThreadResult& r = results[k * 3 + t];
      if (!r.warnings.empty()) err_ << r.warnings;
      if (r.ok) continue;
      ok = false;
      const ThreadResult* same = nullptr;
      for (int u = 0; u < t && !same; ++u)
        if (!results[k * 3 + u].ok && !r.toolOutput.empty() && results[k * 3 + u].toolOutput == r.toolOutput)
          same = &results[k * 3 + u];
      toolError(err_, "hlkc") << kernel.dir << ": " << r.failure;
      if (same) {
        err_ << " (same diagnostics as " << kThreadNames[same - &results[k * 3]] << ")\n";
        continue;
      }
      err_ << "\n" << r.toolOutput;
      if (!r.note.empty()) err_ << "hlkc: note: " << r.note << "\n";
    }
    if (!ok) {
      ++failed;
      continue;
    }
    std::error_code ec;
    fs::create_directories(kernel.outDir, ec);
    std::vector<std::string> targets;
    for (int t = 0; t < 3 && ok; ++t) {
      std::string path = (fs::path(kernel.outDir) / (std::string(kThreadNames[t]) + ".elf")).string();
      std::string error;
      if (!writeFileAtomic(path, results[k * 3 + t].elf, error)) {
        toolError(err_, "hlkc") << kernel.dir << ": cannot write " << path << ": " << error << "\n";
        ok = false;
        break;
      }
      targets.push_back(path);
    }
    if (!ok) {
      ++failed;
      continue;
    }
    std::vector<std::string> deps;
    std::set<std::string> have;
    for (int t = 0; t < 3; ++t) {
      const ThreadResult& r = results[k * 3 + t];
      objects++;
      hits += r.cacheHit;
      duplicates += r.duplicate;
      for (const std::string& d : r.deps)
        if (have.insert(d).second) deps.push_back(d);
    }
    for (int t = 0; t < 3; ++t)
      if (have.insert(scriptPath_[t]).second) deps.push_back(scriptPath_[t]);
    depText += formatMakeRule(targets, deps);
  }
  if (cacheWriteFailed_) toolWarning(err_, "hlkc") << cacheWriteError_ << "\n";

  if (failed == 0 && !opt_.depfile.empty()) {
    std::string error;
    if (!writeFileAtomic(opt_.depfile, depText, error)) {
      toolError(err_, "hlkc") << "cannot write depfile " << opt_.depfile << ": " << error << "\n";
      failed = kernels_.size();  // exit 1
    }
  }
  out_ << "hlkc: " << kernels_.size() << (kernels_.size() == 1 ? " kernel, " : " kernels, ") << objects
       << (objects == 1 ? " object, " : " objects, ") << hits << (hits == 1 ? " cache hit" : " cache hits");
  if (duplicates) out_ << ", " << duplicates << (duplicates == 1 ? " duplicate" : " duplicates");
  if (failed) out_ << ", " << failed << " failed";
  out_ << "\n";
  return failed == 0 ? kExitOk : kExitError;
}

} // namespace

const ArchInfo* findArch(const std::string& name) {
  for (const ArchInfo& a : kArchs)
    if (name == a.name) return &a;
  return nullptr;
}

std::vector<std::string> archNames() {
  std::vector<std::string> v;
  for (const ArchInfo& a : kArchs) v.push_back(a.name);
  return v;
}

std::optional<std::string> checkImage(const elf::Image& image, int thread, const ArchInfo& arch) {
  if (image.machine != 243) return "ELF is not RISC-V (e_machine " + std::to_string(image.machine) + ")";
  const uint64_t codeBase = arch.codeBase[thread], codeSize = arch.codeSize[thread];
  const uint64_t localBase = arch.localBase, localSize = arch.localSize;
  const std::string region = "TRISC" + std::to_string(thread) + " code region " + support::hexLiteral(codeBase) + "-" +
                             support::hexLiteral(codeBase + codeSize - 1);
  uint64_t codeEnd = codeBase, localEnd = localBase;
  for (const elf::Segment& s : image.segments) {
    if (s.memSize == 0) continue;
    uint64_t start = s.vaddr, end = uint64_t(s.vaddr) + s.memSize;
    if (start >= localBase && start < ct::kMmioBase) {
      localEnd = std::max(localEnd, end);
    } else if (start >= codeBase && start < codeBase + codeSize) {
      if (s.writable) return "has a writable segment at " + support::hexLiteral(start) + " in its " + region;
      codeEnd = std::max(codeEnd, end);
    } else {
      return "has a segment at " + support::hexLiteral(start) + " (" + std::to_string(s.memSize) + " bytes) outside its " + region +
             " and local memory";
    }
  }
  if (codeEnd - codeBase > codeSize)
    return "code (.text + .rodata) is " + std::to_string(codeEnd - codeBase) + " bytes, over the limit of " +
           std::to_string(codeSize) + " bytes (" + region + ")";
  uint64_t data = localEnd - localBase;
  if (data + kMinStackBytes > localSize)
    return "data (.data + .bss) is " + std::to_string(data) + " bytes + " + std::to_string(kMinStackBytes) +
           " bytes minimum stack, over the limit of " + std::to_string(localSize) + " bytes (local memory " +
           support::hexLiteral(localBase) + "-" + support::hexLiteral(localBase + localSize - 1) + ")";
  if (image.entry < codeBase || image.entry >= codeEnd)
    return "entry point " + support::hexLiteral(image.entry) + " is not in its code (" + region + ")";
  return std::nullopt;
}

std::string defaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/tessera/hlkc";
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.cache/tessera/hlkc";
  return {};
}

std::string defaultClang() { return config::kClang; }
std::string defaultLld() { return config::kLld; }
std::string defaultKernelsDir() { return config::kKernelsDir; }

int run(const Options& options, std::ostream& out, std::ostream& err) {
  try {
    Driver d(options, out, err);
    return d.run();
  } catch (const std::exception& e) {
    toolError(err, "hlkc") << "internal error: " << e.what() << "\n";
    return kExitError;
  }
}

} // namespace tessera::hlkc
