// The overlay (stream) program of one temporal epoch: what pipegen writes as
// blob.yaml, what blobgen encodes into one binary blob per core, and what the
// simulator's stream engine decodes from each core's L1 and executes. This
// header is the semantic contract between those three; docs/device-model.md
// ("Overlay blobs and streams") gives the byte layout and the same rules in
// prose. Field names follow the BUDA backend's blob.yaml.
//
// Stream semantics (Tessera's device contract, in the spirit of BUDA's
// overlay hardware):
// - Every worker core has kStreamsPerCore streams. Stream id s with
//   8 <= s < 40 belongs to kernel operand s - 8 (BUDA's OPERAND_START_STREAM):
//   inputs 0-7 -> streams 8-15, outputs 16-23 -> 24-31, intermediates
//   24-31 -> 32-39. Other ids (0-7, 40-63) are relays, gathers and DRAM
//   prefetch/readers with no kernel operand.
// - A stream runs its phases in the listed order; the whole list repeats
//   `numItersInEpoch` times (the value of the first phase). A phase moves
//   exactly `numMsgs` tiles of `msgSize` bytes, then the stream advances.
// - Where a phase's tiles come from (exactly one):
//     sourceEndpoint: this core's packer pushes them into the stream's
//       buffer (the output operand's tile counter RECEIVED); the stream acks
//       them (ACKED) once every destination has taken them;
//     remoteSource: sent by the streams in `src` (a gather lists several, in
//       order; each sends its own phase's numMsgs);
//     dramInput: read from the DRAM buffer at dramBufNocAddr (a queue slot
//       ring with a BUDA 32-byte header; dramRam = no pointer updates).
// - Where they go (exactly one):
//     localReceiver: they stay in this stream's buffer for the kernel (the
//       input operand's tile counter RECEIVED; the unpacker's pops free space);
//     remoteReceiver: sent to every stream in `dest` (more than one =
//       multicast; the phase completes when all have taken each tile);
//     dramOutput: written to the DRAM buffer at dramBufNocAddr.
// - Flow control: a sender sends a tile only when the receiving stream's
//   buffer has space for it (credits = free bytes of the receiver's ring).
//   Buffers are rings of bufSize bytes at bufAddr; every tile is msgSize.
//
// Conventions pipegen (lib/pipegen) writes by; docs/blob-yaml.md has the
// field-by-field page:
// - Stream names use NOC (physical) coordinates: pipegen maps a buffer's
//   logical core_coordinates [r, c] to the soc descriptor's worker at row r,
//   column c (SocDescriptor::workerCore).
// - dramBufNocAddr = ((y << 6 | x) << 32) | byte address, x and y the NOC
//   coordinates of the buffer's DRAM channel (subchannel dram_sub_chan) in
//   the soc descriptor's `dram` list: bits 37:32 = x, 43:38 = y, 31:0 = the
//   pipegen.yaml dram_addr (the queue header; slot s starts at
//   dram_addr + 32 + s * dramBufSizeTiles * msgSize). The BUDA encoding.
// - Links pair by order, not by phase id: the tiles a sender's phases send to
//   a receiver R are, in order, the tiles R's phases naming that sender in
//   `src` expect. pipegen writes exactly one src per remoteSource phase and
//   makes every sender phase match one phase of each of its receivers with
//   the same numMsgs (a gather = consecutive phases with different src).
//   phase_id is the phase's ordinal in its stream (blob.yaml `phase_<n>`
//   groups the n-th phase of every stream).
// - A stream with remoteSource and remoteReceiver is a relay: it forwards the
//   tiles it receives, in order (FIFO), through its own ring.
// - DRAM reads (dramInput) always use a window (srcPeriodTiles = the slot's
//   tiles, below): a reader keeps its own slot cursor, starting at the
//   queue's rd pointer; a phase with srcPeriodDone moves the cursor to the
//   next slot, and the header's rd pointer advances past a slot once all
//   dramTotalReaders readers have moved past it. A read waits until the slot
//   holds data (wr pointer beyond it). dramRam and prologue buffers are read
//   without srcPeriodDone (the same slot all epoch); pipegen sets dramRam
//   for RAM, prologue and epilogue buffers (no pointer updates).
// - Padding (dramPadding, with dramInput and dramRam; as BUDA): the DRAM
//   buffer at dramBufNocAddr is a one-slot, one-tile ram holding a constant
//   tile of dataFormat whose values all equal paddingValue; the runtime (not
//   the streams) writes it before the epoch from the phases that name it,
//   and the phase reads it like any ram (pad TMs). pipegen places padding
//   buffers in the DRAM padding region (lib/pipegen, docs/pipegen.md).
// - Untilized outputs (untilizeCDim > 0; Tessera addition): every msg is
//   msgSize bytes of row-major data, and untilizeRDim x untilizeCDim
//   consecutive msgs are one t slice of a core's output block: its
//   untilizeRDim x 32 rows of untilizeCDim x 32 datums (the bytes a tile
//   would hold per datum), row after row. On a sourceEndpoint phase the
//   firmware marks the kernel's output operand untilized with that row
//   stride. On a dramOutput phase the slot is the whole output tensor
//   row-major (untilizeZDim slices of untilizeFullRDim x 32 rows of
//   untilizeFullCDim x 32 datums); msgs arrive slice by slice, each core's
//   block in turn (cores row-major), and the k-th block of a slice lands at
//   block row k / (untilizeFullCDim / untilizeCDim), block column
//   k % (untilizeFullCDim / untilizeCDim).
// - DRAM writes (dramOutput) are FIFO: tiles fill the slot at the wr pointer
//   in order; when dramBufSizeTiles tiles are written the wr pointer advances
//   (not for dramRam: every slot's worth overwrites the slot the header
//   names); a write waits for a free slot (wr - rd < q slots).
// - Windowed sources (srcPeriodTiles > 0; Tessera addition, for scatter and
//   broadcast TMs): the source (the packer's tiles in this stream's ring for
//   sourceEndpoint, the current slot for dramInput) is read as consecutive
//   periods of srcPeriodTiles tiles rather than as a FIFO: the phase sends
//   tiles [srcTileOffset, srcTileOffset + numMsgs) of the current period
//   (sourceEndpoint: waits until the packer has pushed them), possibly again
//   in a later phase. sourceEndpoint: once a phase is done the first
//   srcFreedTiles tiles of the period are released (ACKED catches up to
//   period start + srcFreedTiles; non-decreasing within a period; pipegen
//   sizes the ring for it; 0 until the period's last phase unless pipegen
//   runs with --release-windows, the ring then holds the whole period);
//   after a phase with srcPeriodDone the stream
//   waits until the packer has pushed the whole period, releases the rest
//   and the next phase reads the next period. srcPeriodTiles == 0: FIFO,
//   each phase sends the next numMsgs tiles and frees each once every
//   destination has it.
//   Chunk lists (srcChunkOffsets non-empty; pipegen writes them unless run
//   with --no-chunk-lists; like BUDA's dram_scatter_offsets, but tile
//   offsets in the period): the phase's numMsgs tiles are the chunks
//   of srcChunkTiles tiles at these tile offsets of the current period, in
//   list order (numMsgs = size x srcChunkTiles; srcTileOffset = the first
//   offset). One phase then carries a strided or transposed read that would
//   otherwise take one phase per chunk.
// - Fork streams (as BUDA's, linked by buffer instead of fork_stream_ids): a
//   stream outside 8-39 whose phases are all sourceEndpoint on the bufAddr
//   of an output operand stream's sourceEndpoint phases (same core) sends
//   the same packer buffer with its own read pointer (and window); the
//   packer's slot is acked (freed for the kernel) only once every stream over
//   the buffer has freed it. pipegen gives each pipe reading a packer after
//   the first its own fork stream, so one blocked consumer does not starve
//   the others.
// - Several chips (docs/cluster.md): a stream's chip is the chip_<c> of its
//   name; its DRAM phases read and write that chip's DRAM. A src or dest on
//   another chip is allowed only on an ethernet core's stream (ids 0-31,
//   contract::isEthernetCapableStream), in a phase
//   marked ethSender (remoteReceiver, exactly one dest, on the chip at the
//   other end of the core's link) or ethReceiver (remoteSource, exactly one
//   src on that chip). Such a pair is a link like any other: flow control
//   by the receiver's free ring space, tiles in order. pipegen writes them
//   for the relay streams of an ethernet pipe (docs/pipegen.md,
//   "Several chips").
// - intermediate: the stream only describes an operand buffer the kernel
//   packs and unpacks itself (intermediates 24-31, matmul spill, gradient
//   accumulators); the stream engine moves nothing (numMsgs = tiles through
//   it, informative; both sourceEndpoint and localReceiver are set). With
//   dramBufNocAddr != 0 (gradient_op buffers: the op's ram cell) the
//   firmware loads the buffer's numMsgs tiles from that DRAM buffer before
//   the threads start and writes them back after they finish (its dram_blob
//   entry has dram_input, dram_output and dram_ram, and gives the phase its
//   dramBufSizeTiles); the slot is the one the header's wr_ptr names (a
//   ram's pointers are the runtime's: the device does not move them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::blob {

