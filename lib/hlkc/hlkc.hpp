// hlkc: compiles kernel directories (hlks.cpp + hlk_args.h) into the three
// per-thread RV32 ELFs unpack.elf, math.elf, pack.elf, with a content-hash
// cache. tools/hlkc/main.cpp parses the flags; docs/hlkc.md is the manual.
#pragma once
#include "elf/elf.hpp"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tessera::hlkc {

struct Options {
  std::vector<std::string> kernelDirs;
  std::string outDir;             // empty: write the ELFs into the kernel dir
  std::string arch = "grayskull";
  unsigned jobs = 0;              // 0: defaultJobs()
  std::string cacheDir;           // empty: defaultCacheDir()
  bool noCache = false;
  std::string depfile;
  bool verbose = false;
  std::string clang;              // empty: the configured default
  std::string lld;
  std::string kernelsDir;
};

// Exit codes (DESIGN.md): 0 ok, 1 a kernel failed or an input is missing, 2 usage.
constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2;

// What the linker scripts of one arch promise; hlkc checks every ELF against it.
struct ArchInfo {
  const char* name;        // --arch value
  const char* define;      // -D macro, e.g. TESSERA_ARCH_GRAYSKULL
  const char* ldDir;       // lib/kernels/ld/<ldDir>/: the linker scripts of its Tensix memory map
  uint32_t codeBase[3];    // per thread (unpack, math, pack)
  uint32_t codeSize[3];
  uint32_t localBase;
  uint32_t localSize;
};
const ArchInfo* findArch(const std::string& name);
std::vector<std::string> archNames();

inline constexpr const char* kThreadNames[3] = {"unpack", "math", "pack"};
inline constexpr uint32_t kMinStackBytes = 1024;

// Checks a linked kernel ELF of `thread` (0 unpack, 1 math, 2 pack) against
// the arch's regions: code segments inside the thread's code region, data +
// bss + kMinStackBytes inside local memory, entry at a code address.
// Returns the problem (without the kernel/thread prefix), or nullopt.
std::optional<std::string> checkImage(const elf::Image& image, int thread, const ArchInfo& arch);

std::string defaultCacheDir();  // $XDG_CACHE_HOME/tessera/hlkc, ~/.cache/tessera/hlkc, or "" (no cache)
std::string defaultClang();     // baked in at configure time
std::string defaultLld();
std::string defaultKernelsDir();

// Runs hlkc. Diagnostics to `err`, the summary line to `out`.
int run(const Options& options, std::ostream& out, std::ostream& err);

} // namespace tessera::hlkc
