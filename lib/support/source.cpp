#include "support/source.hpp"

namespace tessera {

SourceBuffer::SourceBuffer(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  // Line breaks as YAML counts them: \n, \r\n, and a lone \r.
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 == text_.size() || text_[i + 1] != '\n')))
      lineStarts_.push_back(i + 1);
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
