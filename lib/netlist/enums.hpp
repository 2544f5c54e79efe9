// Closed vocabularies of the netlist format and their spellings.
#pragma once
#include "device/arch.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace tessera::netlist {

using tessera::Arch;

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

// HiFi2_A/HiFi2_B: HiFi2 with the two fidelity phases chosen explicitly (BUDA spellings).
enum class MathFidelity { LoFi, HiFi2, HiFi2_A, HiFi2_B, HiFi3, HiFi4 };
std::optional<MathFidelity> parseMathFidelity(std::string_view s);
std::string_view mathFidelityName(MathFidelity m);

enum class UblockOrder { R, C };
std::optional<UblockOrder> parseUblockOrder(std::string_view s);
std::string_view ublockOrderName(UblockOrder o);

enum class IoType { Queue, Ram };
std::optional<IoType> parseIoType(std::string_view s);
std::string_view ioTypeName(IoType t);

enum class IoLocation { Dram, Host };
std::optional<IoLocation> parseIoLocation(std::string_view s);
std::string_view ioLocationName(IoLocation l);

enum class TmKind { Broadcast, TileBroadcast, Hslice, Hstack, Vslice, Vstack, Transpose, Pad };
std::optional<TmKind> parseTmKind(std::string_view s);
std::string_view tmKindName(TmKind k);

enum class VarOpcode { Set, Add, Mul, Inc, IncWrap };
std::optional<VarOpcode> parseVarOpcode(std::string_view s);
std::string_view varOpcodeName(VarOpcode o);

} // namespace tessera::netlist
