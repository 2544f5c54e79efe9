// net2pipe's epoch builder: where each pipe's sending stream runs, and
// multicasts of a core with too few multicast streams sharing one as time
// slots (epoch_builder.hpp).
#include "pipe/epoch_builder.hpp"


#include <algorithm>

namespace tessera::pipe::build {

using namespace netlist;

// Where a pipe's sending stream runs: the source core when all its tiles
// come from one core (`single`), else (DRAM, padding, a gather) the first
// destination core, or for a DRAM write the first source core.
// (A buffer on that core.)
uint32_t EpochBuilder::sendingCore(const PendingPipe& p, bool* single) const {
  std::set<uint64_t> srcCores;
  bool offCore = false;
  for (const SourceTile& t : p.tiles) {
    if (bufs_[t.source].place == Buf::Place::Core) srcCores.insert(coreKey(t.source));
    else offCore = true;
  }
  const bool one = !offCore && srcCores.size() == 1;
  if (single) *single = one;
  uint32_t firstSrc = p.tiles.front().source;
  for (const SourceTile& t : p.tiles)
    if (bufs_[t.source].place == Buf::Place::Core) {
      firstSrc = t.source;
      break;
    }
  return p.toDram || one ? firstSrc : p.outputs.front();
}

// A core sending more multicasts than it has multicast streams shares
// one stream between multicasts that carry the same tiles from its
// packer: one pipe whose nested output_list names each multicast as a time
// slot (BUDA's time-multiplexed pipe). pipegen sends each pass of the list
// whole to the next slot, so every slot receives the same tiles, one slot
// after the other: slots must be different consumers none of which waits
// for another (one op core reading two slots, or an op downstream of
// another's output, would deadlock). Merges the largest sets first, only
// until the core fits; checkResources reports what still does not.
void EpochBuilder::timeMultiplex() {
  const uint32_t limit = sh_.out.limits.mcastStreamsPerCore;
  std::map<uint64_t, std::vector<size_t>> byCore; // multicast pipes per sending core
  std::map<uint64_t, uint32_t> count;
  for (size_t pi = 0; pi < pending_.size(); ++pi) {
    const PendingPipe& p = pending_[pi];
    if (p.toDram || !p.multicast()) continue;
    bool single = false;
    const uint64_t key = coreKey(sendingCore(p, &single));
    ++count[key];
    if (single && p.op) byCore[key].push_back(pi);
  }
  std::vector<bool> dropped(pending_.size(), false);
  for (auto& [key, pis] : byCore) {
    int64_t excess = static_cast<int64_t>(count[key]) - limit;
    if (excess <= 0) continue;
    // Classes of identical tile lists, in order of their first pipe.
    std::vector<std::vector<size_t>> classes;
    for (size_t pi : pis) {
      bool placed = false;
      for (auto& cl : classes)
        if (pending_[cl.front()].tiles == pending_[pi].tiles) {
          cl.push_back(pi);
          placed = true;
          break;
        }
      if (!placed) classes.push_back({pi});
    }
    // Within a class, the slots one stream can serve in turn.
    std::vector<std::vector<size_t>> sets;
    for (const auto& cl : classes) {
      std::vector<size_t> set;
      for (size_t pi : cl) {
        bool ok = true;
        for (size_t other : set) ok &= independentSlots(pending_[other], pending_[pi]);
        if (ok) set.push_back(pi);
      }
      if (set.size() > 1) sets.push_back(std::move(set));
    }
    std::stable_sort(sets.begin(), sets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& set : sets) {
      if (excess <= 0) break;
      // Only as many slots as needed (each slot merged saves one stream).
      const size_t take = std::min<size_t>(set.size(), static_cast<size_t>(excess) + 1);
      PendingPipe& first = pending_[set.front()];
      first.slots.push_back(first.outputs);
      std::string with;
      for (size_t k = 1; k < take; ++k) {
        PendingPipe& other = pending_[set[k]];
        first.slots.push_back(other.outputs);
        with += (k > 1 ? ", " : "") + other.op->name + " input " + std::to_string(other.input);
        dropped[set[k]] = true;
      }
      first.comment += "; time-multiplexed, " + std::to_string(take) + " slots, then " + with;
      excess -= static_cast<int64_t>(take) - 1;
    }
  }
  std::vector<PendingPipe> kept;
  kept.reserve(pending_.size());
  for (size_t pi = 0; pi < pending_.size(); ++pi)
    if (!dropped[pi]) kept.push_back(std::move(pending_[pi]));
  pending_ = std::move(kept);
}

// The ops of the epoch that read `op`'s output, directly or through other ops.
const std::set<const Op*>& EpochBuilder::downstream(const Op& op) {
  auto it = downstream_.find(&op);
  if (it != downstream_.end()) return it->second;
  std::set<const Op*> seen;
  std::vector<const Op*> todo{&op};
  while (!todo.empty()) {
    const Op* cur = todo.back();
    todo.pop_back();
    for (const Op* other : ops_)
      for (const Operand& in : other->inputs)
        if (in.name == cur->name && seen.insert(other).second) todo.push_back(other);
  }
  return downstream_.emplace(&op, std::move(seen)).first->second;
}

// Ops whose output another op of the epoch reads (through on-chip pipes).
std::set<const Op*> EpochBuilder::opsReadOnChip() const {
  std::set<const Op*> ops;
  for (const PendingPipe& p : pending_) {
    if (p.toDram) continue;
    for (const SourceTile& t : p.tiles)
      if (bufs_[t.source].packer && bufs_[t.source].op) ops.insert(bufs_[t.source].op);
  }
  return ops;
}

// Whether `p` feeds input 1 (the activations) of a sparse matmul with
// tiles read from DRAM or host memory only (padding aside).
bool EpochBuilder::sparseActivationsFromDram(const PendingPipe& p) const {
  if (!p.op || p.input != 1 || p.op->type.value != "matmul" || !p.op->attributes.identity.value) return false;
  bool dram = false;
  for (const SourceTile& t : p.tiles) {
    const Buf::Place place = bufs_[t.source].place;
    if (place == Buf::Place::Core) return false;
    dram |= place == Buf::Place::Dram;
  }
  return dram;
}

} // namespace tessera::pipe::build
