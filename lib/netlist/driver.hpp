// The netlist-check job as a library call, so the tool's main stays a thin
// flag parser and tests can drive it directly.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::netlist {

struct CheckOptions {
  std::vector<std::string> inputs;
  std::string arch;   // empty: the first arch each netlist lists
  std::string device; // SoC descriptor file or bundled name; overrides arch
  std::string cluster; // cluster descriptor file; empty: the arch's default for the netlist's chips
  bool allArchs = false; // every arch the netlist lists, with its bundled default descriptor
  bool anyArch = false;  // valid when some listed arch accepts it (firstAcceptingArch), with a note
  bool printArch = false; // print the arch each netlist was checked against, a line each (for scripts)
  bool emitJson = false;
  bool stats = false;
  std::string output;  // empty: stdout
  std::string depfile; // needs output
  size_t maxErrors = 20;
  bool warningsAsErrors = false;
  bool noWarnings = false;
};

// Returns the process exit code: 0 all valid, 1 some input invalid, 2 usage error.
int runCheck(const CheckOptions& options, std::ostream& out, std::ostream& err);

} // namespace tessera::netlist
