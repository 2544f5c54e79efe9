#include "loader/ram_writes.hpp"

#include "netlist/shape.hpp"
#include "netlist/text.hpp"

#include <algorithm>
#include <iterator>
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

namespace {

int64_t floorMod(int64_t a, int64_t m) { return ((a % m) + m) % m; }

// Bytes of one entry in one cell's buffer: netlist::queueBufferBytes counts
// one 32-byte header besides the entries.
uint64_t slotBytes(const netlist::Queue& q) {
  const uint64_t entries = static_cast<uint64_t>(std::max<int64_t>(1, q.entries.value));
  const uint64_t bytes = netlist::queueBufferBytes(q);
  return bytes < 32 ? 0 : (bytes - 32) / entries;
}

} // namespace

std::optional<SharedRamViews> sharedRamViews(const std::vector<RamAccess>& read, const std::vector<RamAccess>& written,
                                             int64_t n, std::string& rule, std::string& error,
                                             const netlist::Queue*& at, bool allowRace) {
  auto base = [](const netlist::Queue& q) { return q.alias.present() ? q.alias.value : q.name; };
  auto isRam = [](const netlist::Queue& q) { return q.type.value == netlist::IoType::Ram; };
  const RamAccess* r = nullptr;
  const RamAccess* w = nullptr;
  for (const RamAccess& a : read)
    for (const RamAccess& b : written)
      if (isRam(*a.queue) && isRam(*b.queue) && a.queue != b.queue && base(*a.queue) == base(*b.queue)) {
        if (r && (r->queue != a.queue || w->queue != b.queue)) {
          at = a.queue;
          rule = "sim-unsupported";
          error = "rams " + netlist::quote(r->queue->name) + " and " + netlist::quote(a.queue->name) +
                  " are each read in the epoch that writes another view of the same DRAM buffer: the sim target "
                  "handles one such pair per epoch";
          return std::nullopt;
        }
        r = &a;
        w = &b;
      }
  if (!r) return std::nullopt;
  at = r->queue;
  const netlist::Queue& rq = *r->queue;
  const netlist::Queue& wq = *w->queue;
  const std::string pair = "ram " + netlist::quote(rq.name) + " is read in the epoch that writes " + netlist::quote(wq.name) +
                           ", a view of the same DRAM buffer (alias)";
  rule = "sim-unsupported";
  if (r->settings->prologue || r->settings->epilogue || w->settings->prologue || w->settings->epilogue) {
    error = pair + ", with prologue or epilogue set: the sim target streams both views";
    return std::nullopt;
  }
  bool sameBuffers = rq.dram.size() == wq.dram.size() && rq.location.value == wq.location.value;
  for (size_t k = 0; sameBuffers && k < rq.dram.size(); ++k)
    sameBuffers = rq.dram[k].channel == wq.dram[k].channel && rq.dram[k].address == wq.dram[k].address;
  if (!sameBuffers) {
    error = pair + ", but their buffers are not at the same DRAM addresses cell by cell";
    return std::nullopt;
  }

  SharedRamViews out;
  out.reader = &rq;
  out.writer = &wq;
  const int64_t er = std::max<int64_t>(1, rq.entries.value), ew = std::max<int64_t>(1, wq.entries.value);
  const int64_t gr = floorMod(r->settings->globalRdptrAutoinc.value_or(0), 2 * er);
  const int64_t gw = floorMod(w->settings->globalWrptrAutoinc.value_or(0), 2 * ew);
  out.rdPtr = static_cast<uint32_t>(floorMod(r->ptr, 2 * er));
  out.wrPtr = static_cast<uint32_t>(floorMod(w->ptr, 2 * ew));
  out.rdAutoinc = static_cast<uint32_t>(gr);
  out.wrAutoinc = static_cast<uint32_t>(gw);
  std::map<int64_t, int64_t> firstInput; // writer slot -> the input that writes it first
  for (int64_t i = 0; i < n; ++i) {
    out.readSlots.push_back(static_cast<uint32_t>(floorMod(out.rdPtr + (i % (2 * er)) * gr, 2 * er) % er));
    const int64_t ws = floorMod(out.wrPtr + (i % (2 * ew)) * gw, 2 * ew) % ew;
    auto [it, added] = firstInput.emplace(ws, i);
    if (!added) {
      error = "ram " + netlist::quote(wq.name) + " is written " + std::to_string(n) + " times in one epoch with global_wrptr_autoinc " +
              std::to_string(w->settings->globalWrptrAutoinc.value_or(0)) + ": inputs " + std::to_string(it->second) + " and " +
              std::to_string(i) + " write the same one of its " + std::to_string(ew) +
              " slots, where the device keeps only the last entry written";
      return std::nullopt;
    }
    out.writeSlots.push_back(static_cast<uint32_t>(ws));
  }

  // Upstream's overlap check, per cell: byte ranges of the entries each input
  // reads against those each input writes.
  const uint64_t rb = slotBytes(rq), wb = slotBytes(wq);
  std::map<uint64_t, int64_t> writeAt; // first byte of a written entry -> its input (slots are distinct)
  for (int64_t j = 0; j < n; ++j) writeAt.emplace(uint64_t{out.writeSlots[j]} * wb, j);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r0 = uint64_t{out.readSlots[i]} * rb;
    // The written entry starting last at or before r0, else the first after it.
    auto it = writeAt.upper_bound(r0);
    if (it != writeAt.begin() && std::prev(it)->first + wb > r0) --it;
    if (it != writeAt.end() && it->first < r0 + rb && r0 < it->first + wb) {
      const int64_t j = it->second;
      rule = "dual-view-race";
      error = pair + ": input " + std::to_string(i) + " reads its entry " + std::to_string(out.readSlots[i]) +
              ", which shares bytes with entry " + std::to_string(out.writeSlots[j]) + " of " + netlist::quote(wq.name) +
              " that input " + std::to_string(j) +
              " writes. The two views have no flow control between them, so on silicon the read sees old or new "
              "data by timing (a race; upstream forbids it: runtime check_for_dual_view_ram_rd_wr_overlap_in_graph). "
              "Choose rd_ptr_global, wr_ptr_global and their autoincs so an execute's reads and writes do not overlap";
      if (allowRace) return out;
      return std::nullopt;
    }
  }
  return out;
}

} // namespace tessera::loader
