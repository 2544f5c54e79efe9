// Unit tests of the diagnostic engine and printDiagnostics (support/diagnostics).
// Every expected string below is written out by hand from the inline source.
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

using namespace tessera;

namespace {

std::string print(const SourceBuffer& source, const DiagnosticEngine& engine, PrintOptions options = {},
                  size_t* counted = nullptr) {
  std::ostringstream os;
  size_t n = printDiagnostics(os, source, engine, options);
  if (counted) *counted = n;
  return os.str();
}

} // namespace

TEST_CASE("diagnostic: location, source line and caret", "[diagnostics]") {
  SourceBuffer source("net.yaml", "devices:\n  arch: tpu\nqueues: {}\n");
  DiagnosticEngine d;
  d.error("field-value", {2, 9}, "devices: unknown arch 'tpu'");
  CHECK(print(source, d) ==
        "net.yaml:2:9: error: devices: unknown arch 'tpu' [field-value]\n"
        "  arch: tpu\n"
        "        ^\n");
}

TEST_CASE("diagnostic: caret at column 1 and on the last line without a newline", "[diagnostics]") {
  SourceBuffer source("n.yaml", "a: 1\nbb: 2");
  DiagnosticEngine d;
  d.error("r", {2, 1}, "m");
  CHECK(print(source, d) == "n.yaml:2:1: error: m [r]\nbb: 2\n^\n");
}

TEST_CASE("diagnostic: the caret keeps tabs so it lines up under the column", "[diagnostics]") {
  // Line 2 is TAB TAB "v: x"; column 3 is the 'v', column 5 the 'x'... after
  // "v:" comes a space, so 'x' is column 6.
  SourceBuffer source("t.yaml", "k:\n\t\tv: x\n");
  DiagnosticEngine d;
  d.error("r", {2, 3}, "at v");
  d.error("r", {2, 6}, "at x");
  CHECK(print(source, d) ==
        "t.yaml:2:3: error: at v [r]\n"
        "\t\tv: x\n"
        "\t\t^\n"
        "t.yaml:2:6: error: at x [r]\n"
        "\t\tv: x\n"
        "\t\t   ^\n");
}

TEST_CASE("diagnostic: a tab after other text is kept too", "[diagnostics]") {
  SourceBuffer source("t.yaml", "ab\tcd\n");
  DiagnosticEngine d;
  d.error("r", {1, 5}, "at d");
  CHECK(print(source, d) == "t.yaml:1:5: error: at d [r]\nab\tcd\n  \t ^\n");
}

TEST_CASE("diagnostic: CRLF line endings are not echoed", "[diagnostics]") {
  SourceBuffer source("w.yaml", "a: 1\r\nb: 2\r\n");
  DiagnosticEngine d;
  d.error("r", {2, 4}, "m");
  CHECK(print(source, d) == "w.yaml:2:4: error: m [r]\nb: 2\n   ^\n");
}

TEST_CASE("diagnostic: notes with and without a location", "[diagnostics]") {
  SourceBuffer source("n.yaml", "q1: {}\nq1: {}\n");
  DiagnosticEngine d;
  d.error("duplicate-name", {2, 1}, "queue 'q1' is defined more than once")
      .note({1, 1}, "first definition of 'q1'")
      .note("queues and ops share one namespace");
  CHECK(print(source, d) ==
        "n.yaml:2:1: error: queue 'q1' is defined more than once [duplicate-name]\n"
        "q1: {}\n"
        "^\n"
        "n.yaml:1:1: note: first definition of 'q1'\n"
        "q1: {}\n"
        "^\n"
        "n.yaml: note: queues and ops share one namespace\n");
  REQUIRE(d.diagnostics().size() == 1);
  CHECK(d.diagnostics()[0].notes.size() == 2);
  CHECK_FALSE(d.diagnostics()[0].notes[1].loc.valid());
}

TEST_CASE("diagnostic: no position, no source line; position past the end, no source line", "[diagnostics]") {
  SourceBuffer source("n.yaml", "a: 1\n");
  DiagnosticEngine d;
  d.error("yaml-syntax", {}, "invalid YAML: something");
  d.error("r", {7, 2}, "far away");
  CHECK(print(source, d) ==
        "n.yaml: error: invalid YAML: something [yaml-syntax]\n"
        "n.yaml:7:2: error: far away [r]\n");
}

