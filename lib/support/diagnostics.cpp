#include "support/diagnostics.hpp"

#include <algorithm>
#include <ostream>

namespace tessera {

DiagnosticEngine::Builder& DiagnosticEngine::Builder::note(SourceLoc loc, std::string message) {
  if (d_) d_->notes.push_back({loc, std::move(message)});
  return *this;
}

DiagnosticEngine::Builder DiagnosticEngine::add(Severity severity, std::string rule, SourceLoc loc,
                                                std::string message) {
  (severity == Severity::Error ? errors_ : warnings_)++;
  if (diags_.size() >= kStorageLimit) return Builder(nullptr);
  diags_.push_back({severity, loc, std::move(rule), std::move(message), {}});
  return Builder(&diags_.back());
}

DiagnosticEngine::Builder DiagnosticEngine::error(std::string rule, SourceLoc loc, std::string message) {
  return add(Severity::Error, std::move(rule), loc, std::move(message));
}

DiagnosticEngine::Builder DiagnosticEngine::warning(std::string rule, SourceLoc loc, std::string message) {
  return add(Severity::Warning, std::move(rule), loc, std::move(message));
}

bool DiagnosticEngine::hasRule(const std::string& rule) const {
  return std::any_of(diags_.begin(), diags_.end(), [&](const Diagnostic& d) { return d.rule == rule; });
}

namespace {

void printLocated(std::ostream& os, const SourceBuffer& source, SourceLoc loc, const char* kind,
                  const std::string& message, const std::string& rule) {
  os << source.name();
  if (loc.valid()) os << ':' << loc.line << ':' << loc.col;
  os << ": " << kind << ": " << message;
  if (!rule.empty()) os << " [" << rule << ']';
  os << '\n';
  if (!loc.valid()) return;
  std::string_view text = source.line(loc.line);
  if (text.empty() && loc.line > source.lineCount()) return;
  os << text << '\n';
  // Keep tabs in the padding so the caret lines up under the same column.
  std::string pad;
  for (uint32_t i = 1; i < loc.col; ++i) pad += (i - 1 < text.size() && text[i - 1] == '\t') ? '\t' : ' ';
  os << pad << "^\n";
}

} // namespace

size_t printDiagnostics(std::ostream& os, const SourceBuffer& source, const DiagnosticEngine& engine,
                        const PrintOptions& options) {
  size_t printedErrors = 0;
  bool stopped = false;
  for (const Diagnostic& d : engine.diagnostics()) {
    bool isError = d.severity == Severity::Error || options.warningsAsErrors;
    if (stopped) break;
    if (isError && options.maxErrors && printedErrors == options.maxErrors) {
      os << source.name() << ": note: too many errors emitted, stopping now [-ferror-limit=" << options.maxErrors
         << "]\n";
      stopped = true;
      continue;
    }
    if (isError) ++printedErrors;
    printLocated(os, source, d.loc, isError ? "error" : "warning", d.message, d.rule);
    for (const DiagNote& n : d.notes) printLocated(os, source, n.loc, "note", n.message, "");
  }
  return engine.errorCount() + (options.warningsAsErrors ? engine.warningCount() : 0);
}

} // namespace tessera
