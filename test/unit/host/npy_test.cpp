// Unit tests of lib/host npy: the encoder's exact bytes, parsing of
// hand-written files of several dtypes/shapes/versions, and every error.
#include "host/npy.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

using namespace tessera;
using formats::Tensor;
using host::NpyError;

namespace {

std::string le16(uint32_t v) { return {static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff)}; }
std::string le32(uint32_t v) { return le16(v & 0xffff) + le16(v >> 16); }

// A .npy file as bytes: magic, version, header length, the header text as
// given (no padding added), then `data`.
std::string npy(const std::string& header, const std::string& data, int major = 1) {
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  out += major == 1 ? le16(static_cast<uint32_t>(header.size())) : le32(static_cast<uint32_t>(header.size()));
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s += static_cast<char>(v);
  return s;
}

void checkShape(const Tensor& t, int64_t w, int64_t z, int64_t r, int64_t c) {
  CHECK(t.w == w);
  CHECK(t.z == z);
  CHECK(t.r == r);
  CHECK(t.c == c);
  CHECK(t.size() == static_cast<size_t>(w * z * r * c));
}

} // namespace

TEST_CASE("encodeNpy byte layout", "[npy]") {
  Tensor t(1, 1, 1, 2);
  t.data = {1.0f, -2.0f};
  std::string b = host::encodeNpy(t);
  // The dict is 65 characters; 10 (magic, version, length) + 65 + '\n' = 76,
  // so the data starts at 128 and the header length field holds 118.
  const std::string dictText = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 2), }";
  REQUIRE(dictText.size() == 65);
  REQUIRE(b.size() == 128 + 8);
  CHECK(b.substr(0, 6) == std::string("\x93NUMPY", 6));
  CHECK(b[6] == 1); // version 1.0
  CHECK(b[7] == 0);
  CHECK(b.substr(8, 2) == bytes({118, 0}));
  CHECK(b.substr(10, 65) == dictText);
  CHECK(b.substr(75, 52) == std::string(52, ' ')); // 118 - 65 - 1 spaces
  CHECK(b[127] == '\n');
  // 1.0f = 0x3f800000, -2.0f = 0xc0000000, little-endian.
  CHECK(b.substr(128) == bytes({0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0}));
}

TEST_CASE("encodeNpy keeps the data 64-byte aligned and round-trips", "[npy]") {
  Tensor t(2, 3, 32, 1024);
  for (size_t i = 0; i < t.size(); ++i) t.data[i] = static_cast<float>(i) * 0.5f - 7.0f;
  std::string b = host::encodeNpy(t);
  // dict of 69 characters: 10 + 69 + 1 = 80 -> data at 128, header length 118.
  CHECK(b.substr(8, 2) == bytes({118, 0}));
  CHECK(b.size() == 128 + t.size() * 4);
  Tensor back = host::parseNpy(b, "x.npy");
  checkShape(back, 2, 3, 32, 1024);
  CHECK(back.data == t.data);
}

TEST_CASE("parse float dtypes", "[npy]") {
  SECTION("<f4, 2-d") {
    // 1.5 = 0x3fc00000, -0.25 = 0xbe800000, 0, 2, 3, 4
    std::string data = le32(0x3fc00000) + le32(0xbe800000) + le32(0) + le32(0x40000000) + le32(0x40400000) +
                       le32(0x40800000);
    Tensor t = host::parseNpy(npy(dict("<f4", "(2, 3)"), data), "a.npy");
    checkShape(t, 1, 1, 2, 3);
    CHECK(t.data == std::vector<float>{1.5f, -0.25f, 0.0f, 2.0f, 3.0f, 4.0f});
  }
  SECTION("<f8, 1-d") {
    // 0.5 = 0x3fe0000000000000, -1.25 = 0xbff4000000000000
    std::string data = le32(0) + le32(0x3fe00000) + le32(0) + le32(0xbff40000);
    Tensor t = host::parseNpy(npy(dict("<f8", "(2,)"), data), "b.npy");
    checkShape(t, 1, 1, 1, 2);
    CHECK(t.data == std::vector<float>{0.5f, -1.25f});
  }
  SECTION("<f2: normal, negative, subnormal, infinity, NaN") {
    // 0x3c00 = 1, 0xc000 = -2, 0x0001 = 2^-24, 0x7c00 = inf, 0x7e00 = NaN, 0x3555 = 0.333251953125
    std::string data = le16(0x3c00) + le16(0xc000) + le16(0x0001) + le16(0x7c00) + le16(0x7e00) + le16(0x3555);
    Tensor t = host::parseNpy(npy(dict("<f2", "(6,)"), data), "c.npy");
    REQUIRE(t.size() == 6);
    CHECK(t.data[0] == 1.0f);
    CHECK(t.data[1] == -2.0f);
    CHECK(t.data[2] == std::ldexp(1.0f, -24));
    CHECK(t.data[3] == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(t.data[4]));
    CHECK(t.data[5] == 0.333251953125f); // (1024 + 341) * 2^-12
  }
  SECTION("0-d array: one value") {
    Tensor t = host::parseNpy(npy(dict("<f4", "()"), le32(0x40490fdb)), "d.npy");
    checkShape(t, 1, 1, 1, 1);
    CHECK(t.data[0] == 3.14159274101257324f); // 0x40490fdb
  }
}

