#include "netlist/enums.hpp"

#include "support/enum_names.hpp"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace tessera::netlist {
namespace {

using support::lookup;
using support::nameOf;

constexpr std::array<std::pair<std::string_view, MathFidelity>, 6> kFidelities{{
    {"LoFi", MathFidelity::LoFi}, {"HiFi2", MathFidelity::HiFi2}, {"HiFi2_A", MathFidelity::HiFi2_A},
    {"HiFi2_B", MathFidelity::HiFi2_B}, {"HiFi3", MathFidelity::HiFi3},
    {"HiFi4", MathFidelity::HiFi4},
}};

constexpr std::array<std::pair<std::string_view, IoType>, 2> kIoTypes{{{"queue", IoType::Queue}, {"ram", IoType::Ram}}};
constexpr std::array<std::pair<std::string_view, IoLocation>, 2> kLocations{
    {{"dram", IoLocation::Dram}, {"host", IoLocation::Host}}};

constexpr std::array<std::pair<std::string_view, TmKind>, 8> kTms{{
    {"broadcast", TmKind::Broadcast}, {"tile_broadcast", TmKind::TileBroadcast}, {"hslice", TmKind::Hslice},
    {"hstack", TmKind::Hstack}, {"vslice", TmKind::Vslice}, {"vstack", TmKind::Vstack},
    {"transpose", TmKind::Transpose}, {"pad", TmKind::Pad},
}};

constexpr std::array<std::pair<std::string_view, VarOpcode>, 5> kOpcodes{{
    {"set", VarOpcode::Set}, {"add", VarOpcode::Add}, {"mul", VarOpcode::Mul}, {"inc", VarOpcode::Inc},
    {"incwrap", VarOpcode::IncWrap},
}};

} // namespace


std::optional<MathFidelity> parseMathFidelity(std::string_view s) { return lookup(kFidelities, s); }
std::string_view mathFidelityName(MathFidelity m) { return nameOf(kFidelities, m); }
std::optional<IoType> parseIoType(std::string_view s) { return lookup(kIoTypes, s); }
std::string_view ioTypeName(IoType t) { return nameOf(kIoTypes, t); }
std::optional<IoLocation> parseIoLocation(std::string_view s) { return lookup(kLocations, s); }
std::string_view ioLocationName(IoLocation l) { return nameOf(kLocations, l); }
std::optional<TmKind> parseTmKind(std::string_view s) { return lookup(kTms, s); }
std::string_view tmKindName(TmKind k) { return nameOf(kTms, k); }
std::optional<VarOpcode> parseVarOpcode(std::string_view s) { return lookup(kOpcodes, s); }
std::string_view varOpcodeName(VarOpcode o) { return nameOf(kOpcodes, o); }

} // namespace tessera::netlist
