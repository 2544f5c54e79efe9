// Shared checks of the reader fuzzers (fuzz_*_yaml.cpp, fuzz_cluster.cpp):
// a reader that returns nothing must have said why, and its diagnostics must
// print (the caret printer runs on the fuzzed text too).
#pragma once
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace tessera::fuzz {

[[noreturn]] inline void invariantBroken(const char* target, const char* what) {
  std::cerr << target << ": invariant broken: " << what << "\n";
  std::abort();
}

// `ok`: the reader returned a model. A failure without an error, or an error
// with a model, breaks the readers' documented contract.
inline void checkDiagnostics(const char* target, bool ok, const SourceBuffer& source, const DiagnosticEngine& diags) {
  if (!ok && diags.errorCount() == 0) invariantBroken(target, "nullopt without an error diagnostic");
  if (ok && diags.errorCount() != 0) invariantBroken(target, "a model came back with errors reported");
  std::ostringstream os;
  printDiagnostics(os, source, diags);
}

}  // namespace tessera::fuzz