TEST_CASE("parse integer and bool dtypes", "[npy]") {
  SECTION("|i1 and |u1") {
    Tensor i = host::parseNpy(npy(dict("|i1", "(3,)"), bytes({0xff, 0x7f, 0x80})), "i1.npy");
    CHECK(i.data == std::vector<float>{-1.0f, 127.0f, -128.0f});
    Tensor u = host::parseNpy(npy(dict("|u1", "(2,)"), bytes({0xff, 0x01})), "u1.npy");
    CHECK(u.data == std::vector<float>{255.0f, 1.0f});
  }
  SECTION("<i2 and <u2") {
    // -300 = 0xfed4
    Tensor i = host::parseNpy(npy(dict("<i2", "(2,)"), le16(0xfed4) + le16(300)), "i2.npy");
    CHECK(i.data == std::vector<float>{-300.0f, 300.0f});
    Tensor u = host::parseNpy(npy(dict("<u2", "(1,)"), le16(0xffff)), "u2.npy");
    CHECK(u.data == std::vector<float>{65535.0f});
  }
  SECTION("<i4, <u4, <i8, <u8") {
    Tensor i4 = host::parseNpy(npy(dict("<i4", "(2,)"), le32(0xfffffffb) + le32(70000)), "i4.npy");
    CHECK(i4.data == std::vector<float>{-5.0f, 70000.0f});
    Tensor u4 = host::parseNpy(npy(dict("<u4", "(1,)"), le32(0x80000000)), "u4.npy");
    CHECK(u4.data == std::vector<float>{2147483648.0f});
    // -2 = 0xffff_ffff_ffff_fffe; 2^40 = 0x0000_0100_0000_0000
    Tensor i8 = host::parseNpy(npy(dict("<i8", "(2,)"), le32(0xfffffffe) + le32(0xffffffff) + le32(0) + le32(0x100)),
                               "i8.npy");
    CHECK(i8.data == std::vector<float>{-2.0f, 1099511627776.0f});
    Tensor u8 = host::parseNpy(npy(dict("<u8", "(1,)"), le32(7) + le32(0)), "u8.npy");
    CHECK(u8.data == std::vector<float>{7.0f});
  }
  SECTION("|b1") {
    Tensor b = host::parseNpy(npy(dict("|b1", "(3,)"), bytes({1, 0, 1})), "b1.npy");
    CHECK(b.data == std::vector<float>{1.0f, 0.0f, 1.0f});
  }
}

TEST_CASE("shapes map right-aligned onto [w][z][r][c]", "[npy]") {
  std::string four = le32(0x3f800000) + le32(0x40000000) + le32(0x40400000) + le32(0x40800000); // 1 2 3 4
  checkShape(host::parseNpy(npy(dict("<f4", "(4,)"), four), "s1"), 1, 1, 1, 4);
  checkShape(host::parseNpy(npy(dict("<f4", "(4, 1)"), four), "s2"), 1, 1, 4, 1);
  Tensor t3 = host::parseNpy(npy(dict("<f4", "(2, 1, 2)"), four), "s3");
  checkShape(t3, 1, 2, 1, 2);
  CHECK(t3.at(0, 1, 0, 0) == 3.0f); // C order: (1, 0, 0) is the third value
  Tensor t4 = host::parseNpy(npy(dict("<f4", "(2, 1, 1, 2)"), four), "s4");
  checkShape(t4, 2, 1, 1, 2);
  CHECK(t4.at(1, 0, 0, 1) == 4.0f);
  checkShape(host::parseNpy(npy(dict("<f4", "(0,)"), ""), "empty"), 1, 1, 1, 0);
}

TEST_CASE("header variants: versions 2.0/3.0, spacing, quotes, long suffix", "[npy]") {
  std::string one = le32(0x3f800000);
  CHECK(host::parseNpy(npy(dict("<f4", "(1,)"), one, 2), "v2").data == std::vector<float>{1.0f});
  CHECK(host::parseNpy(npy(dict("<f4", "(1,)"), one, 3), "v3").data == std::vector<float>{1.0f});
  // Keys in another order, double quotes, no trailing comma, Python 2 longs, padding spaces.
  std::string h = "{ \"shape\" : (1L,1L) ,\"fortran_order\":False,'descr':'<f4'}      \n";
  CHECK(host::parseNpy(npy(h, one), "odd").data == std::vector<float>{1.0f});
  // Trailing bytes after the data are ignored (numpy reads just the array).
  CHECK(host::parseNpy(npy(dict("<f4", "(1,)"), one + "junk"), "tail").size() == 1);
}

