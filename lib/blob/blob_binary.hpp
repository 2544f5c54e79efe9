// Binary overlay blobs: the bytes blobgen writes for one core (as .hex) and
// the simulator's stream engine decodes from that core's L1 at
// contract::kOverlayBlobBase. Layout: docs/device-model.md, "Overlay blobs".
#pragma once

#include "blob/blob_model.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::blob {

// 32-bit little-endian words to place at contract::kOverlayBlobBase.
std::vector<uint32_t> encodeCoreBlob(const CoreBlob& blob);

// Decodes the blob at the start of `bytes` (the overlay region of a core's
// L1). On malformed bytes returns nullopt and a message naming the offset
// and the field.
std::optional<CoreBlob> decodeCoreBlob(std::span<const uint8_t> bytes, std::string& error);

// One contiguous run of words of a .hex file: `@<word address>` then one
// 8-digit hex word per line.
struct HexSegment {
  uint32_t wordAddress = 0;
  std::vector<uint32_t> words;
};

std::string writeHex(const std::vector<HexSegment>& segments);
// Parses .hex text; on error returns nullopt and "line N: message".
std::optional<std::vector<HexSegment>> readHex(const std::string& text, std::string& error);

}  // namespace tessera::blob
