// lib/support fast paths for generated files: SourceBuffer's line table,
// parsing a document that is part of a larger text (no copy), scalar
// interning, and parseBool without a lowercase copy.
#include "support/source.hpp"
#include "support/yaml.hpp"
#include "support/yaml_tree.hpp"

#include <catch2/catch.hpp>

#include <iterator>
#include <string>

using namespace tessera;

TEST_CASE("SourceBuffer lines: \\n, \\r\\n, a lone \\r, no final newline", "[support][source]") {
  SourceBuffer lf("a", "one\ntwo\n\nfour");
  CHECK(lf.lineCount() == 4);
  CHECK(lf.line(1) == "one");
  CHECK(lf.line(3) == "");
  CHECK(lf.line(4) == "four");
  CHECK(lf.line(5) == "");
  CHECK(lf.line(0) == "");

  SourceBuffer mixed("b", "one\r\ntwo\rthree\nfour\r");
  CHECK(mixed.lineCount() == 5);
  CHECK(mixed.line(1) == "one");
  CHECK(mixed.line(2) == "two");
  CHECK(mixed.line(3) == "three");
  CHECK(mixed.line(4) == "four");
  CHECK(mixed.line(5) == "");

  SourceBuffer empty("c", "");
  CHECK(empty.lineCount() == 1);
  CHECK(empty.line(1) == "");
  SourceBuffer trailing("d", "x\n");
  CHECK(trailing.lineCount() == 2);
  CHECK(trailing.line(1) == "x");
}

TEST_CASE("yaml: a document inside a larger text parses in place", "[support][yaml]") {
  const std::string text = "---\nkey: [1, 2]\nother: x\n---\nnext: 1\n";
  const std::string_view part = std::string_view(text).substr(4, 21); // the first document
  DiagnosticEngine diags;
  auto doc = yaml::Document::parse(part, diags);
  REQUIRE(doc);
  yaml::Node root = (*doc)->root();
  REQUIRE(root.IsMap());
  CHECK(root.size() == 2);
  CHECK(root["key"].size() == 2);
  CHECK(root["other"].Scalar() == "x");
  // Positions are relative to the part (0-based).
  CHECK(root["other"].Mark().line == 1);
  CHECK(root["other"].Mark().column == 7);
  CHECK(diags.diagnostics().empty());
}

TEST_CASE("yaml: a part the line scanner leaves to libyaml, and its errors", "[support][yaml]") {
  const std::string text = "x: 0\na: &n 1\nb: *n\nc: [\n";
  DiagnosticEngine ok;
  auto doc = yaml::Document::parse(std::string_view(text).substr(5, 14), ok); // a and b: an alias
  REQUIRE(doc);
  yaml::Node root = (*doc)->root();
  CHECK(root["b"].Scalar() == "1");
  CHECK(std::next(root.begin())->first.Mark().line == 1);

  DiagnosticEngine bad;
  CHECK_FALSE(yaml::Document::parse(std::string_view(text).substr(5), bad));
  REQUIRE(bad.diagnostics().size() == 1);
  const Diagnostic& d = bad.diagnostics()[0];
  CHECK(d.rule == "yaml-syntax");
  // The same error as for the part on its own.
  SourceBuffer alone("p", text.substr(5));
  DiagnosticEngine expected;
  CHECK_FALSE(yaml::Document::parse(alone, expected));
  REQUIRE(expected.diagnostics().size() == 1);
  CHECK(d.loc == expected.diagnostics()[0].loc);
  CHECK(d.message == expected.diagnostics()[0].message);
}

TEST_CASE("yaml: equal scalar texts share one string", "[support][yaml]") {
  SourceBuffer source("t", "a: true\nb: [true, 'true', x]\nc: {a: 1}\n");
  DiagnosticEngine diags;
  auto doc = yaml::Document::parse(source, diags);
  REQUIRE(doc);
  yaml::Node root = (*doc)->root();
  const std::string* t = &root["a"].Scalar();
  CHECK(&root["b"][0].Scalar() == t);
  CHECK(&root["b"][1].Scalar() == t); // quoted or not, the text is the same
  CHECK(&root["b"][2].Scalar() != t);
  auto first = root.begin();
  CHECK(&root["c"].begin()->first.Scalar() == &first->first.Scalar());
}

TEST_CASE("parseBool: true/false in any case, 1/0, surrounding spaces", "[support][yaml]") {
  for (const char* s : {"true", "True", "TRUE", "tRuE", "1", " true "}) CHECK(parseBool(s) == true);
  for (const char* s : {"false", "False", "FALSE", "0", "\tfalse"}) CHECK(parseBool(s) == false);
  for (const char* s : {"", "yes", "no", "truee", "tru", "2", "01", "t rue", "\xc3\x9frue"}) CHECK_FALSE(parseBool(s));
}
