// Spellings shared by every tool that writes text: hex literals in
// diagnostics and artifacts, YAML scalars in generated YAML files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::support {

// `0x` and lowercase hex digits, no padding: how artifacts and messages
// spell addresses and sizes.
std::string hexLiteral(uint64_t value);

// A YAML scalar that every YAML 1.1/1.2 reader reads back as this string:
// plain when it cannot be misread (not a boolean/null word, not numeric),
// else double-quoted with escapes. forceQuotes quotes it regardless.
std::string yamlScalar(std::string_view text, bool forceQuotes = false);

// A float as YAML: the shortest decimal text that reads back to the same
// float (always with a '.' or exponent), or .nan / .inf / -.inf.
std::string yamlFloat(float value);

} // namespace tessera::support
