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
  // Long lines (flow-style netlists put a whole queue on one line) are shown
  // as a window around the caret, as clang does.
  constexpr size_t kWindow = 120;
  size_t col = loc.col > 0 ? loc.col - 1 : 0;
  size_t begin = 0;
  std::string prefix, suffix;
  if (text.size() > kWindow + 40) {
    begin = col > kWindow / 2 ? col - kWindow / 2 : 0;
    if (begin > text.size()) begin = text.size();
    // Never cut a UTF-8 sequence: move the window edges to character starts.
    auto continuation = [&](size_t i) { return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
    while (begin > 0 && continuation(begin)) --begin;
    size_t end = std::min(text.size(), begin + kWindow);
    while (continuation(end)) ++end;
    if (begin > 0) prefix = "...";
    if (end < text.size()) suffix = "...";
    text = text.substr(begin, end - begin);
  }
  os << prefix << text << suffix << '\n';
  // Keep tabs in the padding so the caret lines up under the same column.
  std::string pad(prefix.size(), ' ');
  // One pad character per displayed character: UTF-8 continuation bytes take no column.
  for (size_t i = begin; i < col; ++i) {
    size_t j = i - begin;
    if (j < text.size() && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) continue;
    pad += (j < text.size() && text[j] == '\t') ? '\t' : ' ';
  }
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
    if (!isError && options.hideWarnings) continue;
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
