// lib/elf: parseElf32 on ELF images built field by field here, on every
// truncation and on targeted and random corruptions (an error, never a crash
// or an out-of-bounds read), and on an executable linked by ld.lld-14.
#include "elf/elf.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using tessera::elf::Image;
using tessera::elf::parseElf32;

namespace {

// A little-endian byte buffer written field by field.
struct Bytes {
  std::vector<uint8_t> b;
  void at(size_t o, size_t n) {
    if (b.size() < o + n) b.resize(o + n, 0);
  }
  void u8(size_t o, uint8_t v) { at(o, 1), b[o] = v; }
  void u16(size_t o, uint16_t v) { at(o, 2), b[o] = uint8_t(v), b[o + 1] = uint8_t(v >> 8); }
  void u32(size_t o, uint32_t v) {
    at(o, 4);
    for (int i = 0; i < 4; ++i) b[o + i] = uint8_t(v >> (8 * i));
  }
  void str(size_t o, const std::string& s) {
    at(o, s.size());
    for (size_t i = 0; i < s.size(); ++i) b[o + i] = uint8_t(s[i]);
  }
};

// Layout of the sample executable (offsets in the file):
constexpr size_t kPhoff = 52;        // 3 program headers x 32
constexpr size_t kText = 148;        // 8 bytes of code
constexpr size_t kStrtab = 156;      // symbol names
constexpr std::string_view kNames("\0_start\0counter\0hlks.cpp\0__stack_top\0undef\0", 44);
constexpr size_t kSymtab = 200;      // 6 symbols x 16
constexpr size_t kShoff = 296;       // 5 section headers x 40, last in the file
constexpr uint32_t kNameStart = 1, kNameCounter = 8, kNameFile = 16, kNameStack = 25, kNameUndef = 37;

void putSym(Bytes& e, size_t index, uint32_t name, uint32_t value, uint32_t size, uint8_t bind, uint8_t type,
            uint16_t shndx) {
  size_t o = kSymtab + 16 * index;
  e.u32(o, name);
  e.u32(o + 4, value);
  e.u32(o + 8, size);
  e.u8(o + 12, uint8_t(bind << 4 | type));
  e.u8(o + 13, 0);
  e.u16(o + 14, shndx);
}

void putSection(Bytes& e, size_t index, uint32_t type, uint32_t offset, uint32_t size, uint32_t link,
                uint32_t entsize) {
  size_t o = kShoff + 40 * index;
  e.u32(o + 4, type);
  e.u32(o + 16, offset);
  e.u32(o + 20, size);
  e.u32(o + 24, link);
  e.u32(o + 36, entsize);
}

// A RISC-V executable shaped like a kernel ELF: code at 0x4000, bss in local
// memory, a PT_NOTE (ignored), and a symbol table.
Bytes sampleElf() {
  Bytes e;
  e.str(0, "\x7f" "ELF");
  e.u8(4, 1);  // ELFCLASS32
  e.u8(5, 1);  // ELFDATA2LSB
  e.u8(6, 1);  // EV_CURRENT
  e.u16(16, 2);     // ET_EXEC
  e.u16(18, 243);   // EM_RISCV
  e.u32(20, 1);
  e.u32(24, 0x4000);  // entry
  e.u32(28, kPhoff);
  e.u32(32, kShoff);
  e.u16(40, 52);
  e.u16(42, 32);
  e.u16(44, 3);
  e.u16(46, 40);
  e.u16(48, 5);
  e.u16(50, 4);
  // PT_LOAD code: R X
  e.u32(kPhoff + 0, 1);
  e.u32(kPhoff + 4, kText);
  e.u32(kPhoff + 8, 0x4000);
  e.u32(kPhoff + 12, 0x4000);
  e.u32(kPhoff + 16, 8);
  e.u32(kPhoff + 20, 8);
  e.u32(kPhoff + 24, 5);
  // PT_NOTE: skipped by the reader
  e.u32(kPhoff + 32, 4);
  e.u32(kPhoff + 36, 0xFFFFFF00);  // nonsense offset: not a PT_LOAD, never read
  e.u32(kPhoff + 48, 0x100);
  // PT_LOAD bss: R W, no file bytes
  e.u32(kPhoff + 64, 1);
  e.u32(kPhoff + 68, 0);
  e.u32(kPhoff + 72, 0xFFB00000);
  e.u32(kPhoff + 76, 0xFFB00000);
  e.u32(kPhoff + 80, 0);
  e.u32(kPhoff + 84, 64);
  e.u32(kPhoff + 88, 6);
  // Code: lui sp, 0xffb01; j .
  e.u32(kText, 0xffb01137);
  e.u32(kText + 4, 0x0000006f);
  e.str(kStrtab, std::string(kNames));
  putSym(e, 0, 0, 0, 0, 0, 0, 0);
  putSym(e, 1, kNameFile, 0, 0, 0, 4, 0xfff1);       // STT_FILE: not a symbol we keep
  putSym(e, 2, kNameStart, 0x4000, 8, 1, 2, 1);      // global FUNC in .text
  putSym(e, 3, kNameCounter, 0xFFB00010, 4, 0, 1, 2); // local OBJECT in .bss
  putSym(e, 4, kNameStack, 0xFFB01000, 0, 1, 0, 0xfff1); // absolute (linker script)
  putSym(e, 5, kNameUndef, 0, 0, 1, 0, 0);           // undefined: dropped
  putSection(e, 0, 0, 0, 0, 0, 0);
  putSection(e, 1, 1, kText, 8, 0, 0);               // .text PROGBITS
  putSection(e, 2, 8, 0, 64, 0, 0);                  // .bss NOBITS
  putSection(e, 3, 2, kSymtab, 6 * 16, 4, 16);       // .symtab -> 4
  putSection(e, 4, 3, kStrtab, uint32_t(kNames.size()), 0, 0);  // .strtab
  REQUIRE(e.b.size() == kShoff + 5 * 40);
  return e;
}

tessera::Expected<Image> parse(const Bytes& e) { return parseElf32(e.b); }

// Parses and expects a failure whose message contains `needle`.
void expectError(const Bytes& e, const std::string& needle) {
  auto image = parse(e);
  REQUIRE_FALSE(image.ok());
  INFO("error: " << image.error());
  CHECK(image.error().find(needle) != std::string::npos);
}

} // namespace

