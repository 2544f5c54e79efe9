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
