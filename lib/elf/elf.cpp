// ELF32 little-endian reader. Every read goes through Reader, which checks
// the offset against the buffer; sizes are combined in 64 bits so that no
// offset + size can wrap.
#include "elf/elf.hpp"
#include "support/text_format.hpp"

#include <cstring>

namespace tessera::elf {
namespace {

constexpr uint32_t kEhdrSize = 52;
constexpr uint32_t kPhdrSize = 32;
constexpr uint32_t kShdrSize = 40;
constexpr uint32_t kSymSize = 16;

constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPfX = 1, kPfW = 2;
constexpr uint32_t kShtSymtab = 2, kShtStrtab = 3;
constexpr uint16_t kShnUndef = 0, kShnLoReserve = 0xff00, kShnAbs = 0xfff1, kShnXindex = 0xffff;
constexpr uint8_t kSttSection = 3, kSttFile = 4;
constexpr uint8_t kStbLocal = 0;

class Reader {
public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}
  uint64_t size() const { return b_.size(); }
  bool has(uint64_t offset, uint64_t n) const { return offset <= b_.size() && n <= b_.size() - offset; }
  // Callers check has() first.
  uint8_t u8(uint64_t o) const { return b_[o]; }
  uint16_t u16(uint64_t o) const { return static_cast<uint16_t>(b_[o] | b_[o + 1] << 8); }
  uint32_t u32(uint64_t o) const {
    return static_cast<uint32_t>(b_[o]) | static_cast<uint32_t>(b_[o + 1]) << 8 |
           static_cast<uint32_t>(b_[o + 2]) << 16 | static_cast<uint32_t>(b_[o + 3]) << 24;
  }
  const uint8_t* at(uint64_t o) const { return b_.data() + o; }

private:
  std::span<const uint8_t> b_;
};

struct Section {
  uint32_t type = 0, offset = 0, size = 0, link = 0, entsize = 0;
};

Expected<void> readSections(const Reader& r, uint32_t shoff, uint32_t shnum, std::vector<Section>& out) {
  if (!r.has(shoff, uint64_t(shnum) * kShdrSize))
    return Failure{"section header table (" + std::to_string(shnum) + " entries at offset " + support::hexLiteral(shoff) +
                           ") extends past the end of the file"};
  out.resize(shnum);
  for (uint32_t i = 0; i < shnum; ++i) {
    uint64_t o = shoff + uint64_t(i) * kShdrSize;
    Section& s = out[i];
    s.type = r.u32(o + 4);
    s.offset = r.u32(o + 16);
    s.size = r.u32(o + 20);
    s.link = r.u32(o + 24);
    s.entsize = r.u32(o + 36);
  }
  return {};
}

Expected<void> readSymbols(const Reader& r, const std::vector<Section>& sections, Image& image) {
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& sym = sections[i];
    if (sym.type != kShtSymtab) continue;
    std::string where = "symbol table (section " + std::to_string(i) + ")";
    if (sym.entsize != kSymSize) return Failure{where + " has entry size " + std::to_string(sym.entsize) + ", expected 16"};
    if (sym.size % kSymSize != 0) return Failure{where + " size " + std::to_string(sym.size) + " is not a multiple of 16"};
    if (!r.has(sym.offset, sym.size)) return Failure{where + " extends past the end of the file"};
    if (sym.link == 0 || sym.link >= sections.size())
      return Failure{where + " links to string table " + std::to_string(sym.link) + ", which does not exist"};
    const Section& str = sections[sym.link];
    if (str.type != kShtStrtab) return Failure{where + " links to section " + std::to_string(sym.link) + ", which is not a string table"};
    if (!r.has(str.offset, str.size)) return Failure{"string table (section " + std::to_string(sym.link) + ") extends past the end of the file"};
    uint32_t count = sym.size / kSymSize;
    for (uint32_t k = 1; k < count; ++k) {  // entry 0 is the null symbol
      uint64_t o = uint64_t(sym.offset) + uint64_t(k) * kSymSize;
      uint32_t name = r.u32(o);
      uint32_t value = r.u32(o + 4);
      uint8_t info = r.u8(o + 12);
      uint16_t shndx = r.u16(o + 14);
      uint8_t type = info & 0xF, bind = info >> 4;
      if (shndx == kShnUndef || type == kSttSection || type == kSttFile) continue;
      if (shndx >= kShnLoReserve && shndx != kShnAbs && shndx != kShnXindex) continue;  // COMMON etc.
      if (name == 0) continue;
      if (name >= str.size)
        return Failure{where + ": symbol " + std::to_string(k) + " has name offset " + std::to_string(name) +
                               " beyond the string table (" + std::to_string(str.size) + " bytes)"};
      const uint8_t* start = r.at(uint64_t(str.offset) + name);
      size_t maxLen = str.size - name;
      const void* nul = std::memchr(start, 0, maxLen);
      if (nul == nullptr) return Failure{where + ": name of symbol " + std::to_string(k) + " is not terminated in the string table"};
      std::string n(reinterpret_cast<const char*>(start), static_cast<const uint8_t*>(nul) - start);
      // A global definition wins over a local one of the same name; among
      // equals the first in the table stays (deterministic either way).
      auto it = image.symbols.find(n);
      if (it == image.symbols.end()) image.symbols.emplace(std::move(n), value);
      else if (bind != kStbLocal) it->second = value;
    }
  }
  return {};
}

} // namespace