constexpr uint32_t kStreamsPerCore = 64;
constexpr uint32_t kOperandStreamBase = 8;    // stream id of operand 0
constexpr uint32_t kOperandStreamEnd = 40;    // first id past operand 31

// chip_<c>__y_<y>__x_<x>__stream_id_<s>: NOC (physical) coordinates.
struct StreamName {
  uint32_t chip = 0;
  uint32_t y = 0;
  uint32_t x = 0;
  uint32_t streamId = 0;
  auto operator<=>(const StreamName&) const = default;
};

// A field we read from a BUDA blob.yaml but do not model (kept for warnings
// and round trips; never encoded in the binary blob).
struct ExtraField {
  std::string key;
  std::string value;
};

// One phase of one stream (one `chip_..__stream_id_..:` map under `phase_<n>:`).
struct StreamPhase {
  uint64_t phaseId = 0;           // phase_id
  uint32_t numMsgs = 0;           // num_msgs: tiles moved in this phase
  uint32_t msgSize = 0;           // msg_size: bytes per tile (header + data + padding)
  uint32_t bufAddr = 0;           // buf_addr: L1 byte address of the stream's ring
  uint32_t bufSize = 0;           // buf_size: ring size in bytes (a multiple of msgSize)
  uint32_t numItersInEpoch = 1;   // num_iters_in_epoch
  uint64_t pipeId = 0;            // pipe_id (0 = none): for diagnostics
  uint64_t bufId = 0;             // buf_id (0 = none): the pipegen.yaml buffer
  // Source role (exactly one is true).
  bool sourceEndpoint = false;    // source_endpoint
  bool remoteSource = false;      // remote_source
  bool dramInput = false;         // dram_input
  // Destination role (exactly one is true).
  bool localReceiver = false;     // local_receiver
  bool remoteReceiver = false;    // remote_receiver
  bool dramOutput = false;        // dram_output
  // Ethernet (multi-chip; BUDA's field names): the phase's one dest
  // (ethSender) or one src (ethReceiver) is a stream on another chip, at
  // the other end of this ethernet core's link; the tiles cross the link.
  bool ethSender = false;         // eth_sender
  bool ethReceiver = false;       // eth_receiver
  std::vector<StreamName> src;    // src: senders of a remoteSource phase, in order
  std::vector<StreamName> dest;   // dest: receivers of a remoteReceiver phase (>1: multicast)
  // DRAM side (dramInput / dramOutput).
  uint64_t dramBufNocAddr = 0;    // dram_buf_noc_addr: (channel NOC x,y << 32) | byte address of the queue header
  bool dramRam = false;           // dram_ram: random-access buffer, no header pointer updates
  uint32_t dramBufSizeQSlots = 0; // dram_buf_size_q_slots (from dram_blob)
  uint32_t dramBufSizeTiles = 0;  // dram_buf_size_tiles: tiles of one slot (from dram_blob)
  uint32_t dramChunkTiles = 0;    // dram_buf_read_chunk_size_tiles / dram_buf_write_chunk_size_tiles
  uint32_t dramReaderIndex = 0;   // reader_index: this reader among total_readers
  uint32_t dramTotalReaders = 1;  // total_readers: readers sharing the rd pointer
  // NOC routing.
  uint32_t incomingDataNoc = 0;   // incoming_data_noc
  uint32_t outgoingDataNoc = 0;   // outgoing_data_noc
  uint32_t vc = 0;                // vc
  // Data format code (lib/device/device_contract.h DataFormatCode) of the
  // tiles: the firmware writes it into the kernel operand table. Tessera
  // addition (data_format); BUDA omits it.
  uint32_t dataFormat = 0;
  // Tessera additions written by pipegen (semantics in the header comment).
  uint32_t srcPeriodTiles = 0;    // src_period_tiles: window (period) size; 0 = FIFO source
  uint32_t srcTileOffset = 0;     // src_tile_offset: first tile of the period this phase sends
  bool srcPeriodDone = false;     // src_period_done: release the period (pop the slot) after this phase
  uint32_t srcFreedTiles = 0;     // src_freed_tiles: windowed sourceEndpoint: tiles of the period released after this phase
  std::vector<uint32_t> srcChunkOffsets; // src_chunk_offsets: windowed: the chunks this phase sends (empty: one range)
  uint32_t srcChunkTiles = 0;     // src_chunk_tiles: tiles per chunk of srcChunkOffsets
  bool intermediate = false;      // intermediate: kernel-local operand buffer, nothing to move
  bool dramPadding = false;       // dram_padding: dramInput of the constant tile at dramBufNocAddr (runtime-written)
  float paddingValue = 0.0f;      // padding_value: the value of every datum of that tile
  // Untilized output (untilize_*; Tessera addition): the tiles are row-major
  // blocks, see the header comment. untilizeCDim == 0: tiled.
  uint32_t untilizeRDim = 0;      // untilize_r_dim: a core's block, rows in tiles
  uint32_t untilizeCDim = 0;      // untilize_c_dim: a core's block, columns in tiles
  uint32_t untilizeFullRDim = 0;  // untilize_full_r_dim: the whole output tensor, rows in tiles
  uint32_t untilizeFullCDim = 0;  // untilize_full_c_dim: the whole output tensor, columns in tiles
  uint32_t untilizeZDim = 0;      // untilize_z_dim: t slices per entry
  // untilize_tile_dim_r/c (Tessera addition, tile_dim): rows and columns of
  // one tile of the untilized data; the dims above count such tiles.
  uint32_t untilizeTileR = 32, untilizeTileC = 32;
  std::vector<ExtraField> extra;
};

