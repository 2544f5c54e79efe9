// Data-format, accumulation and fidelity rules of one op: which formats the
// hardware can accumulate, convert and pack in each configuration.
#pragma once
#include "netlist/model.hpp"
#include "support/diagnostics.hpp"

namespace tessera::netlist {

// Rules: acc-df-arch, sfpu-thread-arch, intermed-df-exponent,
// intermed-df-accumulate, gradient-op, int-formats, int-math-fidelity,
// reduce-z-df, splice-df, l1-acc (docs/netlist-rules.md).
void checkOpFormats(const Op& op, Arch arch, DiagnosticEngine& diags);

} // namespace tessera::netlist
