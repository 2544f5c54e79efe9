// Spellings shared by every diagnostic of the netlist library.
#pragma once
#include "netlist/model.hpp"

#include <string>

namespace tessera::netlist {

// A name as diagnostics quote it (not `quoted`: std::quoted would win by ADL): 'op0'.
inline std::string quote(const std::string& s) { return "'" + s + "'"; }

// A [rows, cols] pair as written in netlists: [2, 4].
inline std::string dimText(Dim2 d) { return "[" + std::to_string(d.r) + ", " + std::to_string(d.c) + "]"; }

} // namespace tessera::netlist
