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

// One launch reads ram `reader` while it writes ram `writer`, two views of one
// DRAM buffer (alias). Both views keep their real slots in the shared buffer
// and share its one header: rd_ptr/rd_autoinc in reader entries, wr_ptr/
// wr_autoinc in writer entries, slots 0 (each view's streams take their own
// slot count from the blob). Upstream only allows this when no entry an input
// reads shares a byte with an entry any input of the launch writes (runtime
// check_for_dual_view_ram_rd_wr_overlap_in_graph): the two views have no
// flow control between them, so an overlap is a race on silicon.
struct SharedRamViews {
  const netlist::Queue* reader = nullptr;
  const netlist::Queue* writer = nullptr;
  uint32_t rdPtr = 0, rdAutoinc = 0; // reader's pointer (in [0, 2E)) and stride, reader entries
  uint32_t wrPtr = 0, wrAutoinc = 0; // writer's, writer entries
  std::vector<uint32_t> readSlots;   // reader slot input i reads
  std::vector<uint32_t> writeSlots;  // writer slot input j writes
};

// The read and write pointers of a ram at the start of a launch (after the
// execute programmed them) and its settings.
struct RamAccess {
  const netlist::Queue* queue = nullptr;
  int64_t ptr = 0; // rd_ptr_global of a reader, wr_ptr_global of a writer
  const runtime::QueueSettingsValues* settings = nullptr;
};

// The views `read` and `written` share, if any: nullopt and `error` empty when
// no ram of `read` shares a buffer with a different ram of `written`; nullopt
// with `error` (and `rule`: dual-view-race for an overlap, sim-unsupported
// otherwise; `at`: the reader view) when the pair cannot run on the device.
// `allowRace`: an overlap returns the layout anyway, `rule` and `error`
// saying what races (loader --allow-dual-view-race).
std::optional<SharedRamViews> sharedRamViews(const std::vector<RamAccess>& read, const std::vector<RamAccess>& written,
                                             int64_t inputCount, std::string& rule, std::string& error,
                                             const netlist::Queue*& at, bool allowRace = false);

} // namespace tessera::loader
