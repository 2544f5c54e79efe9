// Make-syntax dependency files: reading what clang -MD writes, writing ours.
#pragma once
#include <string>
#include <vector>

namespace tessera::hlkc {

// The prerequisites of the (first) rule in a make depfile as clang writes
// it: backslash-newline continuations, `\ ` for spaces, `$$` for `$`.
std::vector<std::string> parseMakeDeps(const std::string& text);

// One make rule "targets: prerequisites" with make's escaping, one
// prerequisite per continued line.
std::string formatMakeRule(const std::vector<std::string>& targets, const std::vector<std::string>& prerequisites);

} // namespace tessera::hlkc
