// Binary overlay blobs: the bytes blobgen writes for one core (as .hex) and
// the simulator's stream engine decodes from that core's L1 at
// contract::kOverlayBlobBase. Layout: docs/device-model.md, "Overlay blobs".
//
// Layout version 5 in short (all fields little-endian 32-bit words; every
// offset is in bytes from the first byte of the blob, so a blob is
// relocatable):
//   header         12 words: magic 'TSBL', version, total bytes, checksum,
//                  chip, y, x, epoch, stream count, stream table offset,
//                  config count, config table offset
//   stream table   3 words per stream: stream id, phase count, phases offset
//   phase records  9 words per phase: what changes phase by phase (id,
//                  flags, num_msgs, src_tile_offset, src_freed_tiles, chunk
//                  size and chunk list offset) and a config index
//   config records 30 words each: everything else of a phase (buffer, DRAM,
//                  NOC, window size, src/dest lists, padding value,
//                  untilize dims); identical configs are
//                  stored once, so long phase lists stay small
//   stream refs    1 word per src/dest entry: chip<<24 | y<<16 | x<<8 | stream;
//                  a ref to another chip only in a phase flagged eth_sender
//                  (dest) or eth_receiver (src), version 5
//   chunk lists    1 word per chunk (a tile offset in the period) of the
//                  phases with src_chunk_offsets, num_msgs / chunk tiles
//                  words each; identical lists are stored once
//
// Layout version 6 (phase loops, blob/phase_loops.hpp) is version 5 with
// loop records among a stream's phase records: a record whose flags word is
// kFlagLoop repeats the items before it (count, body items, the deltas of
// phase id, src_tile_offset, src_freed_tiles and chunk offsets). blobgen
// writes version 6 only for a blob that would not fit the overlay region
// as version 5, so every blob that fits flat keeps its version 5 bytes.
#pragma once

#include "blob/blob_model.hpp"
#include "support/expected.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::blob {

// 32-bit little-endian words to place at contract::kOverlayBlobBase.
// Precondition: checkEncodable(blob) is empty (out-of-range coordinates are
// otherwise truncated to their field widths). Streams are written sorted by
// stream id whatever their order in `blob`.
std::vector<uint32_t> encodeCoreBlob(const CoreBlob& blob);

// Decodes the blob at the start of `bytes` (the overlay region of a core's
// L1). On malformed bytes returns a Failure whose message names the offset
// and the field.
Expected<CoreBlob> decodeCoreBlob(std::span<const uint8_t> bytes);

// One contiguous run of words of a .hex file: `@<word address>` then one
// 8-digit hex word per line.
struct HexSegment {
  uint32_t wordAddress = 0;
  std::vector<uint32_t> words;
};

std::string writeHex(const std::vector<HexSegment>& segments);
// Parses .hex text; on error returns a Failure "line N: message".
Expected<std::vector<HexSegment>> readHex(const std::string& text);

// ---- Additions (blobgen, tests, simulator) ----

// Layout constants (docs/device-model.md, "Overlay blobs and streams").
constexpr uint32_t kBlobMagic = 0x4C425354;  // bytes 'T' 'S' 'B' 'L' in memory order
constexpr uint32_t kBlobVersion = 5;
constexpr uint32_t kBlobVersionLoops = 6;  // version 5 + loop records
constexpr uint32_t kHeaderWords = 12;
constexpr uint32_t kStreamEntryWords = 3;
constexpr uint32_t kPhaseRecordWords = 9;
constexpr uint32_t kConfigRecordWords = 30;
// Header word indices.
constexpr uint32_t kHdrMagic = 0, kHdrVersion = 1, kHdrTotalBytes = 2, kHdrChecksum = 3, kHdrChip = 4, kHdrY = 5,
                   kHdrX = 6, kHdrEpoch = 7, kHdrStreamCount = 8, kHdrStreamTableOffset = 9, kHdrConfigCount = 10,
                   kHdrConfigTableOffset = 11;
// Phase record word indices.
// kPhChunkTiles 0: the phase sends one range (kPhChunkList is then 0).
constexpr uint32_t kPhIdLo = 0, kPhIdHi = 1, kPhFlags = 2, kPhNumMsgs = 3, kPhSrcTileOffset = 4, kPhConfig = 5,
                   kPhSrcFreedTiles = 6, kPhChunkTiles = 7, kPhChunkList = 8;
// Config record word indices.
constexpr uint32_t kCfMsgSize = 0, kCfBufAddr = 1, kCfBufSize = 2, kCfNumIters = 3, kCfPipeIdLo = 4,
                   kCfPipeIdHi = 5, kCfBufIdLo = 6, kCfBufIdHi = 7, kCfDramAddrLo = 8, kCfDramAddrHi = 9,
                   kCfDramQSlots = 10, kCfDramSlotTiles = 11, kCfDramChunkTiles = 12, kCfDramReaderIndex = 13,
                   kCfDramTotalReaders = 14, kCfIncomingNoc = 15, kCfOutgoingNoc = 16, kCfVc = 17,
                   kCfDataFormat = 18, kCfSrcPeriodTiles = 19, kCfSrcCount = 20, kCfSrcOffset = 21,
                   kCfDestCount = 22, kCfDestOffset = 23, kCfPaddingValue = 24, kCfUntilizeRDim = 25,
                   kCfUntilizeCDim = 26, kCfUntilizeFullRDim = 27, kCfUntilizeFullCDim = 28, kCfUntilizeZDim = 29;
