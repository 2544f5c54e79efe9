// Source buffers and positions: every diagnostic points into one of these.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// 1-based line and column; line 0 means "no position" (e.g. a missing field).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return line != 0; }
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

class SourceBuffer {
public:
  SourceBuffer(std::string name, std::string text);
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // The text of a 1-based line without its newline; empty when out of range.
  std::string_view line(uint32_t line) const;
  uint32_t lineCount() const { return static_cast<uint32_t>(lineStarts_.size()); }

private:
  std::string name_;
  std::string text_;
  std::vector<size_t> lineStarts_;
};

} // namespace tessera
