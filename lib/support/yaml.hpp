// YAML helpers: positions, safe loading, scalar conversion and a bounded
// YAML -> JSON conversion for values we keep as data.
#pragma once
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <nlohmann/json.hpp>
#include "support/yaml_tree.hpp"

#include <memory>

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera {

// 1-based position of a node; invalid for undefined nodes.
SourceLoc locOf(const yaml::Node& node);

// Parses the whole buffer. A syntax error becomes a `yaml-syntax` diagnostic
// and a null result. The nodes of the document live as long as it does.
std::unique_ptr<yaml::Document> parseYaml(const SourceBuffer& source, DiagnosticEngine& diags);

// Scalar conversions in the spellings netlists use.
std::optional<int64_t> parseInt64(std::string_view s);   // decimal or 0x hex, optional sign
std::optional<uint64_t> parseUInt64(std::string_view s); // decimal or 0x hex, full 64-bit range
std::optional<double> parseReal(std::string_view s);     // also accepts integers, .inf, .nan
std::optional<bool> parseBool(std::string_view s);       // true/false in any case, 1/0
bool isNullScalar(const yaml::Node& node);               // null node, `~`, `null`, `None`

// Converts a YAML value to JSON with scalars typed (int, real, bool, string).
// Visits at most `budget` nodes (decremented) so aliases cannot blow up; past
// the budget the value is replaced by null and `budget` stays 0.
nlohmann::ordered_json yamlToJson(const yaml::Node& node, size_t& budget);

} // namespace tessera
