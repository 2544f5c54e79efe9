// Closed vocabularies of the netlist format and their spellings. Data formats
// and ublock orders belong to lib/formats (formats/data_format.hpp): the lower
// layers use them without the netlist model.
#pragma once
#include "device/arch.hpp"
#include "formats/data_format.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace tessera::netlist {

using tessera::Arch;

using tessera::DataFormat;
using tessera::parseDataFormat;
using tessera::dataFormatName;
using tessera::isIntegerFormat;
using tessera::isRawFormat;
using tessera::isBfpFormat;
using tessera::isExponentBFormat;
using tessera::tileSizeBytes;
using tessera::untilizedDatumBytes;

// HiFi2_A/HiFi2_B: HiFi2 with the two fidelity phases chosen explicitly (BUDA spellings).
enum class MathFidelity { LoFi, HiFi2, HiFi2_A, HiFi2_B, HiFi3, HiFi4 };
std::optional<MathFidelity> parseMathFidelity(std::string_view s);
std::string_view mathFidelityName(MathFidelity m);

using tessera::UblockOrder;
using tessera::parseUblockOrder;
using tessera::ublockOrderName;

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
