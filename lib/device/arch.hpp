// Chip architectures the toolchain knows.
#pragma once
#include <optional>
#include <string_view>

namespace tessera {

enum class Arch { Grayskull, Wormhole, WormholeB0, Blackhole };

// Accepts any case; `wormhole_b` (the netlist spec's spelling) means wormhole_b0.
std::optional<Arch> parseArch(std::string_view s);
std::string_view archName(Arch a); // canonical lower-case spelling: grayskull, wormhole, wormhole_b0, blackhole

} // namespace tessera
