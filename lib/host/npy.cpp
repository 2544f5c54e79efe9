// NumPy .npy reader and writer (format versions 1.0, 2.0, 3.0, as numpy's
// format documentation describes them). docs/stimulus.md lists what we accept.
#include "host/npy.hpp"

#include "support/file_io.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

namespace tessera::host {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64; // numpy aligns the data to 64 bytes
constexpr size_t kMaxDims = 4;

struct Dtype {
  char kind = 'f'; // f, i, u or b
  size_t size = 4;
};

struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<uint64_t>> shape;
};

// A small reader for the header's Python dict literal: string keys; string,
// True/False and tuple-of-int values. Errors are thrown as plain text and
// prefixed with the file name by the caller.
class HeaderParser {
public:
  explicit HeaderParser(const std::string& text) : s_(text) {}

  Header parse() {
    Header h;
    skipSpace();
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}') break;
      std::string key = string("a quoted key");
      skipSpace();
      expect(':');
      skipSpace();
      if (key == "descr") {
        if (peek() == '[') fail("structured dtypes are not supported");
        h.descr = string("the dtype string");
      } else if (key == "fortran_order") {
        h.fortran = boolean();
      } else if (key == "shape") {
        h.shape = tuple();
      } else {
        fail("unexpected key '" + key + "' in the header");
      }
      skipSpace();
      if (peek() == ',') ++i_;
      else if (peek() != '}') fail("expected ',' or '}' in the header");
    }
    return h;
  }

private:
  [[noreturn]] void fail(const std::string& what) { throw NpyError(what); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char ch) {
    if (peek() != ch) fail(std::string("malformed header: expected '") + ch + "'");
    ++i_;
  }
  std::string string(const char* what) {
    char quote = peek();
    if (quote != '\'' && quote != '"') fail(std::string("malformed header: expected ") + what);
    size_t end = s_.find(quote, i_ + 1);
    if (end == std::string::npos) fail("malformed header: unterminated string");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail("malformed header: 'fortran_order' must be True or False");
  }
  std::vector<uint64_t> tuple() {
    std::vector<uint64_t> dims;
    expect('(');
    while (true) {
      skipSpace();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("malformed header: 'shape' must be a tuple of sizes");
      uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (std::numeric_limits<uint64_t>::max() - 9) / 10) fail("shape size out of range");
        v = v * 10 + static_cast<uint64_t>(s_[i_++] - '0');
      }
      if (peek() == 'L') ++i_; // Python 2 long literal
      dims.push_back(v);
      skipSpace();
      if (peek() == ',') ++i_;
      else if (peek() != ')') fail("malformed header: expected ',' or ')' in 'shape'");
    }
    ++i_;
    return dims;
  }

  const std::string& s_;
  size_t i_ = 0;
};

Dtype parseDtype(const std::string& descr) {
  auto unsupported = [&]() { return NpyError("unsupported dtype '" + descr + "'"); };
  if (descr.size() < 3) throw unsupported();
  char order = descr[0], kind = descr[1];
  std::string digits = descr.substr(2);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 2) throw unsupported();
  size_t size = std::stoul(digits);
  bool known = (kind == 'f' && (size == 2 || size == 4 || size == 8)) ||
               ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
               (kind == 'b' && size == 1);
  if (!known) throw unsupported();
  if (size > 1) {
    if (order == '>') throw NpyError("big-endian data ('" + descr + "') is not supported");
    if (order != '<') throw unsupported(); // '|' or '=' on a multi-byte type: no byte order we can trust
  } else if (order != '|' && order != '<' && order != '>' && order != '=') {
    throw unsupported();
  }
  return {kind, size};
}

uint64_t readLE(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// IEEE binary16 to float, exactly (every half is a float).
float halfToFloat(uint16_t h) {
  float sign = (h & 0x8000) ? -1.0f : 1.0f;
  int exp = (h >> 10) & 0x1f;
  int man = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(man), -24);
  if (exp == 31) return man ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  return sign * std::ldexp(static_cast<float>(man + 1024), exp - 25);
}

float decode(const unsigned char* p, const Dtype& dt) {
  uint64_t bits = readLE(p, dt.size);
  switch (dt.kind) {
  case 'b': return bits ? 1.0f : 0.0f;
  case 'u': return static_cast<float>(bits);
  case 'i': {
    // Sign-extend from the element's width.
    unsigned shift = static_cast<unsigned>(64 - 8 * dt.size);
    return static_cast<float>(static_cast<int64_t>(bits << shift) >> shift);
  }
  default:
    if (dt.size == 2) return halfToFloat(static_cast<uint16_t>(bits));
    if (dt.size == 4) {
      uint32_t b32 = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b32, sizeof f);
      return f;
    }
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return static_cast<float>(d);
  }
}

} // namespace

