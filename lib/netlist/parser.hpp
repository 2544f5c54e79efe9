// YAML netlist -> typed model. The parser checks shape and vocabulary (types
// of fields, known enum spellings, required fields); meaning is checked by the
// validator.
#pragma once
#include "netlist/model.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <optional>

namespace tessera::netlist {

// Returns nullopt only when nothing usable could be read (YAML syntax error,
// empty document, top level not a map); otherwise a model, possibly with
// errors reported on `diags` for the elements that were malformed.
std::optional<Netlist> parseNetlist(const SourceBuffer& source, DiagnosticEngine& diags);

} // namespace tessera::netlist
