#include "support/source.hpp"

#include <cstring>

namespace tessera {

SourceBuffer::SourceBuffer(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  // Line breaks as YAML counts them: \n, \r\n, and a lone \r. memchr finds
  // them many bytes at a time (generated files are MBs); the byte walk is
  // only for text with a \r.
  lineStarts_.push_back(0);
  const char* const begin = text_.data();
  const char* const end = begin + text_.size();
  if (std::memchr(begin, '\r', text_.size())) {
    for (size_t i = 0; i < text_.size(); ++i)
      if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 == text_.size() || text_[i + 1] != '\n')))
        lineStarts_.push_back(i + 1);
    return;
  }
  for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p))));)
    lineStarts_.push_back(static_cast<size_t>(++p - begin));
}

std::string_view SourceBuffer::line(uint32_t line) const {
  if (line == 0 || line > lineStarts_.size()) return {};
  size_t begin = lineStarts_[line - 1];
  size_t end = line < lineStarts_.size() ? lineStarts_[line] - 1 : text_.size();
  std::string_view v(text_.data() + begin, end - begin);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n')) v.remove_suffix(1);
  return v;
}

} // namespace tessera
