// Shared helpers of the chip tests (test/unit/simchip): hand-built overlay
// blobs (encoded with lib/blob, loaded into L1 like blobgen's .hex), tile
// patterns whose every byte is known, and DRAM queue buffers.
#pragma once
#include "blob/blob_binary.hpp"
#include "sim/chip.hpp"
#include "sim/dram.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace simchip {

using namespace tessera;
using namespace tessera::sim;
using blob::CoreBlob;
using blob::Stream;
using blob::StreamName;
using blob::StreamPhase;

constexpr uint32_t kTile = 2080;  // a Float16_b tile (2048 bytes + 32 header)
constexpr uint32_t kBuf0 = 0x20000;
constexpr uint32_t kBuf1 = 0x40000;
constexpr uint32_t kBuf2 = 0x60000;

inline const SocDescriptor& grayskull() {
  static const SocDescriptor soc = loadBundledDescriptor("grayskull_10x12");
  return soc;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Byte i of pattern tile `id`: every tile of every test differs.
inline uint8_t patternByte(uint32_t id, size_t i) {
  return static_cast<uint8_t>(id * 37u + i * 11u + (i >> 8) * 3u + 1u);
}
inline std::vector<uint8_t> patternTile(uint32_t id, uint32_t size = kTile) {
  std::vector<uint8_t> t(size);
  for (size_t i = 0; i < size; ++i) t[i] = patternByte(id, i);
  return t;
}
inline bool isPattern(std::span<const uint8_t> bytes, uint32_t id) {
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] != patternByte(id, i)) return false;
  return true;
}

inline StreamName sname(int x, int y, uint32_t id) {
  return StreamName{0, static_cast<uint32_t>(y), static_cast<uint32_t>(x), id};
}

inline StreamPhase phaseOf(uint32_t numMsgs, uint32_t bufAddr, uint32_t slots, uint32_t msgSize = kTile) {
  StreamPhase p;
  p.numMsgs = numMsgs;
  p.msgSize = msgSize;
  p.bufAddr = bufAddr;
  p.bufSize = slots * msgSize;
  p.dataFormat = 2;  // Float16_b
  return p;
}

// Phase builders by role.
inline StreamPhase packerToRemote(uint32_t n, uint32_t buf, uint32_t slots, std::vector<StreamName> dest) {
  StreamPhase p = phaseOf(n, buf, slots);
  p.sourceEndpoint = true;
  p.remoteReceiver = true;
  p.dest = std::move(dest);
  return p;
}
inline StreamPhase remoteToKernel(uint32_t n, uint32_t buf, uint32_t slots, std::vector<StreamName> src) {
  StreamPhase p = phaseOf(n, buf, slots);
  p.remoteSource = true;
  p.localReceiver = true;
  p.src = std::move(src);
  return p;
}
inline StreamPhase relay(uint32_t n, uint32_t buf, uint32_t slots, std::vector<StreamName> src,
                         std::vector<StreamName> dest) {
  StreamPhase p = phaseOf(n, buf, slots);
  p.remoteSource = true;
  p.remoteReceiver = true;
  p.src = std::move(src);
  p.dest = std::move(dest);
  return p;
}
inline StreamPhase dramToKernel(uint32_t n, uint32_t buf, uint32_t slots, uint64_t nocAddr, uint32_t qSlots,
                                uint32_t slotTiles) {
  StreamPhase p = phaseOf(n, buf, slots);
  p.dramInput = true;
  p.localReceiver = true;
  p.dramBufNocAddr = nocAddr;
  p.dramBufSizeQSlots = qSlots;
  p.dramBufSizeTiles = slotTiles;
  return p;
}
inline StreamPhase packerToDram(uint32_t n, uint32_t buf, uint32_t slots, uint64_t nocAddr, uint32_t qSlots,
                                uint32_t slotTiles) {
  StreamPhase p = phaseOf(n, buf, slots);
  p.sourceEndpoint = true;
  p.dramOutput = true;
  p.dramBufNocAddr = nocAddr;
  p.dramBufSizeQSlots = qSlots;
  p.dramBufSizeTiles = slotTiles;
  return p;
}

inline Stream streamOf(int x, int y, uint32_t id, std::vector<StreamPhase> phases, uint32_t iters = 1) {
  Stream s;
  s.name = sname(x, y, id);
  for (size_t i = 0; i < phases.size(); ++i) {
    phases[i].phaseId = i;
    phases[i].numItersInEpoch = iters;
  }
  s.phases = std::move(phases);
  return s;
}

// Encodes the core's blob with lib/blob and places it in the core's L1, as
// the loader does with blobgen's .hex.
inline void loadBlob(Chip& chip, int x, int y, std::vector<Stream> streams) {
  CoreBlob b;
  b.x = static_cast<uint32_t>(x);
  b.y = static_cast<uint32_t>(y);
  b.streams = std::move(streams);
  INFO(blob::checkEncodable(b));
  REQUIRE(blob::checkEncodable(b).empty());
  std::vector<uint32_t> words = blob::encodeCoreBlob(b);
  // Through the .hex text form, as blobgen writes it.
  blob::HexSegment seg;
  seg.wordAddress = tessera::contract::kOverlayBlobBase / 4;
  seg.words = words;
  std::string error;
  INFO(error);
  REQUIRE(chip.loadBlobHex(CoreCoord{x, y}, blob::writeHex({seg}), error));
}

// The packer's part without a kernel: tiles written into an output
// operand's buffer and pushed (RECEIVED) before the epoch runs.
inline void prePush(Chip& chip, int x, int y, uint32_t operand, uint32_t buf, uint32_t slots,
                    std::initializer_list<uint32_t> ids) {
  TensixCore* core = chip.core(CoreCoord{x, y});
  REQUIRE(core);
  uint32_t k = core->tilesReceived(operand);
  for (uint32_t id : ids) {
    const std::vector<uint8_t> t = patternTile(id);
    std::memcpy(core->l1().data() + buf + (k % slots) * kTile, t.data(), t.size());
    ++k;
  }
  core->addTilesReceived(operand, static_cast<uint32_t>(ids.size()));
}

inline std::span<const uint8_t> l1Slot(Chip& chip, int x, int y, uint32_t buf, uint32_t slot) {
  return std::span<const uint8_t>(chip.core(CoreCoord{x, y})->l1().data() + buf + slot * kTile, kTile);
}

// A DRAM queue buffer: header, then entries of slotTiles tiles.
struct Queue {
  uint32_t channel = 0;
  uint64_t address = 0;
  uint32_t slots = 0;
  uint32_t slotTiles = 0;
  uint64_t entryBytes() const { return uint64_t{slotTiles} * kTile; }
  uint64_t tileAddress(uint32_t slot, uint32_t tile) const {
    return address + 32 + slot * entryBytes() + uint64_t{tile} * kTile;
  }
};

inline void writeDramTile(Dram& dram, const Queue& q, uint32_t slot, uint32_t tile, uint32_t id) {
  const std::vector<uint8_t> t = patternTile(id);
  REQUIRE(dram.write(q.channel, q.tileAddress(slot, tile), t));
}

inline std::vector<uint8_t> readDramTile(const Dram& dram, const Queue& q, uint32_t slot, uint32_t tile) {
  std::vector<uint8_t> t(kTile);
  REQUIRE(dram.read(q.channel, q.tileAddress(slot, tile), t));
  return t;
}

// Runs one epoch of the chip with `options`.
inline ChipRunResult run(Chip& chip, ChipRunOptions options = {}) {
  ChipRunResult r = chip.runEpoch(options);
  INFO(r.message);
  return r;
}

}  // namespace simchip