// Phase flag bits (word kPhFlags); the other bits must be zero.
enum PhaseFlag : uint32_t {
  kFlagSourceEndpoint = 1u << 0,
  kFlagRemoteSource = 1u << 1,
  kFlagDramInput = 1u << 2,
  kFlagLocalReceiver = 1u << 3,
  kFlagRemoteReceiver = 1u << 4,
  kFlagDramOutput = 1u << 5,
  kFlagDramRam = 1u << 6,
  kFlagSrcPeriodDone = 1u << 7,
  kFlagIntermediate = 1u << 8,
  kFlagDramPadding = 1u << 9,
  kFlagEthSender = 1u << 10,    // version 5: the one dest is on another chip, over this core's link
  kFlagEthReceiver = 1u << 11,  // version 5: the one src is on another chip
  kFlagsKnown = 0xFFF,
  kFlagLoop = 1u << 31,         // version 6: the record is a loop record (no other bit set)
};
// Loop record word indices (version 6; 9 words like a phase record, the
// flags word at the same index; word 8 is 0). The deltas wrap: 64 bits for
// the phase id, 32 for the others.
constexpr uint32_t kLpCount = 0, kLpBodyItems = 1, kLpIdDeltaLo = 3, kLpIdDeltaHi = 4, kLpOffsetDelta = 5,
                   kLpFreedDelta = 6, kLpChunkDelta = 7, kLpReserved = 8;
// Past this many phases in all (loops expanded) the decoder rejects a
// blob (bounds the memory a hostile blob can make it use).
constexpr uint64_t kMaxDecodedPhases = 1u << 18;  // 7x the largest corpus core (37,855 phases)
// Decoding gives every phase its own copy of its config's src/dest lists
// and of its chunk list; past this many entries in all the blob is rejected
// (bounds the memory a hostile blob can make the decoder use).
constexpr uint64_t kMaxDecodedRefs = 1u << 20;

// One src/dest entry as a word; streamId < kStreamsPerCore, others <= 255.
uint32_t packStreamRef(const StreamName& name);
StreamName unpackStreamRef(uint32_t word);

// Empty when phase `p` of `stream` obeys the several-chips rule of
// blob_model.hpp: every src (dest) on another chip than the stream's is
// the one src (dest) of a remote_source (remote_receiver) phase flagged
// eth_receiver (eth_sender) on an ethernet-capable stream id, and a flagged
// phase has exactly that. Otherwise what is wrong, naming the reference.
std::string checkEthernetPhase(const StreamPhase& p, const StreamName& stream);

// Empty when `blob` can be encoded; otherwise what cannot (a coordinate over
// 255, a stream id >= kStreamsPerCore, two streams with one id, a chunk list
// that does not add up to the phase's num_msgs, a phase checkEthernetPhase
// rejects).
std::string checkEncodable(const CoreBlob& blob);

// The same blob as version 6 when phase loops make it smaller than version
// 5 (compressPhases on every stream), else the version 5 words.
std::vector<uint32_t> encodeCoreBlobLoops(const CoreBlob& blob);

// Bytes encodeCoreBlob would produce (64-bit: never wraps). Compare with
// contract::kOverlayBlobSize before encoding.
uint64_t encodedSizeBytes(const CoreBlob& blob);

// What the encoded blob is made of (blobgen's size diagnostics, --stats).
struct BlobSizeInfo {
  uint64_t streams = 0;
  uint64_t phases = 0;
  uint64_t configs = 0;  // distinct phase configs (stored once each)
  uint64_t refs = 0;     // src/dest entries of those configs
  uint64_t chunkWords = 0;  // words of the distinct chunk lists
  uint64_t records = 0;  // phase records written (= phases in version 5)
  uint64_t loops = 0;    // loop records written (version 6)
  uint64_t bytes = 0;    // 4 * (12 + 3 streams + 9 (records + loops) + 30 configs + refs + chunkWords)
  uint32_t version = kBlobVersion;
};
BlobSizeInfo blobSizeInfo(const CoreBlob& blob);

// What blobgen needs in one pass: the size info, and the words when the
// blob fits `limitBytes` (else none). Version 5 when that fits, else
// version 6 with phase loops when that is smaller (the info is then of
// the version 6 blob, whether it fits or not).
struct EncodedBlob {
  BlobSizeInfo info;
  std::vector<uint32_t> words;
};
EncodedBlob encodeCoreBlobWithin(const CoreBlob& blob, uint64_t limitBytes);

// The checksum word: the sum mod 2^32 of every word of the blob, with the
// checksum word itself counted as 0.
uint32_t blobChecksum(std::span<const uint32_t> words);

// Little-endian bytes of `words` (what lands in L1), and back (size must be a
// multiple of 4; a shorter tail is ignored).
std::vector<uint8_t> wordsToBytes(std::span<const uint32_t> words);
std::vector<uint32_t> bytesToWords(std::span<const uint8_t> bytes);

// The decoded blob as readable YAML (blobgen --dump): header fields, then
// every stream and phase with blob.yaml field names. Deterministic.
std::string dumpCoreBlob(const CoreBlob& blob, uint64_t sizeBytes, uint32_t version = kBlobVersion);

}  // namespace tessera::blob