TEST_CASE("parseElf32 reads entry, PT_LOAD segments and defined symbols", "[elf]") {
  Bytes e = sampleElf();
  auto image = parse(e);
  REQUIRE(image.ok());
  CHECK(image->entry == 0x4000);
  CHECK(image->machine == 243);
  REQUIRE(image->segments.size() == 2);
  const auto& code = image->segments[0];
  CHECK(code.vaddr == 0x4000);
  CHECK(code.memSize == 8);
  CHECK(code.bytes == std::vector<uint8_t>{0x37, 0x11, 0xb0, 0xff, 0x6f, 0, 0, 0});
  CHECK(code.executable);
  CHECK_FALSE(code.writable);
  const auto& bss = image->segments[1];
  CHECK(bss.vaddr == 0xFFB00000);
  CHECK(bss.memSize == 64);
  CHECK(bss.bytes.empty());
  CHECK_FALSE(bss.executable);
  CHECK(bss.writable);
  std::map<std::string, uint32_t> expected{{"_start", 0x4000}, {"counter", 0xFFB00010}, {"__stack_top", 0xFFB01000}};
  CHECK(image->symbols == expected);
}

TEST_CASE("parseElf32 accepts an executable without sections", "[elf]") {
  Bytes e = sampleElf();
  e.u32(32, 0);  // e_shoff
  e.u16(48, 0);  // e_shnum
  e.b.resize(kStrtab);
  auto image = parse(e);
  REQUIRE(image.ok());
  CHECK(image->segments.size() == 2);
  CHECK(image->symbols.empty());
}

