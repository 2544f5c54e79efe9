// Expected<T>, the failure channel at library boundaries, and the file IO and
// tool-output helpers that return it.
#include "support/expected.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <sstream>
#include <unistd.h>

using namespace tessera;

namespace {

Expected<int> half(int v) {
  if (v % 2) return Failure{std::to_string(v) + " is odd"};
  return v / 2;
}

std::filesystem::path scratchDir() {
  auto dir = std::filesystem::temp_directory_path() / ("tessera-expected-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

} // namespace

TEST_CASE("Expected: a value or a failure's message", "[support][expected]") {
  auto four = half(8);
  REQUIRE(four.ok());
  CHECK(static_cast<bool>(four));
  CHECK(*four == 4);
  auto odd = half(3);
  CHECK_FALSE(odd.ok());
  CHECK_FALSE(static_cast<bool>(odd));
  CHECK(odd.error() == "3 is odd");
  CHECK_FALSE(half(5).toOptional().has_value());
  CHECK(half(6).toOptional() == std::optional<int>(3));

  Expected<std::unique_ptr<std::string>> owned(std::make_unique<std::string>("abc"));
  REQUIRE(owned);
  CHECK((*owned)->size() == 3);
  std::unique_ptr<std::string> moved = std::move(*owned);
  CHECK(*moved == "abc");

  Expected<std::string> text(std::string("xy"));
  CHECK(text->size() == 2);

  Expected<void> done;
  CHECK(done.ok());
  Expected<void> failed = Failure{"no"};
  CHECK_FALSE(failed);
  CHECK(failed.error() == "no");
}

TEST_CASE("readFile and writeFileAtomic report failures through Expected", "[support][expected]") {
  const auto dir = scratchDir();
  const std::string path = (dir / "a.txt").string();
  REQUIRE(writeFileAtomic(path, "hello\n").ok());
  auto text = readFile(path);
  REQUIRE(text);
  CHECK(*text == "hello\n");

  auto missing = readFile((dir / "none.txt").string());
  REQUIRE_FALSE(missing);
  CHECK(missing.error() == "No such file or directory");
  auto isDir = readFile(dir.string());
  REQUIRE_FALSE(isDir);
  CHECK(isDir.error() == "is a directory");
  auto noDir = writeFileAtomic((dir / "no" / "such" / "x").string(), "x");
  REQUIRE_FALSE(noDir);
  CHECK(noDir.error() == "No such file or directory");

  REQUIRE(writeIfChanged(path, "hello\n").ok());
  REQUIRE(writeIfChanged(path, "bye\n").ok());
  CHECK(*readFile(path) == "bye\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("writeDepfile: one make rule, escaped, empty prerequisites left out", "[support][depfile]") {
  const auto dir = scratchDir();
  const std::string depfile = (dir / "out.d").string();
  REQUIRE(writeDepfile(depfile, {"out/a b.hex", "out/c.hex"}, {"in#1.yaml", "", "dev$.yaml"}).ok());
  CHECK(*readFile(depfile) == "out/a\\ b.hex out/c.hex: in\\#1.yaml dev$$.yaml\n");
  REQUIRE(writeDepfile(depfile, {"x"}, {}).ok());
  CHECK(*readFile(depfile) == "x:\n");
  CHECK_FALSE(writeDepfile((dir / "no" / "x.d").string(), {"x"}, {"y"}).ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("toolError and toolWarning: LLVM-style prefixes", "[support][tool-output]") {
  std::ostringstream err;
  toolError(err, "pipegen") << "no input\n";
  toolWarning(err, "out.yaml") << "stale\n";
  CHECK(err.str() == "pipegen: error: no input\nout.yaml: warning: stale\n");
}