TEST_CASE("diagnostic: an empty rule id prints no brackets", "[diagnostics]") {
  SourceBuffer source("n.yaml", "a: 1\n");
  DiagnosticEngine d;
  d.error("", {}, "plain");
  CHECK(print(source, d) == "n.yaml: error: plain\n");
}

TEST_CASE("diagnostic: warnings, and warnings as errors", "[diagnostics]") {
  SourceBuffer source("w.yaml", "x: 1\n");
  DiagnosticEngine d;
  d.warning("unknown-field", {1, 1}, "netlist: unknown field 'x'");
  d.error("missing-field", {1, 1}, "netlist: missing required field 'devices'");
  CHECK(d.errorCount() == 1);
  CHECK(d.warningCount() == 1);

  size_t n = 0;
  CHECK(print(source, d, {}, &n) ==
        "w.yaml:1:1: warning: netlist: unknown field 'x' [unknown-field]\n"
        "x: 1\n"
        "^\n"
        "w.yaml:1:1: error: netlist: missing required field 'devices' [missing-field]\n"
        "x: 1\n"
        "^\n");
  CHECK(n == 1);

  PrintOptions werror;
  werror.warningsAsErrors = true;
  CHECK(print(source, d, werror, &n) ==
        "w.yaml:1:1: error: netlist: unknown field 'x' [unknown-field]\n"
        "x: 1\n"
        "^\n"
        "w.yaml:1:1: error: netlist: missing required field 'devices' [missing-field]\n"
        "x: 1\n"
        "^\n");
  CHECK(n == 2);
}

TEST_CASE("diagnostic: only warnings count as zero errors", "[diagnostics]") {
  SourceBuffer source("w.yaml", "x: 1\n");
  DiagnosticEngine d;
  d.warning("a", {1, 1}, "one");
  d.warning("b", {1, 2}, "two");
  size_t n = 99;
  print(source, d, {}, &n);
  CHECK(n == 0);
  PrintOptions werror;
  werror.warningsAsErrors = true;
  print(source, d, werror, &n);
  CHECK(n == 2);
}

TEST_CASE("diagnostic: the error cap prints a note and stops", "[diagnostics]") {
  SourceBuffer source("c.yaml", "a\nb\nc\nd\n");
  DiagnosticEngine d;
  d.error("r", {1, 1}, "e1");
  d.warning("w", {2, 1}, "w1"); // warnings do not count towards the cap
  d.error("r", {3, 1}, "e2");
  d.error("r", {4, 1}, "e3").note({1, 1}, "hidden note");
  d.warning("w", {4, 1}, "w2"); // after the cap nothing is printed

  PrintOptions capped;
  capped.maxErrors = 2;
  size_t n = 0;
  CHECK(print(source, d, capped, &n) ==
        "c.yaml:1:1: error: e1 [r]\n"
        "a\n"
        "^\n"
        "c.yaml:2:1: warning: w1 [w]\n"
        "b\n"
        "^\n"
        "c.yaml:3:1: error: e2 [r]\n"
        "c\n"
        "^\n"
        "c.yaml: note: too many errors emitted, stopping now [-ferror-limit=2]\n");
  CHECK(n == 3); // every error counts, printed or not

  // With warnings as errors, w1 is the second error and e2 the third.
  capped.warningsAsErrors = true;
  CHECK(print(source, d, capped, &n) ==
        "c.yaml:1:1: error: e1 [r]\n"
        "a\n"
        "^\n"
        "c.yaml:2:1: error: w1 [w]\n"
        "b\n"
        "^\n"
        "c.yaml: note: too many errors emitted, stopping now [-ferror-limit=2]\n");
  CHECK(n == 5);

  // 0 means no limit: all five diagnostics and the note of e3.
  PrintOptions all;
  all.maxErrors = 0;
  std::string out = print(source, d, all, &n);
  CHECK(out.find("too many errors") == std::string::npos);
  CHECK(out.find("c.yaml:1:1: note: hidden note\n") != std::string::npos);
  CHECK(out.find("c.yaml:4:1: warning: w2 [w]\n") != std::string::npos);
  CHECK(n == 3);
}

