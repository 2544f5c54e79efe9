// Integer formats: ties away from zero, saturation, no negative zero.
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace tessera::formats;
using tessera::DataFormat;

TEST_CASE("Int8: sign-magnitude range [-127, 127]", "[formats][int]") {
  const auto q = [](float v) { return roundToFormat(DataFormat::Int8, v); };
  CHECK(q(2.5f) == 3.0f);
  CHECK(q(-2.5f) == -3.0f);
  CHECK(q(2.49f) == 2.0f);
  CHECK(q(127.4f) == 127.0f);
  CHECK(q(127.5f) == 127.0f); // rounds to 128, saturates
  CHECK(q(300.0f) == 127.0f);
  CHECK(q(-300.0f) == -127.0f); // not -128: sign-magnitude
  CHECK(q(-0.4f) == 0.0f);
  CHECK_FALSE(std::signbit(q(-0.4f)));
  CHECK(q(std::numeric_limits<float>::quiet_NaN()) == 0.0f);
  CHECK(q(-std::numeric_limits<float>::infinity()) == -127.0f);
}

TEST_CASE("Unsigned formats saturate at both ends", "[formats][int]") {
  CHECK(roundToFormat(DataFormat::UInt8, -1.0f) == 0.0f);
  CHECK(roundToFormat(DataFormat::UInt8, 254.5f) == 255.0f);
  CHECK(roundToFormat(DataFormat::UInt8, 1000.0f) == 255.0f);
  CHECK(roundToFormat(DataFormat::UInt16, 1.5f) == 2.0f);
  CHECK(roundToFormat(DataFormat::UInt16, 65535.5f) == 65535.0f);
  CHECK(roundToFormat(DataFormat::RawUInt8, 256.0f) == 255.0f);
  CHECK(roundToFormat(DataFormat::RawUInt16, 70000.0f) == 65535.0f);
  CHECK(roundToFormat(DataFormat::RawUInt32, -5.0f) == 0.0f);
  CHECK(roundToFormat(DataFormat::RawUInt32, 123456.5f) == 123457.0f);
  // 2^32 - 1 is not a float: the nearest float is 2^32.
  CHECK(roundToFormat(DataFormat::RawUInt32, 1e10f) == 4294967296.0f);
}

TEST_CASE("Int32: sign + 31-bit magnitude, ties away, saturating", "[formats][int]") {
  CHECK(roundToFormat(DataFormat::Int32, 2.5f) == 3.0f);
  CHECK(roundToFormat(DataFormat::Int32, -2.5f) == -3.0f);
  CHECK(roundToFormat(DataFormat::Int32, 16777216.0f) == 16777216.0f);
  // +-(2^31 - 1) saturation; as floats both round to +-2^31.
  CHECK(roundToFormat(DataFormat::Int32, 3e9f) == 2147483648.0f);
  CHECK(roundToFormat(DataFormat::Int32, -3e9f) == -2147483648.0f);
}
