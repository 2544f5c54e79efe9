#include "support/text_format.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tessera::support {

std::string hexLiteral(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

namespace {

bool isPlainChar(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
         ch == '/' || ch == '-';
}

// Plain text a YAML reader would still turn into a boolean, a null or a number.
bool readsAsNonString(std::string_view s) {
  static constexpr std::array<std::string_view, 10> kWords = {"true", "false", "yes", "no", "on",
                                                              "off",  "null",  "y",   "n",  "~"};
  std::string lower;
  for (char ch : s) lower += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  for (std::string_view w : kWords)
    if (lower == w) return true;
  bool numeric = true;
  for (char ch : s) numeric &= (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
  return numeric || s.front() == '-' || s.front() == '.';
}

} // namespace

std::string yamlScalar(std::string_view s, bool forceQuotes) {
  bool plain = !s.empty() && !forceQuotes;
  for (char ch : s) plain &= isPlainChar(ch);
  if (plain && !readsAsNonString(s)) return std::string(s);
  std::string q = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      q += '\\';
      q += static_cast<char>(ch);
    } else if (ch < 0x20 || ch == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", ch);
      q += buf;
    } else {
      q += static_cast<char>(ch);
    }
  }
  return q + "\"";
}

std::string yamlFloat(float v) {
  if (v != v) return ".nan";
  if (v == std::numeric_limits<float>::infinity()) return ".inf";
  if (v == -std::numeric_limits<float>::infinity()) return "-.inf";
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

} // namespace tessera::support
