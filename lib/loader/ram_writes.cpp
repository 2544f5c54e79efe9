#include "loader/ram_writes.hpp"

#include "netlist/text.hpp"

#include <algorithm>
#include <map>

namespace tessera::loader {

std::optional<RamWrites> ramWrites(const netlist::Queue& q, const runtime::QueueSettingsValues& s, int64_t n,
                                   std::string& error) {
  RamWrites out;
  const int64_t entries = std::max<int64_t>(1, q.entries.value);
  const int64_t span = 2 * entries;
  if (n <= 1) { // one entry: the slot at wr_ptr, as before autoinc mattered
    out.slots.push_back(0);
    return out;
  }
  const int64_t g = ((s.globalWrptrAutoinc.value_or(0) % span) + span) % span;
  out.autoinc = static_cast<uint32_t>(g);
  std::map<int64_t, int64_t> firstInput; // slot -> the input that wrote it first
  for (int64_t i = 0; i < n; ++i) {
    const int64_t slot = (i % span) * g % span % entries;
    auto [it, added] = firstInput.emplace(slot, i);
    if (!added) {
      error = "ram " + netlist::quote(q.name) + " is written " + std::to_string(n) + " times in one epoch with global_wrptr_autoinc " +
              std::to_string(s.globalWrptrAutoinc.value_or(0)) + ": inputs " + std::to_string(it->second) + " and " +
              std::to_string(i) + " write the same one of its " + std::to_string(entries) +
              " slots, where the device keeps only the last entry written";
      return std::nullopt;
    }
    out.slots.push_back(static_cast<uint32_t>(slot));
  }
  return out;
}

uint32_t ramReadStep(const netlist::Queue& q, const runtime::QueueSettingsValues& s) {
  if (q.type.value != netlist::IoType::Ram || s.prologue || s.epilogue) return 0;
  const int64_t span = 2 * std::max<int64_t>(1, q.entries.value);
  return s.globalRdptrAutoinc.value_or(0) % span != 0 ? 1 : 0;
}

std::optional<ViewConflict> viewReadWhileWritten(const std::vector<const netlist::Queue*>& read,
                                                 const std::vector<const netlist::Queue*>& written) {
  auto base = [](const netlist::Queue& q) { return q.alias.present() ? q.alias.value : q.name; };
  for (const netlist::Queue* r : read)
    for (const netlist::Queue* w : written)
      if (r->type.value == netlist::IoType::Ram && w->type.value == netlist::IoType::Ram && r != w &&
          base(*r) == base(*w))
        return ViewConflict{r, "ram " + netlist::quote(r->name) + " is read in the epoch that writes " + netlist::quote(w->name) +
               ", a view of the same DRAM buffer (alias): the reference model reads after the epoch's writes, the "
               "device would read while they happen; the sim target runs the two views in separate epochs only"};
  return std::nullopt;
}

} // namespace tessera::loader
