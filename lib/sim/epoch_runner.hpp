// The library entry for running one epoch on the simulated chip from files:
// per-core kernel directories (unpack.elf, math.elf, pack.elf from hlkc) and
// overlay blobs (.hex from blobgen), plus helpers to put queue entries into
// DRAM queue buffers and read them back (tilized per core with lib/formats).
// The loader's --target sim builds on this (docs/device-model.md,
// "Streams, NOC and DRAM").
#pragma once
#include "formats/blocking.hpp"
#include "formats/tensor.hpp"
#include "formats/data_format.hpp"
#include "sim/chip.hpp"
#include "sim/cluster.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

struct EpochCore {
  CoreCoord noc;                   // physical NOC coordinate of a functional worker
  std::string name;                // for reports; empty: "x-y"
  std::string kernelDir;           // unpack.elf, math.elf, pack.elf; empty: the core runs only streams
  std::string blobHexPath;         // the core's blob (.hex); empty: blobWords, or no blob
  std::vector<uint32_t> blobWords; // an encoded blob (blob::encodeCoreBlob), placed at kOverlayBlobBase
  // The firmware takes the core's binaries from its epoch command queue in
  // DRAM (the host pushed them: BinariesHost); kernelDir and the blob fields
  // are then ignored and the harts start when the binaries have arrived.
  bool fromEpochCommand = false;
};

struct EpochRun {
  std::vector<EpochCore> cores;
  ChipRunOptions options;
};

// chip.beginEpoch(), loads every core, then chip.runEpoch(). A file that
// cannot be read or loaded stops with stop = Fault, faultCategory "load" and
// the message naming the core and the file. DRAM is whatever the caller put
// there. Cores `fromEpochCommand` pop their command and load their binaries
// from DRAM (firmware.hpp); the epoch info is the commands' (all must agree),
// and each core's harts start when its image has been read: the reads of the
// cores sharing a channel queue on it (the DRAM timing of the stream engine's
// model: bandwidth, latency, NOC hops from the channel to the core).
ChipRunResult runEpoch(Chip& chip, const EpochRun& run);

// The same for every chip of a cluster at once (sim::Cluster, `jobs`
// threads): `runs` by chip id; chips without an entry run nothing. A load
// failure on a chip stops before the epoch with stop = Fault naming the chip.
ClusterRunResult runClusterEpoch(Cluster& cluster, const std::map<ChipId, EpochRun>& runs, unsigned jobs);

// One buffer of a DRAM queue: where its header is.
struct QueueBufferLoc {
  uint32_t channel = 0;
  uint64_t address = 0;
};

// Entry bytes of `slot` (entry slot s starts at address + 32 + s * entryBytes).
bool writeQueueEntry(Dram& dram, const QueueBufferLoc& buffer, uint32_t slot, std::span<const uint8_t> entry);
std::vector<uint8_t> readQueueEntry(const Dram& dram, const QueueBufferLoc& buffer, uint32_t slot, uint64_t entryBytes);

// Entry `w` of `tensor` tilized per core (formats::tilize: cores row-major,
// each its t / ublock order) into slot `slot` of each core's buffer
// (buffers.size() == gridR * gridC). Returns false with `error` on a size
// mismatch or an address outside DRAM.
bool writeTensorEntry(Dram& dram, const std::vector<QueueBufferLoc>& buffers, uint32_t slot,
                      const formats::Tensor& tensor, int64_t w, const formats::Blocking& blocking,
                      DataFormat df, std::string& error);
// The inverse: reads slot `slot` of every buffer into entry `w` of `into`.
bool readTensorEntry(const Dram& dram, const std::vector<QueueBufferLoc>& buffers, uint32_t slot,
                     const formats::Blocking& blocking, DataFormat df, formats::Tensor& into, int64_t w,
                     std::string& error);

// An untilized output queue buffer (one cell, docs/device-model.md "Untilized
// outputs"): slot `slot` holds `z` slices of `rows` x `cols` datums,
// row-major, each datum with the bytes its tile would hold. Decoded into
// entry `w` of `into` ([.., z, rows, cols]). With a tile shape other than
// 32x32 (tile_dim) the slot holds each tile's rows and columns only and
// `into` gets them in the 32x32 register view (docs/data-formats.md).
bool readUntilizedEntry(const Dram& dram, const QueueBufferLoc& buffer, uint32_t slot, DataFormat df,
                        formats::Tensor& into, int64_t w, std::string& error, formats::TileShape shape = {});

}  // namespace tessera::sim