formats::Tensor parseNpy(const std::string& bytes, const std::string& name) {
  auto error = [&](const std::string& what) { return NpyError(name + ": " + what); };
  if (bytes.size() < kMagicLen || bytes.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    throw error("not a .npy file (bad magic)");
  if (bytes.size() < kMagicLen + 2) throw error("truncated header");
  auto major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw error("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicLen + 2 + lenBytes;
  if (bytes.size() < prefix) throw error("truncated header");
  const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data());
  uint64_t headerLen = readLE(raw + kMagicLen + 2, lenBytes);
  if (headerLen > bytes.size() - prefix)
    throw error("truncated header: it claims " + std::to_string(headerLen) + " bytes, " +
                std::to_string(bytes.size() - prefix) + " follow");
  std::string text = bytes.substr(prefix, headerLen);

  Header h;
  try {
    h = HeaderParser(text).parse();
  } catch (const NpyError& e) {
    throw error(e.what());
  }
  if (!h.descr) throw error("the header has no 'descr'");
  if (!h.fortran) throw error("the header has no 'fortran_order'");
  if (!h.shape) throw error("the header has no 'shape'");
  Dtype dt;
  try {
    dt = parseDtype(*h.descr);
  } catch (const NpyError& e) {
    throw error(e.what());
  }
  if (*h.fortran) throw error("Fortran order is not supported");
  const auto& shape = *h.shape;
  if (shape.size() > kMaxDims)
    throw error(std::to_string(shape.size()) + " dimensions; at most " + std::to_string(kMaxDims) + " are supported");

  // Right-align: (c) -> [1][1][1][c], (r, c) -> [1][1][r][c], () -> one value.
  uint64_t dims[kMaxDims] = {1, 1, 1, 1};
  for (size_t i = 0; i < shape.size(); ++i) dims[kMaxDims - shape.size() + i] = shape[i];
  size_t available = bytes.size() - prefix - headerLen;
  uint64_t count = 1;
  bool empty = false;
  for (uint64_t d : dims) empty = empty || d == 0;
  for (uint64_t d : dims) {
    if (empty) {
      count = 0;
      break;
    }
    // Room for the byte count (count * 8) too.
    if (count > std::numeric_limits<uint64_t>::max() / 8 / d) throw error("shape too large");
    count *= d;
  }
  if (count > available / dt.size)
    throw error("truncated data: expected " + std::to_string(count * dt.size) + " bytes, found " +
                std::to_string(available));

  formats::Tensor t(static_cast<int64_t>(dims[0]), static_cast<int64_t>(dims[1]), static_cast<int64_t>(dims[2]),
                    static_cast<int64_t>(dims[3]));
  const unsigned char* data = raw + prefix + headerLen;
  for (size_t i = 0; i < count; ++i) t.data[i] = decode(data + i * dt.size, dt);
  // uint32 arrays keep their exact words too (RawUInt32 data, e.g. sparse encodings).
  if (dt.kind == 'u' && dt.size == 4) {
    t.rawBits.resize(count);
    for (size_t i = 0; i < count; ++i) t.rawBits[i] = static_cast<uint32_t>(readLE(data + i * dt.size, 4));
  }
  return t;
}

formats::Tensor readNpy(const std::string& path) {
  auto bytes = readFile(path);
  if (!bytes) throw NpyError(path + ": cannot read: " + bytes.error());
  return parseNpy(*bytes, path);
}

std::string encodeNpy(const formats::Tensor& t) {
  // Exact RawUInt32 words, when the tensor has them, are written as uint32.
  const bool words = !t.rawBits.empty() && t.rawBits.size() == t.data.size();
  std::string dict = std::string("{'descr': '") + (words ? "<u4" : "<f4") + "', 'fortran_order': False, 'shape': (" + std::to_string(t.w) + ", " +
                     std::to_string(t.z) + ", " + std::to_string(t.r) + ", " + std::to_string(t.c) + "), }";
  // Spaces, then '\n', so magic + version + length + header is a multiple of 64.
  size_t prefix = kMagicLen + 2 + 2;
  size_t unpadded = prefix + dict.size() + 1;
  size_t headerLen = dict.size() + 1 + (kAlign - unpadded % kAlign) % kAlign;
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(headerLen & 0xff);
  out += static_cast<char>((headerLen >> 8) & 0xff);
  out += dict;
  out.append(headerLen - dict.size() - 1, ' ');
  out += '\n';
  out.reserve(out.size() + t.data.size() * 4);
  for (size_t k = 0; k < t.data.size(); ++k) {
    uint32_t bits;
    if (words)
      bits = t.rawBits[k];
    else
      std::memcpy(&bits, &t.data[k], sizeof bits);
    for (int i = 0; i < 4; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  return out;
}

void writeNpy(const std::string& path, const formats::Tensor& t) {
  if (auto written = writeFileAtomic(path, encodeNpy(t)); !written)
    throw NpyError(path + ": cannot write: " + written.error());
}

} // namespace tessera::host
