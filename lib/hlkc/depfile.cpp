#include "hlkc/depfile.hpp"

#include "support/file_io.hpp"

namespace tessera::hlkc {

std::vector<std::string> parseMakeDeps(const std::string& text) {
  std::vector<std::string> deps;
  // Skip the target part: up to the first ':' that is followed by
  // whitespace or the end (a Windows drive "C:\" never occurs here).
  size_t i = 0;
  for (; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      ++i;
      continue;
    }
    if (text[i] == ':' && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\t' ||
                           text[i + 1] == '\n' || text[i + 1] == '\\' || text[i + 1] == '\r'))
      break;
  }
  if (i >= text.size()) return deps;
  ++i;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) deps.push_back(cur);
    cur.clear();
  };
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char n = text[i + 1];
      if (n == '\n') {  // continuation
        flush();
        ++i;
        continue;
      }
      if (n == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
        flush();
        i += 2;
        continue;
      }
      if (n == ' ' || n == '#' || n == '\\') {
        cur += n;
        ++i;
        continue;
      }
      cur += c;
      continue;
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      cur += '$';
      ++i;
      continue;
    }
    if (c == '\n') {  // end of the first rule
      flush();
      break;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      flush();
      continue;
    }
    cur += c;
  }
  flush();
  return deps;
}

std::string formatMakeRule(const std::vector<std::string>& targets, const std::vector<std::string>& prerequisites) {
  std::string s;
  for (size_t i = 0; i < targets.size(); ++i) s += (i ? " " : "") + escapeMakeWord(targets[i]);
  s += ':';
  for (const std::string& p : prerequisites) s += " \\\n  " + escapeMakeWord(p);
  s += '\n';
  return s;
}

} // namespace tessera::hlkc
