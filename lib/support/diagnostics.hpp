// Diagnostics in the LLVM style: `file:line:col: error: message [rule]`, the
// source line, a caret, then `note:` lines naming the elements involved.
#pragma once
#include "support/source.hpp"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera {

enum class Severity { Error, Warning };

struct DiagNote {
  SourceLoc loc; // may be invalid: the note is then printed without a position
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string rule; // short stable id, printed as `[rule]`; lit tests match it
  std::string message;
  std::vector<DiagNote> notes;
};

class DiagnosticEngine {
public:
  // Beyond this many stored diagnostics the rest are only counted, so a
  // pathological input cannot make the checker use unbounded memory.
  static constexpr size_t kStorageLimit = 10000;

  class Builder {
  public:
    Builder& note(SourceLoc loc, std::string message);
    Builder& note(std::string message) { return note(SourceLoc{}, std::move(message)); }

  private:
    friend class DiagnosticEngine;
    explicit Builder(Diagnostic* d) : d_(d) {}
    Diagnostic* d_; // null when the diagnostic was dropped past the storage limit
  };

  Builder error(std::string rule, SourceLoc loc, std::string message);
  Builder warning(std::string rule, SourceLoc loc, std::string message);

  size_t errorCount() const { return errors_; }
  size_t warningCount() const { return warnings_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  // True when some stored diagnostic carries this rule id (used by tests).
  bool hasRule(const std::string& rule) const;

private:
  Builder add(Severity severity, std::string rule, SourceLoc loc, std::string message);
  std::vector<Diagnostic> diags_;
  size_t errors_ = 0;
  size_t warnings_ = 0;
};

struct PrintOptions {
  size_t maxErrors = 20;         // 0 = print every error
  bool warningsAsErrors = false; // print warnings as errors (and count them)
  bool hideWarnings = false;     // print no warnings (ignored under warningsAsErrors)
};

// Prints every diagnostic of `engine` for the file `source` (name may be used
// without text when the file could not be read). Returns the number of errors
// (warnings count as errors under warningsAsErrors).
size_t printDiagnostics(std::ostream& os, const SourceBuffer& source,
                        const DiagnosticEngine& engine, const PrintOptions& options = {});

} // namespace tessera
