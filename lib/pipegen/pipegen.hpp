// pipegen as a library: one temporal epoch's buffers and pipes
// (pipegen.yaml, lib/pipe/pipegen_model.hpp) -> the streams and phases of
// every core (blob.yaml, lib/blob/blob_model.hpp), with L1 allocation and
// resource checks. docs/pipegen.md describes the algorithm; the stream
// semantics are the header comment of lib/blob/blob_model.hpp.
//
// Diagnostics (rule ids; all point at the buffer_/pipe_ document involved):
//   [pipegen-buffer]   a buffer pipegen cannot place: core outside the worker
//                      grid, operand id not valid for its type, two buffers
//                      on one operand, zero tile size or chunk, DRAM channel
//                      not on the device, ...
//   [pipegen-pipe]     a pipe whose tiles do not add up: input periods that
//                      disagree, epoch tiles not a whole number of passes,
//                      tile sizes that differ, a buffer fed by two pipes
//   [unsupported]      a documented shape pipegen does not implement
//                      (pipe_consumer_repeat > 1, DRAM-to-DRAM pipes,
//                      multicast into DRAM, relays it cannot fold, an
//                      unpacker as a pipe input, a relay chain fed by two
//                      streams ...)
//   [ethernet-pipe]    a pipe that crosses chips without being an ethernet
//                      pipe (one relay or ethernet buffer on an ethernet
//                      core of each chip); a buffer on a chip the cluster
//                      does not have
//   [ethernet-link]    an ethernet pipe whose two ethernet cores are not the
//                      two ends of one link of the cluster
//   [out-of-streams]   a core (worker or ethernet) needs more overlay
//                      streams, or ethernet-capable streams, than it has
//   [out-of-l1]        a core's buffers do not fit between
//                      contract::kDataBufferBase (ethernet cores:
//                      kEthDataBufferBase) and the top of its L1
//   [phase-limit]      an epoch whose phases cannot be expressed compactly
//                      and would exceed the unroll limit
//   [epoch-tiles]      warning: a pipe delivers a different number of tiles
//                      than its output buffer's epoch_tiles
//   [unconnected-buffer] warning: an operand buffer no pipe feeds or drains,
//                      or a relay buffer no pipe reads
#pragma once
#include "blob/blob_model.hpp"
#include "device/cluster.hpp"
#include "device/soc_descriptor.hpp"
#include "pipe/pipegen_model.hpp"
#include "support/diagnostics.hpp"

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::pipegen {

struct GenerateOptions {
  // Upper bound on the transfers pipegen unrolls for one connected group of
  // pipes before it compresses them into repeated phase lists.
  uint64_t maxUnrolledTransfers = 4'000'000;
  // Ring size (tiles) of the extra streams pipegen adds (DRAM readers that
  // multicast, DRAM writers of gathers and forks).
  uint32_t extraStreamRingTiles = pipe::kExtraStreamRingTiles;
  // Merge non-contiguous windowed reads of one source to the same receivers
  // into one phase with a chunk list (src_chunk_offsets), as BUDA's
  // dram_scatter_offsets: a strided or transposed read takes one phase
  // instead of one per chunk. Off: one phase per chunk (blob readers without
  // chunk lists).
  bool chunkLists = true;
  // Windowed packers release the finished prefix of a period after each
  // phase (src_freed_tiles), so their ring only needs the reorder window.
  // Off: the ring holds whole periods and src_freed_tiles is 0 until the
  // period is done (more L1, for blob readers without early release).
  bool releaseWindows = true;
  // The cluster the epoch runs on (docs/cluster.md): chip ids must be its
  // chips and ethernet pipes must join the two ends of one of its links.
  // Null: no such checks (one chip, or a caller that checked already).
  const ClusterDescriptor* cluster = nullptr;
};

// One L1 allocation, for reports and tests.
struct L1Block {
  blob::StreamName stream;
  uint32_t addr = 0;
  uint32_t bytes = 0;
  std::string what; // "buffer_<id> ('op', operand k)" or "DRAM reader of pipe <id>"
};

struct Generated {
  blob::BlobYaml blob;
  // A one-line description of each stream: op/queue, operand or role, core.
  std::map<blob::StreamName, std::string> comments;
  std::vector<L1Block> l1;       // every allocation, by core then address (descending)
  uint32_t epoch = 0;
  std::string graphName;
};

// Lowers one epoch. Problems go to `diags` (positions in the pipegen.yaml
// the model was read from); nullopt when any error was reported.
std::optional<Generated> generateBlob(const pipe::PipegenYaml& doc, const SocDescriptor& soc, DiagnosticEngine& diags,
                                      const GenerateOptions& options = {});

// NOC address of a DRAM buffer: ((y << 6 | x) << 32) | addr, (x, y) the NOC
// coordinates of the DRAM channel's (or PCIe core's) endpoint.
uint64_t dramNocAddress(int x, int y, uint64_t addr);

// Host memory (`dram_io_flag_is_remote: 1`, a `loc: host` queue) as the chip
// sees it through its PCIe core's NOC window: channel `chan` is one 1 GiB
// hugepage at chan * 1 GiB, so the buffer's NOC address is
// dramNocAddress(pcie.x, pcie.y, chan * 1 GiB + addr) (the simulator decodes
// it the same way, lib/sim/dram.hpp).
constexpr uint32_t kHostChannels = 4;
constexpr uint64_t kHostChannelBytes = uint64_t{1} << 30;

// Another chip's DRAM through the writer's PCIe core (an mmio_pipe, chips
// without ethernet: docs/cluster.md, "Through the host"): Tessera's window
// encoding puts the peer above the NOC coordinates,
//   ((1 + chip) << 52) | (chan << 48) | dramNocAddress(pcie.x, pcie.y, addr)
// (chip < 4095, chan < 16; the simulator decodes it, lib/sim/dram.hpp).
uint64_t peerDramNocAddress(int pcieX, int pcieY, uint32_t chip, uint32_t chan, uint64_t addr);

// The tool: flags in, exit code out (0 written, 1 invalid input or resource
// error or write failure, 2 usage error).
struct PipegenOptions {
  std::vector<std::string> inputs;  // pipegen.yaml of one epoch or several
  std::string output;   // blob.yaml (one input only; several: blob.yaml beside each)
  unsigned jobs = 0;    // inputs lowered at a time; 0: the machine's cores
  std::string arch;     // default grayskull
  std::string device;   // SoC descriptor file or bundled name; overrides arch
  std::string cluster;  // cluster descriptor file; empty: the arch's default for the highest chip_id
  std::optional<uint32_t> epoch; // default: from temporal_epoch_<E> in the input path, else 0 (one input only)
  std::string depfile;  // one input only
  size_t maxErrors = 20;
  bool noWarnings = false;
  bool chunkLists = true;      // GenerateOptions::chunkLists
  bool releaseWindows = true;  // GenerateOptions::releaseWindows
};
int runPipegen(const PipegenOptions& options, std::ostream& out, std::ostream& err);

} // namespace tessera::pipegen
