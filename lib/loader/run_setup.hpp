// What `loader` decides before anything runs: which option combinations it
// refuses, which programs run with which params, and the host inputs read
// from .npy files. Usage errors exit 2, errors of the netlist's inputs 1
// (docs/loader.md).
#pragma once
#include "support/diagnostics.hpp"
#include "formats/tensor.hpp"
#include "loader/driver.hpp"
#include "netlist/model.hpp"
#include "netlist/test_driver.hpp"
#include "sim/fault_injection.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tessera::loader {

// File name of a queue's .npy: queue names may hold '/', which cannot be in a file name.
std::string npyName(const std::string& queue);

// The params a program declares, in order.
std::vector<const netlist::VarDecl*> declaredParams(const netlist::Program& p);

// Option combinations refused before the netlist is read (each names the
// option and what it needs), with --inject parsed into `inject`. `mpi`: this
// process is one rank of `loader --mpi`. Returns 0, or 2 after printing.
int checkOptionCombinations(const LoaderOptions& opts, bool mpi, std::optional<sim::InjectSpec>& inject,
                            std::ostream& err);

// The programs to run (--program, else all in netlist order) and their
// params: --param values, and those the test driver passes that no --param
// gives (printed on `out` as one line naming the driver).
struct ProgramChoice {
  std::vector<const netlist::Program*> programs;
  std::map<std::string, int64_t> given;        // --param
  std::map<std::string, int64_t> driverGiven;  // the test driver's
};
// nullopt after printing a usage error (an unknown program or param, a bad value).
std::optional<ProgramChoice> choosePrograms(const netlist::Netlist& nl, const LoaderOptions& opts,
                                            const netlist::TestDriver& driver, std::ostream& out, std::ostream& err);

// Every host-fed queue an op reads, from `dir`/<queue>.npy. Missing files,
// bad .npy files and shapes other than the queue's become diagnostics
// (input-missing, input-npy, input-shape); returns whether there were none.
bool readNpyInputs(const netlist::Netlist& nl, const std::string& dir, DiagnosticEngine& diags,
                   std::map<std::string, formats::Tensor>& inputs);

} // namespace tessera::loader
