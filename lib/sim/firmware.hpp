// The BRISC/NCRISC firmware duties of a worker core, as native simulator
// code (docs/device-model.md, "Streams, NOC and DRAM"):
// - epoch start: find and decode the overlay blob in L1 at
//   contract::kOverlayBlobBase, write the kernel operand table from the
//   operand streams 8-39 (buffer, tile size, capacity, format), write the
//   epoch info; the chip then configures the stream engine from the same
//   decoded blob and starts the harts;
// - the prologue (DRAM buffers and gradient accumulators preloaded into L1
//   before the harts start) is run by the stream engine
//   (StreamEngine::runPrologue), and so is the epilogue (a core's gradient
//   accumulators stored back once its kernel finished:
//   StreamEngine::kernelFinished, called by the chip); the DRAM queue
//   header updates (wr pointer after each slot written, rd pointer past a
//   slot all readers have left) are done by the streams as they go.
#pragma once
#include "blob/blob_binary.hpp"
#include "blob/blob_model.hpp"
#include "sim/binaries_cache.hpp"
#include "sim/dram.hpp"
#include "sim/tensix_core.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

// True when the first word of the core's overlay region is the blob magic.
bool hasOverlayBlob(const TensixCore& core);

// Decodes the blob in the core's overlay region. On malformed bytes returns
// nullopt and `error` = "core '<name>': <decoder message>".
std::optional<blob::CoreBlob> readOverlayBlob(const TensixCore& core, std::string& error);

// The kernel operand table from the blob: every operand stream (8-39) gives
// operand id - 8 its first phase's buffer (base bufAddr, tile size msgSize,
// capacity bufSize / msgSize, format dataFormat). Every other entry is
// cleared. Fails (false, `error`) on a capacity over 65535 tiles.
bool writeOperandTableFromBlob(TensixCore& core, const blob::CoreBlob& blob, std::string& error);

// Places .hex segments (absolute L1 word addresses, as the BUDA loader
// reads blob .hex files) into the core's L1. Every word must land inside the
// overlay region [kOverlayBlobBase, + kOverlayBlobSize).
bool loadOverlayHex(TensixCore& core, const std::vector<blob::HexSegment>& segments, std::string& error);
// The words of an encoded blob placed at kOverlayBlobBase.
bool loadOverlayWords(TensixCore& core, std::span<const uint32_t> words, std::string& error);
// Zeroes the overlay region (no blob).
void clearOverlay(TensixCore& core);

// NCRISC's epoch start from DRAM (docs/device-model.md, "Binaries cache and
// epoch commands"): pops the core's next epoch command, reads the binaries
// image from the cache slot it names, loads each kernel it holds (the hart
// reset to its entry) and the blob into the overlay region. nullopt with
// `error` naming the core when the queue is empty or the image does not load.
std::optional<contract::EpochCommand> loadFromEpochCommand(TensixCore& core, Dram& dram, const CoreBinariesArea& area,
                                                           std::string& error);

}  // namespace tessera::sim
