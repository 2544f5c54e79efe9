#include "support/yaml.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace tessera {

SourceLoc locOf(const yaml::Node& node) {
  if (!node.IsDefined()) return {};
  yaml::Position m = node.Mark();
  if (m.line < 0 || m.column < 0) return {};
  return {static_cast<uint32_t>(m.line) + 1, static_cast<uint32_t>(m.column) + 1};
}

std::unique_ptr<yaml::Document> parseYaml(const SourceBuffer& source, DiagnosticEngine& diags) {
  auto doc = yaml::Document::parse(source, diags);
  return doc ? std::move(*doc) : nullptr;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Unsigned magnitude in decimal or 0x hex; nullopt on overflow or junk.
std::optional<uint64_t> parseMagnitude(std::string_view s) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

} // namespace

std::optional<uint64_t> parseUInt64(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  return parseMagnitude(s);
}

std::optional<int64_t> parseInt64(std::string_view s) {
  s = trim(s);
  bool neg = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  auto mag = parseMagnitude(s);
  if (!mag) return std::nullopt;
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (neg) {
    if (*mag > kMax + 1) return std::nullopt;
    return *mag == kMax + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(*mag);
  }
  if (*mag > kMax) return std::nullopt;
  return static_cast<int64_t>(*mag);
}

std::optional<double> parseReal(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  std::string lower;
  for (char ch : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == ".inf" || lower == "+.inf") return std::numeric_limits<double>::infinity();
  if (lower == "-.inf") return -std::numeric_limits<double>::infinity();
  if (lower == ".nan") return std::numeric_limits<double>::quiet_NaN();
  if (auto i = parseInt64(s)) return static_cast<double>(*i);
  // strtod accepts hex floats and "inf"/"nan" words; YAML reals are decimal.
  std::string text(s);
  for (char ch : text)
    if (!(std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' ||
          ch == '-'))
      return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

namespace {
// `s` equals the lowercase word `lower` ignoring case (as std::tolower in
// the C locale; no copy: generated files have a bool on every other line).
bool equalsIgnoringCase(std::string_view s, std::string_view lower) {
  return s.size() == lower.size() && std::equal(s.begin(), s.end(), lower.begin(), [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
         });
}
} // namespace

std::optional<bool> parseBool(std::string_view s) {
  s = trim(s);
  if (s == "1" || equalsIgnoringCase(s, "true")) return true;
  if (s == "0" || equalsIgnoringCase(s, "false")) return false;
  return std::nullopt;
}

bool isNullScalar(const yaml::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return true;
  if (!node.IsScalar() || node.Tag() == "!") return false; // quoted strings are never null
  const std::string& s = node.Scalar();
  return s == "~" || s == "null" || s == "Null" || s == "NULL" || s == "None";
}

nlohmann::ordered_json yamlToJson(const yaml::Node& node, size_t& budget) {
  if (budget == 0) return nullptr;
  --budget;
  switch (node.Type()) {
  case yaml::NodeType::Sequence: {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& item : node) {
      if (budget == 0) break;
      arr.push_back(yamlToJson(item, budget));
    }
    return arr;
  }
  case yaml::NodeType::Map: {
    auto obj = nlohmann::ordered_json::object();
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (budget == 0) break;
      std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string("<complex key>");
      obj[key] = yamlToJson(it->second, budget); // duplicate keys: the later one wins, as in BUDA
    }
    return obj;
  }
  case yaml::NodeType::Scalar: {
    const std::string& s = node.Scalar();
    if (node.Tag() == "!") return s; // quoted: always a string
    if (isNullScalar(node)) return nullptr;
    if (auto i = parseInt64(s)) return *i;
    if (auto u = parseUInt64(s)) return *u;
    std::string lower;
    for (char ch : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "true") return true;
    if (lower == "false") return false;
    if (auto r = parseReal(s); r && std::isfinite(*r)) return *r;
    return s;
  }
  default:
    return nullptr;
  }
}

} // namespace tessera