struct Stream {
  StreamName name;
  std::vector<StreamPhase> phases;  // in phase order
};

// A dram_blob entry: the DRAM side of a DRAM-reading/writing stream.
struct DramIo {
  StreamName name;
  uint32_t index = 0;             // the `0:` key (buffer index of the stream)
  uint64_t dramBufNocAddr = 0;
  uint32_t dramBufSizeBytes = 0;
  uint32_t dramBufSizeQSlots = 0;
  uint32_t dramBufSizeTiles = 0;
  uint32_t chunkTiles = 0;        // read or write chunk size in tiles
  bool input = false;             // dram_input
  bool output = false;            // dram_output
  bool ram = false;               // dram_ram
  uint32_t msgSize = 0;
  uint32_t numMsgs = 0;
  uint32_t readerIndex = 0;
  uint32_t totalReaders = 1;
  std::vector<ExtraField> extra;
};

// One epoch's blob.yaml.
struct BlobYaml {
  std::vector<DramIo> dramBlob;
  std::vector<Stream> streams;    // sorted by name; phases merged from all phase_<n> maps
};

// What the blob of one core carries (decoded from its L1 bytes).
struct CoreBlob {
  uint32_t chip = 0;
  uint32_t y = 0;
  uint32_t x = 0;
  uint32_t epoch = 0;
  std::vector<Stream> streams;    // streams of this core only, sorted by stream id
};

}  // namespace tessera::blob