TEST_CASE("every parse error names the file and the problem", "[npy]") {
  auto fails = [](const std::string& b, const std::string& what) {
    CHECK_THROWS_AS(host::parseNpy(b, "bad.npy"), NpyError);
    CHECK_THROWS_WITH(host::parseNpy(b, "bad.npy"), Catch::StartsWith("bad.npy: ") && Catch::Contains(what));
  };
  std::string one = le32(0x3f800000);
  fails("", "bad magic");
  fails("PK\x03\x04 this is a zip", "bad magic");
  fails(std::string("\x93NUMPY", 6), "truncated header");
  fails(std::string("\x93NUMPY\x01\x00", 8), "truncated header");
  fails(npy(dict("<f4", "(1,)"), one).substr(0, 20), "truncated header"); // header cut short
  fails(npy(dict("<f4", "(2, 2)"), one + one), "truncated data: expected 16 bytes, found 8");
  fails(npy(dict("<f4", "(3,)"), ""), "truncated data");
  fails(npy(dict("<c8", "(1,)"), one + one), "unsupported dtype '<c8'");
  fails(npy(dict("<U1", "(1,)"), one), "unsupported dtype");
  fails(npy(dict("|f4", "(1,)"), one), "unsupported dtype");
  fails(npy(dict(">f4", "(1,)"), one), "big-endian");
  fails(npy(dict("<f4", "(1, 1, 1, 1, 1)"), one), "5 dimensions; at most 4");
  fails(npy(dict("<f4", "(1,)", "True"), one), "Fortran order is not supported");
  fails(npy(dict("<f4", "(1,)"), one, 4), "unsupported .npy format version 4.0");
  fails(npy("{'descr': '<f4', 'fortran_order': False, }", one), "no 'shape'");
  fails(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", one), "structured dtypes");
  fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, x), }", one), "malformed header");
  fails(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", one), "fortran_order");
  fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", one), "unexpected key 'extra'");
  fails(npy("not a dict", one), "malformed header");
  fails(npy(dict("<f4", "(99999999999, 99999999999, 99999999999, 99999999999)"), one), "shape too large");
}

TEST_CASE("readNpy / writeNpy on disk", "[npy]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tessera-npy-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Tensor t(1, 2, 1, 3);
  t.data = {1, 2, 3, 4, 5, 6};
  std::string path = (dir / "out.npy").string();
  host::writeNpy(path, t);
  Tensor back = host::readNpy(path);
  checkShape(back, 1, 2, 1, 3);
  CHECK(back.data == t.data);
  {
    std::ifstream in(path, std::ios::binary);
    std::string onDisk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(onDisk == host::encodeNpy(t));
  }
  std::string missing = (dir / "missing.npy").string();
  CHECK_THROWS_WITH(host::readNpy(missing), Catch::StartsWith(missing + ": cannot read"));
  std::string noDir = (dir / "no" / "such" / "dir" / "x.npy").string();
  CHECK_THROWS_WITH(host::writeNpy(noDir, t), Catch::StartsWith(noDir + ": cannot write"));
  // The failed write left nothing behind.
  CHECK_FALSE(fs::exists(dir / "no"));
  fs::remove_all(dir);
}

TEST_CASE("npy: tensors with exact RawUInt32 words are written as uint32 and read back exactly", "[npy]") {
  formats::Tensor t(1, 1, 1, 3);
  t.rawBits = {0xC0000001u, 5u, 0x01000001u}; // bits 30-31 set; 2^24 + 1 is no float
  for (size_t i = 0; i < 3; ++i) t.data[i] = static_cast<float>(t.rawBits[i]);
  std::string bytes = host::encodeNpy(t);
  CHECK(bytes.find("'descr': '<u4'") != std::string::npos);
  // The data: three little-endian words after the 64-byte-aligned header.
  REQUIRE(bytes.size() % 64 == 12);
  const size_t data = bytes.size() - 12;
  CHECK(static_cast<unsigned char>(bytes[data]) == 0x01);
  CHECK(static_cast<unsigned char>(bytes[data + 3]) == 0xC0);
  formats::Tensor back = host::parseNpy(bytes, "t.npy");
  CHECK(back.rawBits == t.rawBits);
  CHECK(back.data[1] == 5.0f);
}
