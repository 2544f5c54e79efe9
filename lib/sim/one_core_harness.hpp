// Running one op on one simulated core without the rest of the chip: the
// harness plays firmware and stream engine. It places the operand buffers in
// L1, writes the operand table and epoch info, feeds input tiles into free
// slots and drains (copies out and acknowledges) the tiles the pack thread
// pushes, between scheduler slices. Used by tools/tensix-run, the unit tests
// and anything else that needs "run this kernel on these tiles".
//
// The spec format tensix-run reads (docs/tensix-run.md) is parsed here too, so
// a test generator and the tool agree on one definition.
#pragma once
#include "device/arch.hpp"
#include "device/device_contract.h"
#include "formats/data_format.hpp"
#include "sim/tensix_core.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::sim {

enum class OperandRole : uint8_t { Input, Output, Intermediate };
// By BUDA's numbering: 0-7 inputs (8-15: inputs 8-15 of a fused op with more
// than 8 inputs, as net2hlks numbers them), 16-23 outputs, 24-31
// intermediates; nullopt for >= 32.
std::optional<OperandRole> operandRole(uint32_t id);
const char* operandRoleName(OperandRole role);  // "input", "output", "intermediate"

struct HarnessOperand {
  uint32_t id = 0;
  contract::DataFormatCode format = contract::kFloat16_b;
  uint32_t capacityTiles = 0;
  uint32_t tileSizeBytes = 0;        // 0: the format's tile size (tileSizeBytes)
  std::optional<uint32_t> address;   // L1 base of slot 0; default: allocated upward from kDataBufferBase
  bool untilized = false;            // outputs: row-major buffer written by PACK untilize
  uint32_t rowStrideBytes = 0;       // untilized: bytes between rows
  std::vector<uint8_t> inputTiles;   // inputs: packed tiles (tileSizeBytes each), fed in order
  std::optional<uint32_t> expectTiles;  // outputs: the run fails unless exactly this many were pushed
  // Files of the tool (the library does not read or write them).
  std::string inputPath;
  std::string outputPath;
};

class OneCoreHarness {
public:
  explicit OneCoreHarness(TensixCore& core) : core_(core) {}

  // Checks the operands (ids, capacities, sizes, addresses inside the data
  // buffer area of L1, no overlaps), allocates missing addresses, writes the
  // operand table and the epoch info. Returns false with one message on the
  // first problem.
  bool setup(std::vector<HarnessOperand> operands, const contract::EpochInfo& epoch, std::string& error);

  // The agent: feeds inputs, drains outputs. Always returns false (it only
  // reacts to the core's counters).
  bool service(TensixCore& core);

  // Runs the core to the end, servicing between slices, and drains what the
  // last slice pushed. Sets `error` (and returns a result whose ok() the
  // caller must combine with errors()) when an output overflowed or an
  // expected tile count was not met.
  CoreRunResult run(const RunOptions& options);

  // Problems found while servicing or after the run (overflow, tile counts).
  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<HarnessOperand>& operands() const { return operands_; }
  // Bytes drained from an output (tiles in push order; the whole buffer for
  // an untilized output).
  const std::vector<uint8_t>& output(uint32_t id) const;
  uint32_t tilesFed(uint32_t id) const;
  uint32_t tilesDrained(uint32_t id) const;

private:
  struct State {
    size_t fed = 0;      // tiles fed
    size_t drained = 0;  // tiles acknowledged
    std::vector<uint8_t> out;
    bool overflowReported = false;
  };
  TensixCore& core_;
  std::vector<HarnessOperand> operands_;
  std::map<uint32_t, State> state_;
  std::vector<std::string> errors_;
};

// ---------------------------------------------------------------------------
// The tensix-run spec (YAML or JSON; docs/tensix-run.md).
// ---------------------------------------------------------------------------
struct RunSpec {
  std::optional<Arch> arch;
  std::string kernelDir;             // resolved against the spec's directory
  contract::EpochInfo epoch{};
  RunOptions run{};
  std::vector<HarnessOperand> operands;  // inputPath/outputPath resolved against the spec's directory
};

// Parses a spec; errors are diagnostics at the offending node (rule ids
// spec-*). Input files are not read here. Returns nullopt on any error.
std::optional<RunSpec> parseRunSpec(const SourceBuffer& source, const std::string& baseDir, DiagnosticEngine& diags);

// Parses the command-line form ID:FORMAT:CAPACITY[:FILE] (the file is the
// input for inputs, the output for outputs; intermediates take none).
bool parseOperandArg(std::string_view text, HarnessOperand& out, std::string& error);

} // namespace tessera::sim
