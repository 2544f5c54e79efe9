// `loader run`'s build step: brings a build directory up to date for a
// netlist by running the stage tools (net2hlks, hlkc, net2pipe, pipegen,
// blobgen) as subprocesses, the kernel chain beside the pipe chain and the
// epochs of the pipe chain in parallel (docs/loader.md, "loader run").
//
// A stage reruns only when its inputs changed: each job leaves a stamp
// (BUILD/.stamps/<job>) holding a SHA-256 of its command, the tool binary's
// size and mtime, and the bytes of every input file. The stamp is removed
// before the job runs and written after it succeeds, and every tool writes its
// outputs atomically, so an interrupted build (Ctrl-C) leaves files that the
// next run either trusts because they are complete or rebuilds. hlkc always
// runs: its own content-hash cache decides what compiles.
#pragma once
#include "loader/foreign_pipes.hpp"

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::loader {

struct BuildOptions {
  std::string netlist;
  std::string buildDir;
  std::string arch;                     // empty: the tools' default (the netlist's first arch)
  std::string toolsDir;                 // empty: beside the running loader, then PATH
  unsigned jobs = 0;                    // subprocesses at once (0: one per CPU)
  bool verbose = false;                 // print each command (stderr)
  std::vector<std::string> pipegenArgs; // extra pipegen flags
  std::string hlkcCacheDir;             // empty: hlkc's default
  std::string clusterFile;              // --cluster FILE for net2pipe, pipegen and blobgen (empty: none; a
                                        // netlist over N chips then gets its arch's default topology)
  // --pipes-from DIR: another net2pipe's pipegen.yaml files replace ours,
  // imported by `importPipes` (importForeignPipes with the run's netlist) into
  // temporal_epoch_<E>/imported/; pipegen and blobgen then run on those.
  std::string pipesFrom;
  std::function<std::string(const std::string& dir, const std::vector<ForeignEpoch>&)> importPipes;
};

// Where the stage tool `name` is: toolsDir/name, toolsDir/tools/name/name
// (a CMake build tree), beside the running executable (installed layout), or
// ../name/name from it (the build tree's tools/<tool>/<tool>), else `name`
// itself to be searched in PATH.
std::string findStageTool(const std::string& name, const std::string& toolsDir);

// Returns 0 when every artifact is up to date, 1 when a stage failed (its
// diagnostics are printed on `err` under a line naming the stage and the
// command), 2 usage (a tool cannot be found or run, the build dir cannot be
// made). One line per stage on `out`: what ran and what was up to date.
int buildArtifacts(const BuildOptions& options, std::ostream& out, std::ostream& err);

} // namespace tessera::loader
