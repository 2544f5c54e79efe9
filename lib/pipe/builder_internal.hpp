// What net2pipe's epoch builder (epoch_builder.hpp) shares with its relay chains
// (relays.cpp): the netlist-wide state, the buffers and pending pipes of the
// epoch being built. Internal to lib/pipe.
#pragma once
#include "device/cluster.hpp"
#include "formats/formats.hpp"
#include "hlk/config.hpp"
#include "netlist/model.hpp"
#include "netlist/validator.hpp"
#include "pipe/net2pipe.hpp"
#include "pipe/tile_map.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::pipe::build {

inline std::string coreText(uint32_t r, uint32_t c) { return "[r=" + std::to_string(r) + ", c=" + std::to_string(c) + "]"; }
inline std::string coreText(const CoreCoord& rc) { return coreText(rc.r, rc.c); }

// Bytes of one tile slot: BUDA's tile size (header + data [+ exponents]);
// an untilized output holds a tile's worth of row-major datums only (no
// header, no Int8 exponent section).
inline uint32_t tileBytes(netlist::DataFormat df, bool untilized) {
  return untilized ? netlist::untilizedDatumBytes(df) * 1024 : netlist::tileSizeBytes(df);
}
// With a tile_dim: a smaller tile has fewer bytes (formats::tileBytes).
inline uint32_t tileBytes(netlist::DataFormat df, bool untilized, netlist::Dim2 tile) {
  if (tile == netlist::Dim2{32, 32}) return tileBytes(df, untilized);
  const formats::TileShape shape{static_cast<uint32_t>(tile.r), static_cast<uint32_t>(tile.c)};
  return static_cast<uint32_t>(untilized ? netlist::untilizedDatumBytes(df) * shape.values() : formats::tileBytes(df, shape));
}
inline netlist::Dim2 tileOf(const netlist::Field<netlist::Dim2>& tileDim) {
  return tileDim.present() ? tileDim.value : netlist::Dim2{32, 32};
}

// What the whole netlist shares across epochs.
struct Shared {
  const netlist::Netlist& nl;
  const netlist::ValidationTarget& target;
  const ClusterDescriptor& cluster;
  DiagnosticEngine& diags;
  Compilation& out;
  std::map<std::string, const netlist::Queue*> queues;
  std::map<std::string, size_t> queueFirstBuffer; // index into out.queueBuffers
  std::map<const netlist::Op*, std::optional<hlk::KernelConfig>> configs;
  uint64_t nextId = 1;
  bool ok = true;

  BufferId newId() { return kIdBase + kIdStride * nextId++; }
};

// A buffer of the epoch being built and what the builder knows beside it.
struct Buf {
  Buffer doc;
  enum class Place { Core, Dram, Padding } place = Place::Core;
  int category = 0;      // output order: 0 op buffers, 1 queue buffers, 2 padding, 3 relays of chains
  size_t orderKey = 0;   // within the category
  const netlist::Op* op = nullptr;
  bool packer = false;   // an op output buffer read by pipes (or a relay/ethernet buffer: read like one)
  int64_t ublockTiles = 1;
  // L1 buffers: the smallest size that still works (fitL1 may shrink to it),
  // in steps of `granule` tiles.
  int64_t minSize = 0;
  int64_t granule = 1;
  // Queue buffers.
  const netlist::Queue* queue = nullptr;
  size_t queueBuffer = 0; // index into Compilation::queueBuffers
  bool readStreamed = false, readProlog = false, written = false, writtenEpilogue = false;
  std::string prologFor;  // first op reading it as a prologue
  // Filled while finishing.
  bool hasReaders = false;
  int64_t window = 1;
  // A packer whose readers take successive periods of it (period_slots.hpp):
  // its period in tiles; 0 = one input.
  int64_t period = 0;
};

struct PendingPipe {
  std::vector<SourceTile> tiles;  // one input's tiles, in delivery order
  std::vector<uint32_t> outputs;  // destination buffers
  std::string comment;
  const netlist::Op* op = nullptr; // consumer op (op input) or producer op (queue write)
  int input = -1;                 // op input index; -1 for a queue write
  bool toDram = false;
  // A time-multiplexed pipe (nested output_list): the destinations of each
  // time slot, the first slot being `outputs`; empty for a plain pipe.
  std::vector<std::vector<uint32_t>> slots;
  // Slots take successive periods of the source (its `Buf::period`, this
  // pipe's one-period list), not the same list each (period_slots.hpp).
  bool successivePeriods = false;
  size_t slotCount() const { return slots.empty() ? 1 : slots.size(); }
  bool multicast() const {
    if (slots.empty()) return outputs.size() > 1;
    return std::any_of(slots.begin(), slots.end(), [](const auto& s) { return s.size() > 1; });
  }
  std::vector<uint32_t> allOutputs() const {
    if (slots.empty()) return outputs;
    std::vector<uint32_t> all;
    for (const auto& s : slots) all.insert(all.end(), s.begin(), s.end());
    return all;
  }
};

} // namespace tessera::pipe::build