TEST_CASE("parseElf32 rejects every truncation of a valid file", "[elf]") {
  Bytes e = sampleElf();
  for (size_t n = 0; n < e.b.size(); ++n) {
    auto image = parseElf32(std::span<const uint8_t>(e.b.data(), n));
    INFO("prefix of " << n << " bytes");
    REQUIRE_FALSE(image.ok());
    CHECK_FALSE(image.error().empty());
  }
}

TEST_CASE("parseElf32 names what is wrong with a corrupt header", "[elf]") {
  Bytes e = sampleElf();
  SECTION("magic") {
    e.u8(1, 'X');
    expectError(e, "bad magic");
  }
  SECTION("ELF64") {
    e.u8(4, 2);
    expectError(e, "ELF64");
  }
  SECTION("big-endian") {
    e.u8(5, 2);
    expectError(e, "big-endian");
  }
  SECTION("version") {
    e.u8(6, 7);
    expectError(e, "version");
  }
  SECTION("relocatable object") {
    e.u16(16, 1);
    expectError(e, "not an executable");
  }
  SECTION("program header entry size") {
    e.u16(42, 56);
    expectError(e, "program header entry size 56");
  }
  SECTION("program headers past the end") {
    e.u32(28, uint32_t(e.b.size()) - 40);
    expectError(e, "program header table");
  }
  SECTION("program header offset near 2^32") {
    e.u32(28, 0xFFFFFFF0u);
    expectError(e, "program header table");
  }
  SECTION("section header entry size") {
    e.u16(46, 64);
    expectError(e, "section header entry size 64");
  }
  SECTION("section headers past the end") {
    e.u16(48, 6);
    expectError(e, "section header table");
  }
}

TEST_CASE("parseElf32 names what is wrong with a corrupt segment", "[elf]") {
  Bytes e = sampleElf();
  SECTION("file size beyond memory size") {
    e.u32(kPhoff + 16, 16);
    expectError(e, "exceeds memory size");
  }
  SECTION("contents past the end of the file") {
    e.u32(kPhoff + 4, uint32_t(e.b.size()) - 4);
    expectError(e, "extend past the end");
  }
  SECTION("offset + size wraps in 32 bits") {
    e.u32(kPhoff + 4, 0xFFFFFFFCu);
    expectError(e, "extend past the end");
  }
  SECTION("address range wraps around 2^32") {
    e.u32(kPhoff + 64 + 8, 0xFFFFFFF0u);
    expectError(e, "wrap around");
  }
}

TEST_CASE("parseElf32 names what is wrong with a corrupt symbol table", "[elf]") {
  Bytes e = sampleElf();
  SECTION("entry size") {
    putSection(e, 3, 2, kSymtab, 6 * 16, 4, 24);
    expectError(e, "entry size 24");
  }
  SECTION("size not a multiple of the entry size") {
    putSection(e, 3, 2, kSymtab, 6 * 16 + 3, 4, 16);
    expectError(e, "not a multiple of 16");
  }
  SECTION("past the end of the file") {
    putSection(e, 3, 2, kSymtab, 0x10000, 4, 16);
    expectError(e, "symbol table (section 3) extends past the end");
  }
  SECTION("string table link out of range") {
    putSection(e, 3, 2, kSymtab, 6 * 16, 9, 16);
    expectError(e, "does not exist");
  }
  SECTION("link to a section that is not a string table") {
    putSection(e, 3, 2, kSymtab, 6 * 16, 1, 16);
    expectError(e, "not a string table");
  }
  SECTION("string table past the end of the file") {
    putSection(e, 4, 3, kStrtab, 0xFFFFFF00u, 0, 0);
    expectError(e, "string table (section 4) extends past the end");
  }
  SECTION("name offset beyond the string table") {
    putSym(e, 2, 500, 0x4000, 8, 1, 2, 1);
    expectError(e, "name offset 500");
  }
  SECTION("name not terminated") {
    // Shrink the string table to end just before the NUL of "__stack_top".
    putSection(e, 4, 3, kStrtab, kNameStack + 11, 0, 0);
    expectError(e, "not terminated");
  }
}

