// What every tool prints and writes besides its artifacts: the LLVM-style
// one-line errors and warnings that are not about a netlist element (those go
// through DiagnosticEngine), and make depfiles.
#pragma once
#include "support/expected.hpp"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// "<tool> (Tessera) <version>": what --version prints.
std::string versionString(std::string_view tool);

// Starts `<who>: error: ` on `err` and returns it for the message, which the
// caller ends with "\n". `who` is the tool's name, or the file the error is
// about (`out.yaml: error: cannot write: ...`), as llvm tools print.
std::ostream& toolError(std::ostream& err, std::string_view who);
// The same for `<who>: warning: `.
std::ostream& toolWarning(std::ostream& err, std::string_view who);

// Writes the make rule "targets: prerequisites" to `depfile` atomically,
// every word escaped for make; empty prerequisites (an optional input that
// was not given) are left out.
Expected<void> writeDepfile(const std::string& depfile, const std::vector<std::string>& targets,
                            const std::vector<std::string>& prerequisites);

} // namespace tessera
