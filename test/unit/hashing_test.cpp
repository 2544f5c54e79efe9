// lib/support/hashing.hpp against published vectors. SHA-256 (hlkc's cache keys)
// the FIPS 180-4 example vectors.
#include "support/hashing.hpp"

#include <catch2/catch.hpp>

using tessera::support::Fnv1a64;
using tessera::support::Sha256;

TEST_CASE("SHA-256 matches the FIPS 180-4 examples", "[sha256]") {
  CHECK(Sha256::hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256::hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256::hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256::hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 gives the same digest however the input is split", "[sha256]") {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += char(i * 7 + 3);
  std::string whole = Sha256::hex(data);
  for (size_t step : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 127u}) {
    Sha256 h;
    for (size_t o = 0; o < data.size(); o += step) h.update(std::string_view(data).substr(o, step));
    CHECK(h.hexDigest() == whole);
  }
}

TEST_CASE("SHA-256 fields are length-prefixed", "[sha256]") {
  Sha256 a, b;
  a.field("ab");
  a.field("c");
  b.field("a");
  b.field("bc");
  CHECK(a.hexDigest() != b.hexDigest());
}

// Vectors of the FNV reference test suite (Fowler/Noll/Vo, fnv1a 64-bit).
TEST_CASE("FNV-1a 64 matches the reference vectors", "[fnv]") {
  CHECK(Fnv1a64::of("") == 0xcbf29ce484222325ull);
  CHECK(Fnv1a64::of("a") == 0xaf63dc4c8601ec8cull);
  CHECK(Fnv1a64::of("foobar") == 0x85944171f73967e8ull);
}