TEST_CASE("parseElf32 survives random corruption", "[elf]") {
  const Bytes good = sampleElf();
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;  // LCG: deterministic
    return state >> 8;
  };
  int parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    Bytes e = good;
    int flips = 1 + int(next() % 4);
    for (int f = 0; f < flips; ++f) {
      size_t at = next() % e.b.size();
      e.b[at] = uint8_t(next());
    }
    if (next() % 4 == 0) e.b.resize(next() % e.b.size());
    auto image = parse(e);
    if (image) ++parsed;
    else CHECK_FALSE(image.error().empty());
  }
  CHECK(parsed > 0);  // some corruptions hit bytes the reader does not use
}

TEST_CASE("parseElf32 reads an executable linked by ld.lld-14", "[elf][toolchain]") {
  const char* clang = "/usr/bin/clang-14";
  const char* lld = "/usr/bin/ld.lld-14";
  if (::access(clang, X_OK) != 0 || ::access(lld, X_OK) != 0) {
    WARN("clang-14 / ld.lld-14 not installed: skipped");
    return;
  }
  char dirTemplate[] = "/tmp/tessera-elf-test-XXXXXX";
  REQUIRE(::mkdtemp(dirTemplate) != nullptr);
  std::string dir = dirTemplate;
  {
    std::ofstream s(dir + "/t.s");
    s << "  .section .text.start,\"ax\",@progbits\n"
         "  .globl _start\n"
         "_start:\n"
         "  lui sp, %hi(__stack_top)\n"
         "  j _start\n"
         "  .section .rodata\n"
         "  .globl table\n"
         "table: .word 1, 2, 3\n"
         "  .bss\n"
         "  .globl buffer\n"
         "buffer: .zero 40\n";
    std::ofstream l(dir + "/t.ld");
    l << "ENTRY(_start)\n"
         "__stack_top = 0xFFB01000;\n"
         "PHDRS { code PT_LOAD FLAGS(5); data PT_LOAD FLAGS(6); }\n"
         "SECTIONS {\n"
         "  . = 0x9000;\n"
         "  .text : { *(.text.start) *(.text*) } :code\n"
         "  .rodata : { *(.rodata*) } :code\n"
         "  . = 0xFFB00000;\n"
         "  .bss (NOLOAD) : { *(.bss*) } :data\n"
         "}\n";
  }
  std::string cmd = std::string(clang) + " --target=riscv32-unknown-elf -march=rv32im -mno-relax -c " + dir +
                    "/t.s -o " + dir + "/t.o && " + lld + " -T " + dir + "/t.ld " + dir + "/t.o -o " + dir + "/t.elf";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(dir + "/t.elf", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  std::system(("rm -rf " + dir).c_str());

  auto image = parseElf32({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  INFO("error: " << (image ? "" : image.error()));
  REQUIRE(image.ok());
  CHECK(image->machine == 243);
  CHECK(image->entry == 0x9000);
  REQUIRE(image->segments.size() == 2);
  CHECK(image->segments[0].vaddr == 0x9000);
  CHECK(image->segments[0].executable);
  CHECK(image->segments[0].bytes.size() == 8 + 12);  // two instructions + the table
  CHECK(image->segments[0].bytes[8] == 1);
  CHECK(image->segments[1].vaddr == 0xFFB00000);
  CHECK(image->segments[1].memSize == 40);
  CHECK(image->segments[1].bytes.empty());
  CHECK(image->symbols.at("_start") == 0x9000);
  CHECK(image->symbols.at("table") == 0x9008);
  CHECK(image->symbols.at("buffer") == 0xFFB00000);
  CHECK(image->symbols.at("__stack_top") == 0xFFB01000);
}