Expected<Image> parseElf32(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  if (!r.has(0, 16) || std::memcmp(r.at(0), "\x7f" "ELF", 4) != 0) {
    return Failure{"not an ELF file (bad magic)"};
  }
  if (r.u8(4) != 1) {
    return Failure{r.u8(4) == 2 ? "ELF64 file: only ELF32 is supported" : "bad ELF class " + std::to_string(r.u8(4))};
  }
  if (r.u8(5) != 1) {
    return Failure{r.u8(5) == 2 ? "big-endian ELF: only little-endian is supported" : "bad ELF data encoding " + std::to_string(r.u8(5))};
  }
  if (r.u8(6) != 1) {
    return Failure{"unsupported ELF version " + std::to_string(r.u8(6))};
  }
  if (!r.has(0, kEhdrSize)) {
    return Failure{"file too short for an ELF header (" + std::to_string(bytes.size()) + " bytes, need 52)"};
  }
  uint16_t type = r.u16(16);
  if (type != 2) {
    return Failure{"not an executable (e_type " + std::to_string(type) + ", expected 2 = ET_EXEC)"};
  }
  Image image;
  image.machine = r.u16(18);
  image.entry = r.u32(24);
  uint32_t phoff = r.u32(28);
  uint32_t shoff = r.u32(32);
  uint16_t phentsize = r.u16(42);
  uint16_t phnum = r.u16(44);
  uint16_t shentsize = r.u16(46);
  uint32_t shnum = r.u16(48);

  if (phnum != 0) {
    if (phentsize != kPhdrSize) {
      return Failure{"program header entry size " + std::to_string(phentsize) + ", expected 32"};
    }
    if (!r.has(phoff, uint64_t(phnum) * kPhdrSize)) {
      return Failure{"program header table (" + std::to_string(phnum) + " entries at offset " + support::hexLiteral(phoff) +
              ") extends past the end of the file"};
    }
  }
  for (uint32_t i = 0; i < phnum; ++i) {
    uint64_t o = phoff + uint64_t(i) * kPhdrSize;
    if (r.u32(o) != kPtLoad) continue;
    uint32_t offset = r.u32(o + 4), vaddr = r.u32(o + 8), filesz = r.u32(o + 16), memsz = r.u32(o + 20),
             flags = r.u32(o + 24);
    std::string where = "segment " + std::to_string(i) + " (PT_LOAD at " + support::hexLiteral(vaddr) + ")";
    if (filesz > memsz) {
      return Failure{where + ": file size " + std::to_string(filesz) + " exceeds memory size " + std::to_string(memsz)};
    }
    if (uint64_t(vaddr) + memsz > (uint64_t(1) << 32)) {
      return Failure{where + ": " + std::to_string(memsz) + " bytes wrap around the 32-bit address space"};
    }
    if (!r.has(offset, filesz)) {
      return Failure{where + ": contents (" + std::to_string(filesz) + " bytes at offset " + support::hexLiteral(offset) +
              ") extend past the end of the file"};
    }
    Segment s;
    s.vaddr = vaddr;
    s.memSize = memsz;
    s.bytes.assign(r.at(offset), r.at(offset) + filesz);
    s.executable = (flags & kPfX) != 0;
    s.writable = (flags & kPfW) != 0;
    image.segments.push_back(std::move(s));
  }

  if (shoff != 0) {
    if (shnum != 0 && shentsize != kShdrSize) {
      return Failure{"section header entry size " + std::to_string(shentsize) + ", expected 40"};
    }
    if (shnum == 0) {
      // Extended numbering: the count is in section 0's sh_size.
      if (shentsize != kShdrSize || !r.has(shoff, kShdrSize)) {
        return Failure{"section header table at offset " + support::hexLiteral(shoff) + " extends past the end of the file"};
      }
      shnum = r.u32(shoff + 20);
    }
    std::vector<Section> sections;
    if (auto read = readSections(r, shoff, shnum, sections); !read) return Failure{read.error()};
    if (auto read = readSymbols(r, sections, image); !read) return Failure{read.error()};
  }
  return image;
}

} // namespace tessera::elf
