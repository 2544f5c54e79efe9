// Buffer names inside a fused op's schedule: inputN, intermedN, dest, output.
// Shared by the fused-op validator and the reference model's executor.
#pragma once
#include <cstdint>
#include <string_view>

namespace tessera::netlist {

enum class BufKind { Input, Intermed, Dest, Output, Invalid };

struct BufName {
  BufKind kind = BufKind::Invalid;
  int64_t index = -1; // N for inputN / intermedN
};

// Invalid for anything else (including more than 6 digits).
BufName parseBufName(std::string_view s);

} // namespace tessera::netlist
