#include "formats/data_format.hpp"

#include "support/enum_names.hpp"

#include <array>
#include <utility>

namespace tessera {
namespace {

using support::lookup;
using support::nameOf;

constexpr std::array<std::pair<std::string_view, DataFormat>, 18> kFormats{{
    {"Float32", DataFormat::Float32}, {"Float16", DataFormat::Float16}, {"Float16_b", DataFormat::Float16_b},
    {"Bfp8", DataFormat::Bfp8}, {"Bfp8_b", DataFormat::Bfp8_b}, {"Bfp4", DataFormat::Bfp4},
    {"Bfp4_b", DataFormat::Bfp4_b}, {"Bfp2", DataFormat::Bfp2}, {"Bfp2_b", DataFormat::Bfp2_b},
    {"Lf8", DataFormat::Lf8}, {"Fp8_e4m3", DataFormat::Fp8_e4m3}, {"Int8", DataFormat::Int8},
    {"Int32", DataFormat::Int32}, {"UInt8", DataFormat::UInt8}, {"UInt16", DataFormat::UInt16},
    {"RawUInt8", DataFormat::RawUInt8}, {"RawUInt16", DataFormat::RawUInt16}, {"RawUInt32", DataFormat::RawUInt32},
}};
constexpr std::array<std::pair<std::string_view, UblockOrder>, 2> kOrders{{{"r", UblockOrder::R}, {"c", UblockOrder::C}}};

} // namespace

std::optional<DataFormat> parseDataFormat(std::string_view s) { return lookup(kFormats, s); }
std::string_view dataFormatName(DataFormat f) { return nameOf(kFormats, f); }

bool isIntegerFormat(DataFormat f) {
  return f == DataFormat::Int8 || f == DataFormat::Int32 || f == DataFormat::UInt8 || f == DataFormat::UInt16;
}
bool isRawFormat(DataFormat f) {
  return f == DataFormat::RawUInt8 || f == DataFormat::RawUInt16 || f == DataFormat::RawUInt32;
}
unsigned untilizedDatumBytes(DataFormat f) {
  switch (f) {
  case DataFormat::Float32: case DataFormat::Int32: case DataFormat::RawUInt32: return 4;
  case DataFormat::Float16: case DataFormat::Float16_b: case DataFormat::UInt16: case DataFormat::RawUInt16: return 2;
  case DataFormat::Lf8: case DataFormat::Fp8_e4m3: case DataFormat::Int8: case DataFormat::UInt8:
  case DataFormat::RawUInt8: return 1;
  default: return 0;
  }
}

bool isBfpFormat(DataFormat f) {
  switch (f) {
  case DataFormat::Bfp8: case DataFormat::Bfp8_b: case DataFormat::Bfp4: case DataFormat::Bfp4_b:
  case DataFormat::Bfp2: case DataFormat::Bfp2_b:
    return true;
  default:
    return false;
  }
}
bool isExponentBFormat(DataFormat f) {
  return f == DataFormat::Float16_b || f == DataFormat::Bfp8_b || f == DataFormat::Bfp4_b || f == DataFormat::Bfp2_b;
}

unsigned tileSizeBytes(DataFormat f) {
  // 1024 datums + 32 bytes of header (16 used, 16 padding), plus 64 bytes of
  // shared exponents (one per 16 datums) for the block formats; Int8 keeps the
  // exponent section like Bfp8, as in BUDA.
  constexpr unsigned kHeader = 32, kExponents = 64;
  switch (f) {
  case DataFormat::Float32: case DataFormat::Int32: case DataFormat::RawUInt32: return 4096 + kHeader;
  case DataFormat::Float16: case DataFormat::Float16_b: case DataFormat::UInt16: case DataFormat::RawUInt16:
    return 2048 + kHeader;
  case DataFormat::Bfp8: case DataFormat::Bfp8_b: case DataFormat::Int8: case DataFormat::UInt8:
    return 1024 + kExponents + kHeader;
  case DataFormat::Lf8: case DataFormat::Fp8_e4m3: case DataFormat::RawUInt8: return 1024 + kHeader;
  case DataFormat::Bfp4: case DataFormat::Bfp4_b: return 512 + kExponents + kHeader;
  case DataFormat::Bfp2: case DataFormat::Bfp2_b: return 256 + kExponents + kHeader;
  }
  return 0;
}
std::optional<UblockOrder> parseUblockOrder(std::string_view s) { return lookup(kOrders, s); }
std::string_view ublockOrderName(UblockOrder o) { return nameOf(kOrders, o); }

} // namespace tessera
