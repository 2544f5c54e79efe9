#include "sim/firmware.hpp"

#include "device/device_contract.h"
#include "support/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace tessera::sim {

namespace c = contract;

namespace {
}  // namespace

bool hasOverlayBlob(const TensixCore& core) {
  std::span<const uint8_t> l1 = core.l1();
  if (l1.size() < c::kOverlayBlobBase + 4) return false;
  uint32_t w = 0;
  std::memcpy(&w, l1.data() + c::kOverlayBlobBase, 4);
  return w == blob::kBlobMagic;
}

std::optional<blob::CoreBlob> readOverlayBlob(const TensixCore& core, std::string& error) {
  std::span<const uint8_t> l1 = core.l1();
  const size_t end = std::min<size_t>(l1.size(), size_t{c::kOverlayBlobBase} + c::kOverlayBlobSize);
  Expected<blob::CoreBlob> b = blob::decodeCoreBlob(l1.subspan(c::kOverlayBlobBase, end - c::kOverlayBlobBase));
  if (!b) error = "core '" + core.name() + "': " + b.error();
  return std::move(b).toOptional();
}

bool writeOperandTableFromBlob(TensixCore& core, const blob::CoreBlob& b, std::string& error) {
  for (uint32_t o = 0; o < c::kOperandCount; ++o) core.writeOperand(o, c::OperandEntry{});
  for (const blob::Stream& s : b.streams) {
    const uint32_t id = s.name.streamId;
    if (id < blob::kOperandStreamBase || id >= blob::kOperandStreamEnd || s.phases.empty()) continue;
    const blob::StreamPhase& p = s.phases.front();
    const uint32_t capacity = p.msgSize ? p.bufSize / p.msgSize : 0;
    if (capacity > 0xFFFF) {
      error = "core '" + core.name() + "': stream " + std::to_string(id) + ": buffer of " + std::to_string(capacity) +
              " tiles does not fit the operand table (at most 65535)";
      return false;
    }
    c::OperandEntry e{};
    e.baseAddress = p.bufAddr;
    e.tileSizeBytes = p.msgSize;
    e.capacityTiles = static_cast<uint16_t>(capacity);
    e.dataFormat = static_cast<uint8_t>(p.dataFormat);
    if (p.sourceEndpoint && p.untilizeCDim) {
      // An untilized output: the kernel packs each t slice of its block row-major,
      // a row being the block's untilize_c_dim tiles of 32 datums (msg = 1024 datums).
      e.flags = c::kOperandUntilized;
      // With tile_dim a msg is untilizeTileR x untilizeTileC datums.
      const uint32_t tileValues = p.untilizeTileR * p.untilizeTileC;
      e.rowStrideBytes = tileValues ? p.untilizeCDim * p.untilizeTileC * (p.msgSize / tileValues) : 0;
    }
    core.writeOperand(id - blob::kOperandStreamBase, e);
  }
  return true;
}

bool loadOverlayHex(TensixCore& core, const std::vector<blob::HexSegment>& segments, std::string& error) {
  const uint64_t lo = c::kOverlayBlobBase;
  const uint64_t hi = std::min<uint64_t>(core.l1().size(), uint64_t{c::kOverlayBlobBase} + c::kOverlayBlobSize);
  for (const blob::HexSegment& seg : segments) {
    const uint64_t begin = uint64_t{seg.wordAddress} * 4, end = begin + seg.words.size() * 4;
    if (begin < lo || end > hi) {
      error = "core '" + core.name() + "': blob words [" + support::hexLiteral(begin) + ", " + support::hexLiteral(end) +
              ") (byte addresses) are outside the overlay region [" + support::hexLiteral(lo) + ", " + support::hexLiteral(hi) + ")";
      return false;
    }
  }
  std::span<uint8_t> l1 = core.l1();
  for (const blob::HexSegment& seg : segments) {
    const std::vector<uint8_t> bytes = blob::wordsToBytes(seg.words);
    std::memcpy(l1.data() + uint64_t{seg.wordAddress} * 4, bytes.data(), bytes.size());
  }
  return true;
}

bool loadOverlayWords(TensixCore& core, std::span<const uint32_t> words, std::string& error) {
  blob::HexSegment seg;
  seg.wordAddress = c::kOverlayBlobBase / 4;
  seg.words.assign(words.begin(), words.end());
  return loadOverlayHex(core, {seg}, error);
}

void clearOverlay(TensixCore& core) {
  std::span<uint8_t> l1 = core.l1();
  const size_t end = std::min<size_t>(l1.size(), size_t{c::kOverlayBlobBase} + c::kOverlayBlobSize);
  if (end > c::kOverlayBlobBase) std::memset(l1.data() + c::kOverlayBlobBase, 0, end - c::kOverlayBlobBase);
}

std::optional<c::EpochCommand> loadFromEpochCommand(TensixCore& core, Dram& dram, const CoreBinariesArea& area,
                                                    std::string& error) {
  const std::string who = "core '" + core.name() + "': ";
  const std::optional<c::EpochCommand> cmd = popEpochCommand(dram, area);
  if (!cmd) {
    error = who + "its epoch command queue (channel " + std::to_string(area.channel) + " address " +
            support::hexLiteral(area.commandQueue) + ") is empty";
    return std::nullopt;
  }
  const uint64_t at = uint64_t{cmd->binariesAddressHi} << 32 | cmd->binariesAddressLo;
  if (cmd->magic != c::kEpochCommandMagic || cmd->binariesBytes > c::kBinariesSlotBytes) {
    error = who + "malformed epoch command (magic " + support::hexLiteral(cmd->magic) + ", " +
            std::to_string(cmd->binariesBytes) + " bytes of binaries)";
    return std::nullopt;
  }
  std::vector<uint8_t> bytes(cmd->binariesBytes);
  if (!dram.read(cmd->binariesChannel, at, bytes)) {
    error = who + "binaries at channel " + std::to_string(cmd->binariesChannel) + " address " +
            support::hexLiteral(at) + " are outside DRAM";
    return std::nullopt;
  }
  Expected<BinariesImage> image = decodeBinaries(bytes);
  if (!image) {
    error = who + "binaries cache slot " + std::to_string(cmd->binariesSlot) + " (epoch " +
            std::to_string(cmd->epochId) + "): " + image.error();
    return std::nullopt;
  }
  std::string why;
  for (uint32_t t = 0; t < c::kThreadCount; ++t)
    if (image->kernels[t] && !core.loadProgram(static_cast<Thread>(t), *image->kernels[t], why)) {
      error = who + why;
      return std::nullopt;
    }
  if (!image->blob.empty() && !loadOverlayHex(core, image->blob, error)) return std::nullopt;
  return cmd;
}

}  // namespace tessera::sim
