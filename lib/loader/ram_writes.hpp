#pragma once
// Where the simulated chip writes the entries of a ram that one execute
// writes several times (global_wrptr_autoinc): shared by the one-chip and
// the cluster sim targets.
#include "netlist/model.hpp"
#include "runtime/queues.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::loader {

struct RamWrites {
  uint32_t autoinc = 0;         // the header's wr_autoinc: the device steps wr_ptr by it after each entry
  std::vector<uint32_t> slots;  // slot of input i, from a header whose wr_ptr starts at 0
};

// The n inputs of one execute write slots 0, g, 2g, ... (pointers wrap at
// 2 x entries, as the runtime's do), g = global_wrptr_autoinc. When two
// inputs land in one slot only the last is left to read back: nullopt, with
// `error` naming them.
std::optional<RamWrites> ramWrites(const netlist::Queue& q, const runtime::QueueSettingsValues& s, int64_t n,
                                   std::string& error);

// The header's rd_autoinc for a queue an execute reads, its entries staged
// input i in slot i: 1 for a streamed ram whose reads step
// (global_rdptr_autoinc not 0 mod 2E), else 0 (read in place).
uint32_t ramReadStep(const netlist::Queue& q, const runtime::QueueSettingsValues& s);

// Two views of one ram (alias) that one launch both writes and reads: the
// reference model reads after the launch's writes, the device would read
// while they happen (views have no flow control between them). The first
// such reader, with the message; nullopt when there is none.
struct ViewConflict {
  const netlist::Queue* reader = nullptr;
  std::string message;
};
std::optional<ViewConflict> viewReadWhileWritten(const std::vector<const netlist::Queue*>& read,
                                                 const std::vector<const netlist::Queue*>& written);

} // namespace tessera::loader
