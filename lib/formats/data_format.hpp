// Data formats (the tile encodings of L1, DRAM and the host) and the order of
// ublocks in an mblock: the vocabulary of lib/formats, shared by the netlist
// model (netlist/enums.hpp re-exports it) and every lower layer.
#pragma once
#include <optional>
#include <string_view>

namespace tessera {

enum class DataFormat {
  Float32, Float16, Float16_b,
  Bfp8, Bfp8_b, Bfp4, Bfp4_b, Bfp2, Bfp2_b,
  Lf8, Fp8_e4m3,
  Int8, Int32, UInt8, UInt16,
  RawUInt8, RawUInt16, RawUInt32,
};
std::optional<DataFormat> parseDataFormat(std::string_view s);
std::string_view dataFormatName(DataFormat f);
bool isIntegerFormat(DataFormat f);  // Int8, Int32, UInt8, UInt16
bool isRawFormat(DataFormat f);      // RawUInt*
bool isBfpFormat(DataFormat f);
bool isExponentBFormat(DataFormat f); // the `_b` family: 8-bit exponent (Float16_b, Bfp*_b)
// Bytes of one 32x32 tile in L1/DRAM including the 16-byte header, padded as in BUDA.
unsigned tileSizeBytes(DataFormat f);
// Bytes of one datum in an untilized (row-major, headerless) output: what the
// packer writes per value (Int8: 1, no exponent section); 0 for the Bfp
// formats, which cannot be untilized.
unsigned untilizedDatumBytes(DataFormat f);

enum class UblockOrder { R, C };
std::optional<UblockOrder> parseUblockOrder(std::string_view s);
std::string_view ublockOrderName(UblockOrder o);

} // namespace tessera