TEST_CASE("diagnostic: exactly as many errors as the cap prints no note", "[diagnostics]") {
  SourceBuffer source("c.yaml", "a\nb\n");
  DiagnosticEngine d;
  d.error("r", {1, 1}, "e1");
  d.error("r", {2, 1}, "e2");
  PrintOptions capped;
  capped.maxErrors = 2;
  CHECK(print(source, d, capped) == "c.yaml:1:1: error: e1 [r]\na\n^\nc.yaml:2:1: error: e2 [r]\nb\n^\n");
}

TEST_CASE("diagnostic: long lines are shown as a window around the caret", "[diagnostics]") {
  // 200 characters: '0'..'9' repeated, so index i holds '0' + i % 10.
  std::string line;
  for (int i = 0; i < 200; ++i) line += static_cast<char>('0' + i % 10);
  SourceBuffer source("long.yaml", line + "\n");
  DiagnosticEngine d;
  // Column 100 is index 99; the window starts 60 before it (index 39) and is
  // 120 wide (indices 39..158), with "..." on both sides.
  d.error("r", {1, 100}, "m");
  // Column 10 is near the start: the window starts at index 0, no leading dots.
  d.error("r", {1, 10}, "n");
  std::string expected = "long.yaml:1:100: error: m [r]\n...";
  for (int i = 39; i <= 158; ++i) expected += static_cast<char>('0' + i % 10);
  expected += "...\n" + std::string(3 + 60, ' ') + "^\n";
  expected += "long.yaml:1:10: error: n [r]\n";
  for (int i = 0; i <= 119; ++i) expected += static_cast<char>('0' + i % 10);
  expected += "...\n" + std::string(9, ' ') + "^\n";
  CHECK(print(source, d) == expected);
}

TEST_CASE("diagnostic: lines up to 160 characters are shown whole", "[diagnostics]") {
  std::string line(160, 'a');
  SourceBuffer source("l.yaml", line);
  DiagnosticEngine d;
  d.error("r", {1, 160}, "m");
  CHECK(print(source, d) == "l.yaml:1:160: error: m [r]\n" + line + "\n" + std::string(159, ' ') + "^\n");
}

TEST_CASE("diagnostic: storage is bounded, counts are not", "[diagnostics]") {
  DiagnosticEngine d;
  const size_t limit = DiagnosticEngine::kStorageLimit;
  REQUIRE(limit == 10000);
  for (size_t i = 0; i < limit + 5; ++i) d.error("flood", {1, 1}, "e").note("n"); // notes on dropped ones are no-ops
  d.warning("late-warning", {1, 1}, "w");
  CHECK(d.diagnostics().size() == limit);
  CHECK(d.errorCount() == limit + 5);
  CHECK(d.warningCount() == 1);
  CHECK(d.hasRule("flood"));
  CHECK_FALSE(d.hasRule("late-warning")); // past the limit: counted, not stored
  CHECK(d.diagnostics().back().notes.size() == 1);

  SourceBuffer source("f.yaml", "x\n");
  PrintOptions all;
  all.maxErrors = 0;
  size_t n = 0;
  std::ostringstream os;
  n = printDiagnostics(os, source, d, all);
  CHECK(n == limit + 5);
}

TEST_CASE("diagnostic: hasRule looks at stored diagnostics of both severities", "[diagnostics]") {
  DiagnosticEngine d;
  CHECK_FALSE(d.hasRule("x"));
  d.warning("dram-overlap", {}, "w");
  d.error("shape-mismatch", {}, "e");
  CHECK(d.hasRule("dram-overlap"));
  CHECK(d.hasRule("shape-mismatch"));
  CHECK_FALSE(d.hasRule("shape"));
  REQUIRE(d.diagnostics().size() == 2);
  CHECK(d.diagnostics()[0].severity == Severity::Warning);
  CHECK(d.diagnostics()[1].severity == Severity::Error);
}

TEST_CASE("source buffer: lines and line count", "[diagnostics]") {
  SourceBuffer source("s.yaml", "one\ntwo\r\n\nfour");
  CHECK(source.lineCount() == 4);
  CHECK(source.line(1) == "one");
  CHECK(source.line(2) == "two");
  CHECK(source.line(3).empty());
  CHECK(source.line(4) == "four");
  CHECK(source.line(0).empty());
  CHECK(source.line(5).empty());
}
