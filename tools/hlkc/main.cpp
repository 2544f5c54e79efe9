// hlkc: compile kernel directories (hlks.cpp + hlk_args.h) into unpack.elf,
// math.elf and pack.elf. Thin driver: flags here, the work in lib/hlkc.
#include "support/cli.hpp"
#include "hlkc/hlkc.hpp"
#include "support/parallel.hpp"
#include "support/tool_output.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  namespace hlkc = tessera::hlkc;
  hlkc::Options opts;
  CLI::App app{"hlkc: compile HLK kernel directories into per-thread RV32 ELFs (unpack.elf, math.elf, pack.elf)",
               "hlkc"};
  app.add_option("kernel-dirs", opts.kernelDirs, "Kernel directories, each with hlks.cpp and its hlk_args.h")
      ->required()
      ->type_name("<KERNEL_DIR>");
  app.add_option("--out-dir", opts.outDir, "Write the ELFs here instead of into the kernel directory "
                                           "(one kernel directory only)")
      ->type_name("<dir>");
  std::string archHelp = "Target arch (linker scripts lib/kernels/ld/<arch>/): ";
  for (const auto& n : hlkc::archNames()) archHelp += n + (n == hlkc::archNames().back() ? "" : ", ");
  app.add_option("--arch", opts.arch, archHelp)
      ->default_val("grayskull")
      ->check(CLI::IsMember(hlkc::archNames()))
      ->type_name("<arch>");
  app.add_option("-j,--jobs", opts.jobs, "Parallel compiles (default: the number of CPUs, " +
                                             std::to_string(tessera::defaultJobs()) + " here)")
      ->check(CLI::Range(1, 1024))
      ->type_name("<N>");
  std::string cacheDefault = hlkc::defaultCacheDir();
  auto* cacheDir = app.add_option("--cache-dir", opts.cacheDir,
                                  "Content-hash cache of linked ELFs (default: $XDG_CACHE_HOME/tessera/hlkc or "
                                  "~/.cache/tessera/hlkc" +
                                      (cacheDefault.empty() ? std::string() : ", here " + cacheDefault) + ")")
                       ->type_name("<dir>");
  app.add_flag("--no-cache", opts.noCache, "Neither read nor write the cache")->excludes(cacheDir);
  app.add_option("--depfile", opts.depfile, "Write a make depfile: each kernel's ELFs depend on hlks.cpp, "
                                            "hlk_args.h, every included header and the linker scripts")
      ->type_name("<file>");
  app.add_flag("-v,--verbose", opts.verbose, "Print each command and each cache hit (stderr)");
  app.add_option("--clang", opts.clang, "clang to compile with (default: " + hlkc::defaultClang() + ")")
      ->type_name("<path>");
  app.add_option("--lld", opts.lld, "ld.lld to link with (default: " + hlkc::defaultLld() + ")")->type_name("<path>");
  app.add_option("--kernels-dir", opts.kernelsDir,
                 "Kernel library: include/ and ld/<arch>/; device/device_contract.h is read from its parent "
                 "(default: " + hlkc::defaultKernelsDir() + ")")
      ->type_name("<dir>");
  app.set_version_flag("--version", tessera::versionString("hlkc"));
  app.footer("Exit status: 0 every kernel compiled, 1 a kernel failed or is missing, 2 usage error.\n"
             "Manual: docs/hlkc.md; the kernel API: docs/kernels.md.");
  if (auto code = tessera::parseToolArgs(app, argc, argv, "hlkc")) return *code;
  return tessera::runGuarded("hlkc", [&] { return hlkc::run(opts, std::cout, std::cerr); });
}
