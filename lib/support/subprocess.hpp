// Running a tool as a subprocess and capturing its output: hlkc runs clang and
// ld.lld, loader run the stage tools. posix_spawn, no shell: arguments are
// passed as they are.
#pragma once
#include <string>
#include <vector>

namespace tessera {

struct ProcessResult {
  bool started = false;     // false: the program could not be run (see error)
  int exitCode = -1;        // exit status; -1 when killed by a signal
  int signal = 0;           // the signal that ended it, or 0
  std::string out;          // captured stdout
  std::string err;          // captured stderr
  std::string error;        // why it could not be started / waited for

  bool ok() const { return started && signal == 0 && exitCode == 0; }
  // One line: "exit code 1", "killed by signal 9", or the start error.
  std::string describe() const;
};

// Runs argv[0] (searched in PATH when it has no slash) with stdin from
// /dev/null, in directory `cwd` (empty: ours), and waits for it. Thread-safe:
// may be called from several threads at once.
ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& cwd = {});

// The command as a shell would need it typed (for -v): arguments with
// special characters single-quoted.
std::string shellQuote(const std::vector<std::string>& argv);

} // namespace tessera
