// The YAML tree's line scanner (the fast path for generated files) must give
// exactly libyaml's tree: node kinds, texts, tags and positions; and leave
// everything it does not handle, errors included, to libyaml.
#include "support/yaml_tree.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace tessera;
using tessera::yaml::Node;
using tessera::yaml::NodeType;

namespace {

std::string describe(const Node& n) {
  auto m = n.Mark();
  return std::to_string(static_cast<int>(n.Type())) + "@" + std::to_string(m.line) + ":" + std::to_string(m.column) +
         " " + n.Tag() + " '" + n.Scalar() + "' size " + std::to_string(n.size());
}

// Empty when the trees are equal, else the first difference.
std::string difference(const Node& a, const Node& b) {
  if (describe(a) != describe(b)) return describe(a) + " vs " + describe(b);
  auto ib = b.begin();
  for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
    std::string d = a.IsMap() ? difference(ia->first, ib->first) + difference(ia->second, ib->second)
                              : difference(*ia, *ib);
    if (!d.empty()) return d;
  }
  return "";
}

void checkSame(const std::string& text) {
  INFO("YAML:\n" << text);
  SourceBuffer source("t.yaml", text);
  DiagnosticEngine d1, d2;
  auto fast = yaml::Document::parse(source, d1);
  auto slow = yaml::Document::parseWithLibyaml(source, d2);
  REQUIRE(fast.has_value() == slow.has_value());
  REQUIRE(d1.diagnostics().size() == d2.diagnostics().size());
  for (size_t i = 0; i < d1.diagnostics().size(); ++i) {
    CHECK(d1.diagnostics()[i].loc == d2.diagnostics()[i].loc);
    CHECK(d1.diagnostics()[i].message == d2.diagnostics()[i].message);
  }
  if (fast) CHECK(difference((*fast)->root(), (*slow)->root()) == "");
}

} // namespace

TEST_CASE("yaml line scanner: positions worked out by hand") {
  // 0-based lines and columns.
  SourceBuffer source("t.yaml", "# c\n"
                                "a:\n"
                                "  b: [1, x]   # note\n"
                                "  c:\n"
                                "  d: 'q r'\n"
                                "e:\n"
                                "- k: v\n"
                                "  m: ~\n"
                                "-\n");
  DiagnosticEngine diags;
  auto doc = yaml::Document::parse(source, diags);
  REQUIRE(doc);
  Node root = (*doc)->root();
  REQUIRE(root.IsMap());
  CHECK(root.Mark().line == 1);
  CHECK(root.Mark().column == 0);
  Node a = root["a"];
  CHECK(a.Mark().line == 2); // a block map starts at its first key
  CHECK(a.Mark().column == 2);
  Node b = a["b"];
  REQUIRE(b.IsSequence());
  CHECK(b.size() == 2);
  CHECK(b.Mark().column == 5);
  CHECK(b[0].Scalar() == "1");
  CHECK(b[1].Mark().column == 9);
  Node c = a["c"]; // empty: null, just after its colon
  CHECK(c.IsNull());
  CHECK(c.Mark().line == 3);
  CHECK(c.Mark().column == 4);
  CHECK(a["d"].Scalar() == "q r");
  CHECK(a["d"].Tag() == "!");
  CHECK(b[1].Tag() == "?");
  Node e = root["e"]; // an indentless sequence, at its first dash
  REQUIRE(e.IsSequence());
  CHECK(e.size() == 2);
  CHECK(e.Mark().line == 6);
  CHECK(e.Mark().column == 0);
  CHECK(e[0].Mark().column == 2); // the compact map at its key
  CHECK(e[0]["k"].Scalar() == "v");
  CHECK(e[0]["m"].IsNull());
  CHECK(e[1].IsNull());
  CHECK(e[1].Mark().line == 8);
  CHECK(e[1].Mark().column == 1);
  checkSame(source.text());
}

TEST_CASE("yaml line scanner: same tree as libyaml") {
  const char* cases[] = {
      "",
      "# only a comment\n",
      "a: 1\n",
      "a: 1",
      "a:\n",
      "a:",
      "a: b\nc: d\n",
      "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n",
      "a:\n- 1\n- 2\nb: 3\n",
      "a:\n  - 1\n  -\n  - [x, y]\n",
      "- a\n- b: 1\n  c: 2\n- - x\n",
      "-   k: 1\n    j: 2\n-\n  - z\n",
      "a: [ ]\nb: {}\nc: [a, [b, {c: d}], 'e', \"f\"]\n",
      "a: {x: 1, y: [2, 3]}\n",
      "k: value with  spaces   \n",
      "k: a#b\nj: a # c\n",
      "k: a:b\n",
      "k: ~\nn: null\nN: Null\nq: '~'\ne: ''\n",
      "0: zero\n1: one\n",
      "k: -1\nj: -.inf\nm: .5\n",
      "dup: 1\ndup: 2\n",
      "a:\n  b: 1\n # comment at another indent\n  c: 2\n",
      "a: 1\n\n\nb: 2\n\n",
      "  a: 1\n  b: 2\n",
      // Outside the subset (libyaml's tree or error either way).
      "a: b: c\n",
      "a: 1\n b: 2\n",
      "a:\n  b: 1\n c: 2\n",
      "a: |\n  text\n",
      "a: >\n  text\n",
      "a: &x 1\nb: *x\n",
      "a: !!str 1\n",
      "? a\n: b\n",
      "---\na: 1\n",
      "a: 1\n---\nb: 2\n",
      "a: 1\n...\n",
      "a: [1,\n  2]\n",
      "a: multi\n  line\n",
      "a: 'it''s'\n",
      "a: \"t\\tx\"\n",
      "a:\tb\n",
      "a: b\r\n",
      "a: caf\xc3\xa9\n",
      "a : b\n",
      "[a, b]\n",
      "plain\n",
      "a: [b, ]\n",
      "a: [b: c]\n",
      "a: [,]\n",
      "a: {b}\n",
      "a: {b: }\n",
      "- a\nb: c\n",
      "a:\n  - 1\n  b: 2\n",
      "a: 1 #c\nb: x#\n",
      "a: [1] # c\nb: [1]#c\n",
      "a: -\n",
      "a: - b\n",
      "a: 'unterminated\n",
      "a: @x\n",
      "a: `x\n",
      "%YAML 1.1\n---\na: 1\n",
      "a: 1\n  # indented comment\n",
      "a:\n- b\n  - c\n",
      "in0  : {type: queue, input: HOST   , entries: 1,\n    grid_size: [1, 1]}\nb: 2\n",
      "a:\n  t: [vslice: 2, broadcast: {c: 6},\n     hstack: 2]\n",
      "a: [1,\n2]\n",
      "a: [1,\n\n   2]\n",
      "- [1,\n  2]\n- 3\n",
      "- [1,\n 2]\n",
      "a: [1,\n---\n]\n",
      "a: {b: 1,\n  c: 2}  # c\nd: 3\n",
      "a: [b: 1,\n  c]\n",
      "a:\n  b: [1,\n2]\n  c: 3\n",
      "a:\n  [0-4]\n\nb:\n  [[1-0], [1-6]]\n",
      "a:\n  [1]\n  b: 2\n",
      "-\n  {a: 1}\n- 2\n",
      "a:\n[1]\n",
      "a: [1,\n\n\n 2]\n",
      "a: [1, 2,\n]\nb: {c: 1,\n }\n",
      "a: [1, 2\n  ]\nb: [x\n\n , y]\n",
      "a: [1, 2\n  3]\n",
      "a: [1, 2\n# c\n]\n",
      "a: [1, 2,,]\n",
      "a: {b: c\n }\n",
      "a: [b\n",
  };
  for (const char* text : cases) checkSame(text);
}

TEST_CASE("yaml line scanner: same tree as libyaml on generated documents") {
  // Random block documents from pieces inside and outside the subset, some
  // with a character inserted; fixed seed so a failure repeats.
  std::mt19937 rng(5);
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  const std::vector<std::string> atoms = {
      "a", "b1", "key_x", "0x1f", "-3", ".inf", "~", "null", "true", "x y", "a:b", "a#b", "(c)", "1.5e3", "\"q\"",
      "'s'", "\"a b\"", "''", "-", "?x", "&a", "*a", "!t", "|", ">", "x: y", "[1, 2]", "{a: 1}", "[]", "{}",
      "[a,b]", "{ a: 1, b: [2] }", "[a, ]", "a  ", "a # c", "#c", "[a,\n b]", "[a,\nb]", "{a: 1,\n   b: [2,\n 3]}",
      "[\n  x, y\n  ]", "[a, # c\n b]", "[a\n b]", "[v: 2, h: {c: 6}]", "[v : 2]", "[v: ]", "[a, b: [1]]",
      "{a: b: c}", "[a: b: c]"};
  std::function<void(std::string&, int, int)> block = [&](std::string& out, int indent, int depth) {
    const std::string pad(static_cast<size_t>(indent), ' ');
    if (rng() % 10 < 6 || depth > 3) {
      for (unsigned i = 0, n = 1 + rng() % 4; i < n; ++i) {
        std::string key = pick({"k", "key", "a b", "0", "x.y", "-k", "k ", "k  "}) + std::to_string(rng() % 4) +
                          pick({"", "", "", " ", "  "});
        unsigned r = rng() % 20;
        if (r < 10 || depth > 3)
          out += pad + key + ":" + pick({" ", "  ", ""}) + pick(atoms) + pick({"", "  # c", " ", "#x"}) + "\n";
        else if (r < 12)
          out += pad + key + ":" + pick({"", " ", "  # c"}) + "\n";
        else {
          out += pad + key + ":\n";
          block(out, indent + (r < 14 ? 0 : static_cast<int>(1 + rng() % 3)), depth + 1);
        }
      }
    } else {
      for (unsigned i = 0, n = 1 + rng() % 3; i < n; ++i) {
        unsigned r = rng() % 20;
        if (r < 8) out += pad + "-" + pick({" ", "  "}) + pick(atoms) + "\n";
        else if (r < 11) out += pad + "-\n";
        else if (r < 16) {
          std::string sub;
          block(sub, indent + 2, depth + 1);
          out += pad + "- " + sub.substr(static_cast<size_t>(indent) + 2);
        } else {
          out += pad + "-\n";
          block(out, indent + static_cast<int>(1 + rng() % 2), depth + 1);
        }
      }
    }
    if (rng() % 8 == 0) out += std::string(rng() % 6, ' ') + pick({"# comment", "", "  "}) + "\n";
  };
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    block(text, rng() % 4 == 0 ? 1 : 0, 0);
    if (rng() % 10 == 0) text.insert(rng() % (text.size() + 1), pick({" ", "\n", ":", "-", "#", "\t", "x"}));
    checkSame(text);
  }
}

TEST_CASE("yaml line scanner: errors come from libyaml with their positions") {
  SourceBuffer source("t.yaml", "a: 1\nb: c: d\n");
  DiagnosticEngine diags;
  auto doc = yaml::Document::parse(source, diags);
  CHECK_FALSE(doc);
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(diags.diagnostics()[0].rule == "yaml-syntax");
  CHECK(diags.diagnostics()[0].loc.line == 2); // 1-based: the second line
  checkSame(source.text());
}
