// lib/blob binary layer: the words of a tiny blob derived by hand from the
// layout in docs/device-model.md ("Overlay blobs and streams"), encode/decode
// round trips, decoder errors on truncated and corrupted bytes (an error,
// never a crash), and the .hex text form.
#include "blob/blob_binary.hpp"
#include "device/device_contract.h"

#include <catch2/catch.hpp>

#include <tuple>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace tessera::blob;

namespace {

// The failure's message, "" after a success: what INFO prints either way.
template <class T>
std::string messageOf(const tessera::Expected<T>& e) {
  return e ? std::string() : e.error();
}

StreamName sn(uint32_t y, uint32_t x, uint32_t s, uint32_t chip = 0) { return StreamName{chip, y, x, s}; }

// Field-by-field equality with a readable failure.
void requireSameBlob(const CoreBlob& a, const CoreBlob& b) {
  REQUIRE(a.chip == b.chip);
  REQUIRE(a.y == b.y);
  REQUIRE(a.x == b.x);
  REQUIRE(a.epoch == b.epoch);
  REQUIRE(a.streams.size() == b.streams.size());
  for (size_t i = 0; i < a.streams.size(); ++i) {
    const Stream& s = a.streams[i];
    const Stream& t = b.streams[i];
    INFO("stream " << i);
    REQUIRE(s.name == t.name);
    REQUIRE(s.phases.size() == t.phases.size());
    for (size_t k = 0; k < s.phases.size(); ++k) {
      INFO("phase " << k);
      const StreamPhase& p = s.phases[k];
      const StreamPhase& q = t.phases[k];
      CHECK(p.phaseId == q.phaseId);
      CHECK(p.numMsgs == q.numMsgs);
      CHECK(p.msgSize == q.msgSize);
      CHECK(p.bufAddr == q.bufAddr);
      CHECK(p.bufSize == q.bufSize);
      CHECK(p.numItersInEpoch == q.numItersInEpoch);
      CHECK(p.pipeId == q.pipeId);
      CHECK(p.bufId == q.bufId);
      CHECK(p.sourceEndpoint == q.sourceEndpoint);
      CHECK(p.remoteSource == q.remoteSource);
      CHECK(p.dramInput == q.dramInput);
      CHECK(p.localReceiver == q.localReceiver);
      CHECK(p.remoteReceiver == q.remoteReceiver);
      CHECK(p.dramOutput == q.dramOutput);
      CHECK(p.src == q.src);
      CHECK(p.dest == q.dest);
      CHECK(p.dramBufNocAddr == q.dramBufNocAddr);
      CHECK(p.dramRam == q.dramRam);
      CHECK(p.dramBufSizeQSlots == q.dramBufSizeQSlots);
      CHECK(p.dramBufSizeTiles == q.dramBufSizeTiles);
      CHECK(p.dramChunkTiles == q.dramChunkTiles);
      CHECK(p.dramReaderIndex == q.dramReaderIndex);
      CHECK(p.dramTotalReaders == q.dramTotalReaders);
      CHECK(p.incomingDataNoc == q.incomingDataNoc);
      CHECK(p.outgoingDataNoc == q.outgoingDataNoc);
      CHECK(p.vc == q.vc);
      CHECK(p.dataFormat == q.dataFormat);
      CHECK(p.srcPeriodTiles == q.srcPeriodTiles);
      CHECK(p.srcTileOffset == q.srcTileOffset);
      CHECK(p.srcPeriodDone == q.srcPeriodDone);
      CHECK(p.srcFreedTiles == q.srcFreedTiles);
      CHECK(p.srcChunkOffsets == q.srcChunkOffsets);
      CHECK(p.srcChunkTiles == q.srcChunkTiles);
      CHECK(p.intermediate == q.intermediate);
      CHECK(p.dramPadding == q.dramPadding);
      CHECK(std::bit_cast<uint32_t>(p.paddingValue) == std::bit_cast<uint32_t>(q.paddingValue));  // NaNs too
      CHECK(p.untilizeRDim == q.untilizeRDim);
      CHECK(p.untilizeCDim == q.untilizeCDim);
      CHECK(p.untilizeFullRDim == q.untilizeFullRDim);
      CHECK(p.untilizeFullCDim == q.untilizeFullCDim);
      CHECK(p.untilizeZDim == q.untilizeZDim);
      CHECK(p.untilizeTileR == q.untilizeTileR);
      CHECK(p.untilizeTileC == q.untilizeTileC);
    }
  }
}

// The tiny blob of the hand derivation below.
CoreBlob tinyBlob() {
  CoreBlob b;
  b.chip = 0;
  b.y = 1;
  b.x = 3;
  b.epoch = 2;
  Stream s;
  s.name = sn(1, 3, 8);
  StreamPhase p;
  p.phaseId = 0;
  p.numMsgs = 4;
  p.msgSize = 2080;
  p.bufAddr = 0x30000;
  p.bufSize = 8320;
  p.numItersInEpoch = 1;
  p.pipeId = 0x100000002ull;
  p.remoteSource = true;
  p.localReceiver = true;
  p.src = {sn(1, 1, 24)};
  p.vc = 3;
  p.dataFormat = 2;  // Float16_b
  s.phases.push_back(p);
  b.streams.push_back(s);
  return b;
}

// Derived by hand from the documented layout (not by running the encoder):
//   header 12 words at 0x00, stream table 1 x 3 words at 0x30 (48),
//   1 phase record x 9 words at 0x3c (60), 1 config record x 30 words at
//   0x60 (96), 1 stream ref at 0xd8 (216); total 220 bytes = 55 words.
//   checksum = sum of all words but word 3, mod 2^32:
//     magic 0x4c425354
//     + header 5 + 220 + 0 + 1 + 3 + 2 + 1 + 48 + 1 + 96           = 377
//     + table  8 + 1 + 60                                          = 69
//     + phase  flags 0xa (remote_source 2 | local_receiver 8) + num_msgs 4
//              + src_tile_offset 0 + config 0 + src_freed_tiles 0
//              + no chunk list (0, 0)                              = 14
//     + config 2080 + 0x30000 (196608) + 8320 + num_iters 1 + pipe lo 2
//              + pipe hi 1 + total_readers 1 + vc 3 + data_format 2
//              + src count 1 + src offset 216 (padding value 0.0f and
//              the five untilize words are 0)                      = 207235
//     + ref    0x00010118 (chip 0, y 1, x 1, stream 24)             = 65816
//     small terms: 377 + 69 + 14 + 207235 + 65816 = 273511 = 0x42c67
//     0x4c425354 + 0x42c67 = 0x4c467fbb
const std::vector<uint32_t> kTinyWords = {
    // header: magic, version 5, 220 bytes, checksum, chip 0, y 1, x 3,
    // epoch 2, 1 stream, table at 48, 1 config, configs at 96
    0x4c425354, 5, 220, 0x4c467fbb, 0, 1, 3, 2, 1, 48, 1, 96,
    // stream table: id 8, 1 phase at 60
    8, 1, 60,
    // phase record
    0, 0,           // phase_id lo, hi
    0xa,            // flags
    4,              // num_msgs
    0,              // src_tile_offset
    0,              // config index
    0,              // src_freed_tiles
    0, 0,           // chunk tiles, chunk list offset: none
    // config record
    2080,           // msg_size
    0x30000, 8320,  // buf_addr, buf_size
    1,              // num_iters_in_epoch
    2, 1,           // pipe_id lo, hi
    0, 0,           // buf_id lo, hi
    0, 0,           // dram_buf_noc_addr lo, hi
    0, 0, 0,        // q slots, slot tiles, chunk tiles
    0, 1,           // reader_index, total_readers
    0, 0, 3,        // incoming noc, outgoing noc, vc
    2,              // data_format
    0,              // src_period_tiles
    1, 216,         // src count, offset
    0, 0,           // dest count, offset
    0,              // padding_value (0.0f)
    0, 0, 0, 0, 0,  // untilize r, c, full r, full c, z: tiled
    // stream refs
    0x00010118,
};

// A larger blob: several streams out of order, gathers, multicast, DRAM.
CoreBlob bigBlob() {
  CoreBlob b;
  b.chip = 1;
  b.y = 11;
  b.x = 12;
  b.epoch = 7;
  for (uint32_t id : {40u, 8u, 24u, 0u}) {
    Stream s;
    s.name = sn(11, 12, id, 1);
    for (uint32_t k = 0; k < id / 8 + 1; ++k) {
      StreamPhase p;
      p.phaseId = (uint64_t{k} << 32) | (id + k);
      p.numMsgs = 1 + k;
      p.msgSize = 1088;
      p.bufAddr = 0x20000 + 0x1000 * id;
      p.bufSize = 1088 * 4;
      p.numItersInEpoch = 3;
      p.pipeId = 100000000000ull + id;
      p.bufId = 200000000000ull + k;
      if (id == 0) {
        p.dramInput = true;
        p.remoteReceiver = true;
        p.dest = {sn(1, 1, 8, 1), sn(1, 2, 8, 1), sn(2, 1, 8, 1)};
        p.dramBufNocAddr = 0x8000000100000010ull;
        p.dramRam = k % 2 == 1;
        p.dramBufSizeQSlots = 8;
        p.dramBufSizeTiles = 512;
        p.dramChunkTiles = 16;
        p.dramReaderIndex = 2;
        p.dramTotalReaders = 4;
      } else if (id == 8) {
        p.remoteSource = true;
        p.localReceiver = true;
        p.src = {sn(1, 1, 24, 1), sn(1, 2, 24, 1)};
      } else {
        p.sourceEndpoint = true;
        p.dramOutput = id == 24;
        p.remoteReceiver = id != 24;
        if (id != 24) p.dest = {sn(255, 255, 63, 1)};
      }
      p.srcPeriodTiles = (id == 0 || id == 24) ? 16 : 0;
      p.srcTileOffset = k * 4;
      if (id == 24 && k == 3) p.srcChunkOffsets = {12, 0}, p.srcChunkTiles = 2;  // 2 chunks of 2 = num_msgs 4
      p.srcPeriodDone = k % 2 == 0;
      p.intermediate = id == 40;
      p.incomingDataNoc = 1;
      p.outgoingDataNoc = k % 2;
      p.vc = 5;
      p.dataFormat = 0xFFFFFFFFu;
      s.phases.push_back(p);
    }
    b.streams.push_back(s);
  }
  return b;
}

CoreBlob sortedById(CoreBlob b) {
  std::sort(b.streams.begin(), b.streams.end(),
            [](const Stream& x, const Stream& y) { return x.name.streamId < y.name.streamId; });
  return b;
}

tessera::Expected<CoreBlob> decodeWords(const std::vector<uint32_t>& w) {
  std::vector<uint8_t> bytes = wordsToBytes(w);
  return decodeCoreBlob(bytes);
}

// Recomputes the checksum after a deliberate corruption, so the error comes
// from the field check, not the checksum.
std::vector<uint32_t> withFixedChecksum(std::vector<uint32_t> w) {
  w[kHdrChecksum] = blobChecksum(w);
  return w;
}

}  // namespace

TEST_CASE("tiny blob: words derived by hand from the documented layout", "[blob]") {
  CoreBlob b = tinyBlob();
  REQUIRE(checkEncodable(b).empty());
  REQUIRE(encodedSizeBytes(b) == 220);
  std::vector<uint32_t> words = encodeCoreBlob(b);
  REQUIRE(words == kTinyWords);
}

TEST_CASE("tiny blob: little-endian bytes, magic reads TSBL", "[blob]") {
  std::vector<uint8_t> bytes = wordsToBytes(kTinyWords);
  REQUIRE(bytes.size() == 220);
  CHECK(std::string(bytes.begin(), bytes.begin() + 4) == "TSBL");
  // total_bytes = 220 = 0xdc at offset 8, low byte first
  CHECK(bytes[8] == 0xdc);
  CHECK(bytes[9] == 0);
  // the stream ref 0x00010118 at offset 216: 18 01 01 00
  CHECK(bytes[216] == 0x18);
  CHECK(bytes[217] == 0x01);
  CHECK(bytes[218] == 0x01);
  CHECK(bytes[219] == 0x00);
  CHECK(bytesToWords(bytes) == kTinyWords);
}

TEST_CASE("tiny blob decodes from the hand-written words", "[blob]") {
  auto d = decodeWords(kTinyWords);
  INFO(messageOf(d));
  REQUIRE(d);
  requireSameBlob(*d, tinyBlob());
}

TEST_CASE("round trip of a larger blob; streams come back sorted by id", "[blob]") {
  CoreBlob b = bigBlob();
  REQUIRE(checkEncodable(b).empty());
  std::vector<uint32_t> w = encodeCoreBlob(b);
  REQUIRE(w.size() * 4 == encodedSizeBytes(b));
  auto d = decodeWords(w);
  INFO(messageOf(d));
  REQUIRE(d);
  requireSameBlob(*d, sortedById(b));
  // Re-encoding the decoded blob gives the same words (canonical form).
  CHECK(encodeCoreBlob(*d) == w);
}

TEST_CASE("an empty blob (no streams) round-trips", "[blob]") {
  CoreBlob b;
  b.y = 5;
  b.x = 6;
  std::vector<uint32_t> w = encodeCoreBlob(b);
  REQUIRE(w.size() == kHeaderWords);
  CHECK(w[kHdrStreamTableOffset] == 0);  // a zero count has a zero offset
  CHECK(w[kHdrConfigTableOffset] == 0);
  auto d = decodeWords(w);
  REQUIRE(d);
  CHECK(d->streams.empty());
  CHECK(d->y == 5);
}

TEST_CASE("a stream with no phases round-trips", "[blob]") {
  CoreBlob b;
  b.streams.push_back(Stream{sn(0, 0, 9), {}});
  std::vector<uint32_t> w = encodeCoreBlob(b);
  REQUIRE(w.size() == kHeaderWords + kStreamEntryWords);
  CHECK(w[kHeaderWords + 2] == 0);  // phases offset 0 when there are none
  auto d = decodeWords(w);
  REQUIRE(d);
  REQUIRE(d->streams.size() == 1);
  CHECK(d->streams[0].phases.empty());
}

TEST_CASE("decoding bytes past the blob (the whole overlay region) ignores the tail", "[blob]") {
  std::vector<uint8_t> bytes = wordsToBytes(kTinyWords);
  bytes.resize(tessera::contract::kOverlayBlobSize, 0xCD);
  auto d = decodeCoreBlob(bytes);
  REQUIRE(d);
  requireSameBlob(*d, tinyBlob());
}

TEST_CASE("checkEncodable names what does not fit", "[blob]") {
  CoreBlob b = tinyBlob();
  b.streams[0].name.streamId = 64;
  CHECK_THAT(checkEncodable(b), Catch::Contains("stream id 64"));
  b = tinyBlob();
  b.streams.push_back(b.streams[0]);
  CHECK_THAT(checkEncodable(b), Catch::Contains("appears twice"));
  b = tinyBlob();
  b.streams[0].phases[0].src[0].x = 256;
  CHECK_THAT(checkEncodable(b), Catch::Contains("src chip_0__y_1__x_256__stream_id_24"));
  b = tinyBlob();
  b.y = 300;
  CHECK_THAT(checkEncodable(b), Catch::Contains("y 300"));
}

TEST_CASE("decoder: every truncation is an error naming the offset", "[blob]") {
  std::vector<uint8_t> bytes = wordsToBytes(kTinyWords);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto d = decodeCoreBlob(std::span<const uint8_t>(bytes.data(), n));
    INFO("length " << n);
    REQUIRE_FALSE(d);
    CHECK_THAT(messageOf(d), Catch::StartsWith("offset 0x"));
    CHECK_THAT(messageOf(d), Catch::Contains("truncated"));
  }
}

TEST_CASE("decoder: named errors for corrupted fields", "[blob]") {
  struct Case {
    size_t word;
    uint32_t value;
    bool fixChecksum;
    const char* expect;
  };
  const Case cases[] = {
      {kHdrMagic, 0x12345678, false, "offset 0x0: header.magic: bad magic 0x12345678"},
      {kHdrVersion, 1, false, "offset 0x4: header.version: unsupported layout version 1 (expected 5 or 6)"},
      {kHdrVersion, 4, false, "offset 0x4: header.version: unsupported layout version 4 (expected 5 or 6)"},
      {kHdrTotalBytes, 166, false, "offset 0x8: header.total_bytes: 166 bytes: must be a multiple of 4 in [48, 57344]"},
      {kHdrTotalBytes, 0x10000, false, "header.total_bytes"},
      {kHdrChecksum, 0, false, "offset 0xc: header.checksum: checksum mismatch: stored 0x0, computed 0x4c467fbb"},
      {20, 0xFFFF, false, "header.checksum"},  // a phase word changed, checksum stale
      {kHdrY, 256, true, "offset 0x14: header.y: 256 is over 255 (a stream reference holds 8 bits)"},
      {kHdrChip, 0x27000001, true, "offset 0x10: header.chip: 654311425 is over 255"},  // fuzz-blob finding B1
      {kHdrX, 0xFFFFFFFF, true, "offset 0x18: header.x: 4294967295 is over 255"},
      {kHdrStreamCount, 65, true, "offset 0x20: header.stream_count: 65 streams"},
      {kHdrStreamCount, 2, true, "stream[0] (id 8) phase records: words at offset 0x3c overlap another part of the blob (offset 0x3c)"},
      {kHdrStreamTableOffset, 42, true, "offset 0x24: stream table: offset 0x2a is not a multiple of 4"},
      {kHdrStreamTableOffset, 4, true, "stream table: offset 0x4 points into the header"},
      {kHdrStreamTableOffset, 60, true, "offset 0x44: stream[0] (id 0) phase records offset: nothing to point at but offset 0xa (expected 0)"},
      {kHdrConfigCount, 2, true, "offset 0x2c: config table: 60 words at offset 0x60 run past the end of the blob (220 bytes)"},
      {kHdrConfigCount, 0, true, "offset 0x2c: config table offset: nothing to point at but offset 0x60 (expected 0)"},
      {kHdrConfigTableOffset, 52, true, "config table: words at offset 0x34 overlap another part of the blob (offset 0x34)"},
      {12, 64, true, "offset 0x30: stream[0].stream_id: 64 is not below 64"},
      {13, 2, true, "offset 0x38: stream[0] (id 8) phase records: words at offset 0x3c overlap another part of the blob (offset 0x60)"},
      {13, 0, true, "offset 0x38: stream[0] (id 8) phase records offset: nothing to point at but offset 0x3c (expected 0)"},
      {14, 44, true, "offset 0x38: stream[0] (id 8) phase records: offset 0x2c points into the header"},
      {14, 48, true, "stream[0] (id 8) phase records: words at offset 0x30 overlap"},
      {14, 208, true, "stream[0] (id 8) phase records: 9 words at offset 0xd0 run past the end of the blob (220 bytes)"},
      {17, 0x100a, true, "offset 0x44: stream[0] (id 8).phase[0].flags: unknown flag bits 0x1000"},
      {17, 0x40a, true, "offset 0x44: stream[0] (id 8).phase[0].flags: eth_sender on a phase that is not remote_receiver"},
      {17, 0x80a, true, "offset 0x44: stream[0] (id 8).phase[0].flags: eth_receiver but src chip_0__y_1__x_1__stream_id_24 is on this stream's chip 0"},
      {54, 0x01010118, true, "offset 0x44: stream[0] (id 8).phase[0].flags: src chip_1__y_1__x_1__stream_id_24 is on chip 1, not chip 0, but the phase has no eth_receiver flag"},
      {20, 1, true, "offset 0x50: stream[0] (id 8).phase[0].config: index 1 is not below the config count 1"},
      {22, 1, true, "offset 0x5c: stream[0] (id 8).phase[0] chunk list: offset 0x0 points into the header"},
      {22, 3, true, "offset 0x58: stream[0] (id 8).phase[0].chunk_tiles: num_msgs 4 is not a positive multiple of the chunk size 3"},
      {23, 0xd8, true, "offset 0x5c: stream[0] (id 8).phase[0].chunk_list: no chunk size but offset 0xd8 (expected 0)"},
      {44, 2, true, "offset 0xb4: config[0].src list: 2 words at offset 0xd8 run past"},
      {45, 0xd4, true, "offset 0xb4: config[0].src list: words at offset 0xd4 overlap"},
      {47, 0xd8, true, "offset 0xbc: config[0].dest list offset: nothing to point at but offset 0xd8 (expected 0)"},
      {54, 0x00010140, true, "offset 0xd8: config[0].src[0]: stream id 64 is not below 64"},
  };
  for (const Case& c : cases) {
    std::vector<uint32_t> w = kTinyWords;
    w[c.word] = c.value;
    if (c.fixChecksum) w = withFixedChecksum(w);
    auto d = decodeWords(w);
    INFO("word " << c.word << " = " << c.value << ": " << messageOf(d));
    REQUIRE_FALSE(d);
    CHECK_THAT(messageOf(d), Catch::Contains(c.expect));
  }
}

TEST_CASE("decoder: random corruptions never crash and never read out of bounds", "[blob]") {
  std::vector<uint32_t> base = encodeCoreBlob(bigBlob());
  std::mt19937 rng(12345);
  size_t accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint32_t> w = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % w.size();
      switch (rng() % 3) {
        case 0: w[at] = rng(); break;
        case 1: w[at] ^= 1u << (rng() % 32); break;
        default: w[at] = rng() % 256; break;
      }
    }
    if (rng() % 2) w = withFixedChecksum(w);
    std::vector<uint8_t> bytes = wordsToBytes(w);
    bytes.resize(rng() % (bytes.size() + 8));
    auto d = decodeCoreBlob(bytes);
    if (d) {
      ++accepted;
      // Whatever decodes re-encodes to a blob that decodes to the same model.
      auto again = decodeWords(encodeCoreBlob(*d));
      REQUIRE(again);
      requireSameBlob(*again, *d);
    } else {
      REQUIRE_FALSE(messageOf(d).empty());
    }
  }
  CHECK(accepted < 20000);
}

TEST_CASE("window words and the last two flag bits sit where the layout says", "[blob]") {
  CoreBlob b;
  Stream s;
  s.name = sn(0, 0, 24);
  StreamPhase p;
  p.sourceEndpoint = true;    // 0x001
  p.localReceiver = true;     // 0x008
  p.srcPeriodDone = true;     // 0x080
  p.intermediate = true;      // 0x100
  p.dramPadding = true;       // 0x200
  p.srcPeriodTiles = 0x1234;  // phase word 27
  p.srcTileOffset = 0x56;     // phase word 28
  p.srcFreedTiles = 0x78;
  p.paddingValue = -2.5f;     // sign 1, exponent 127 + 1, mantissa .25: 0xc0200000
  p.untilizeRDim = 2;
  p.untilizeCDim = 3;
  p.untilizeFullRDim = 4;
  p.untilizeFullCDim = 6;
  p.untilizeZDim = 5;
  s.phases.push_back(p);
  b.streams.push_back(s);
  std::vector<uint32_t> w = encodeCoreBlob(b);
  // header 12 + stream table 3: the phase record is words 15-23, the config
  // record words 24-53; no refs.
  REQUIRE(w.size() == 54);
  CHECK(w[15 + 2] == 0x389u);   // flags
  CHECK(w[15 + 4] == 0x56u);    // src_tile_offset (per phase)
  CHECK(w[15 + 6] == 0x78u);    // src_freed_tiles (per phase)
  CHECK(w[24 + 19] == 0x1234u); // src_period_tiles (config)
  CHECK(w[24 + 24] == 0xc0200000u);  // padding_value bits
  CHECK(w[24 + 25] == 2u);      // untilize_r_dim
  CHECK(w[24 + 26] == 3u);      // untilize_c_dim
  CHECK(w[24 + 27] == 4u);      // untilize_full_r_dim
  CHECK(w[24 + 28] == 6u);      // untilize_full_c_dim
  CHECK(w[24 + 29] == 5u);      // untilize_z_dim
  auto d = decodeWords(w);
  INFO(messageOf(d));
  REQUIRE(d);
  requireSameBlob(*d, b);
}

TEST_CASE("untilized tiles smaller than 32x32 ride in the z word's top bits", "[blob][tiny]") {
  CoreBlob b;
  Stream s;
  s.name = sn(1, 1, 8);
  StreamPhase p;
  p.msgSize = 64;  // 1x32 Float16_b datums
  p.sourceEndpoint = true;
  p.untilizeRDim = 2;
  p.untilizeCDim = 1;
  p.untilizeFullRDim = 2;
  p.untilizeFullCDim = 1;
  p.untilizeZDim = 5;
  for (auto [r, c, word] : {std::tuple{1u, 32u, 5u | 31u << 24}, std::tuple{32u, 16u, 5u | 1u << 29},
                            std::tuple{16u, 32u, 5u | 16u << 24}, std::tuple{32u, 32u, 5u}}) {
    p.untilizeTileR = r;
    p.untilizeTileC = c;
    s.phases = {p};
    b.streams = {s};
    const std::vector<uint32_t> w = encodeCoreBlob(b);
    INFO(r << "x" << c);
    CHECK(w[24 + 29] == word);  // 32 - rows in [28:24], 16 columns in [29]
    auto d = decodeWords(w);
    REQUIRE(d);
    CHECK(d->streams[0].phases[0].untilizeTileR == r);
    CHECK(d->streams[0].phases[0].untilizeTileC == c);
    CHECK(d->streams[0].phases[0].untilizeZDim == 5u);
  }
  p.untilizeZDim = 1u << 24;
  s.phases = {p};
  b.streams = {s};
  CHECK_FALSE(checkEncodable(b).empty());
}

TEST_CASE("identical configs are stored once", "[blob]") {
  // One stream, three phases: 0 and 2 differ from each other only in what a
  // phase record holds (id, flags, num_msgs, src_tile_offset); 1 has another
  // buffer. Expected: 2 configs, phase configs 0, 1, 0.
  CoreBlob b;
  Stream s;
  s.name = sn(0, 0, 8);
  StreamPhase p;
  p.dramInput = true;
  p.localReceiver = true;
  p.dramBufNocAddr = 0x100000020ull;
  p.srcPeriodTiles = 8;
  p.bufAddr = 0x30000;
  p.dest = {};
  for (uint32_t k = 0; k < 3; ++k) {
    StreamPhase q = p;
    q.phaseId = k;
    q.numMsgs = 2 + k;
    q.srcTileOffset = 2 * k;
    q.srcPeriodDone = k == 2;
    if (k == 1) q.bufAddr = 0x40000;
    s.phases.push_back(q);
  }
  b.streams.push_back(s);
  // 48 + 12 + 3 x 36 + 2 x 120 = 408 bytes
  REQUIRE(encodedSizeBytes(b) == 408);
  std::vector<uint32_t> w = encodeCoreBlob(b);
  REQUIRE(w.size() == 102);
  CHECK(w[kHdrConfigCount] == 2);
  CHECK(w[kHdrConfigTableOffset] == 168);  // 48 + 12 + 108
  CHECK(w[15 + 5] == 0);
  CHECK(w[24 + 5] == 1);
  CHECK(w[33 + 5] == 0);
  CHECK(w[42 + 1] == 0x30000u);  // config 0 buf_addr
  CHECK(w[72 + 1] == 0x40000u);  // config 1 buf_addr (config 0 is words 42-71)
  auto d = decodeWords(w);
  INFO(messageOf(d));
  REQUIRE(d);
  requireSameBlob(*d, b);
}

TEST_CASE("chunk lists: after the refs, identical lists stored once", "[blob]") {
  // Three phases of one windowed DRAM read differing only in their chunk
  // lists: [0, 2, 1, 3] of 1 tile twice, then [4, 0] of 2 tiles. Expected
  // by the layout: header 48 + table 12 + 3 phases x 36 = 168, one config
  // at 168 (120 bytes), no refs, lists at 288 (4 words) and 304 (2 words):
  // 312 bytes.
  CoreBlob b;
  Stream s;
  s.name = sn(0, 0, 8);
  StreamPhase p;
  p.dramInput = true;
  p.localReceiver = true;
  p.dramBufNocAddr = 0x100000020ull;
  p.srcPeriodTiles = 8;
  p.numMsgs = 4;
  p.bufAddr = 0x30000;
  const std::vector<std::pair<std::vector<uint32_t>, uint32_t>> lists = {{{0, 2, 1, 3}, 1}, {{0, 2, 1, 3}, 1}, {{4, 0}, 2}};
  for (uint32_t k = 0; k < 3; ++k) {
    StreamPhase q = p;
    q.phaseId = k;
    q.srcChunkOffsets = lists[k].first;
    q.srcChunkTiles = lists[k].second;
    q.srcTileOffset = q.srcChunkOffsets.front();
    s.phases.push_back(q);
  }
  b.streams.push_back(s);
  REQUIRE(checkEncodable(b).empty());
  REQUIRE(encodedSizeBytes(b) == 312);
  CHECK(blobSizeInfo(b).chunkWords == 6);
  std::vector<uint32_t> w = encodeCoreBlob(b);
  REQUIRE(w.size() == 78);
  CHECK(w[15 + 7] == 1);
  CHECK(w[15 + 8] == 288);
  CHECK(w[24 + 7] == 1);
  CHECK(w[24 + 8] == 288);
  CHECK(w[33 + 7] == 2);
  CHECK(w[33 + 8] == 304);
  CHECK(std::vector<uint32_t>(w.begin() + 72, w.end()) == std::vector<uint32_t>{0, 2, 1, 3, 4, 0});
  auto d = decodeWords(w);
  INFO(messageOf(d));
  REQUIRE(d);
  requireSameBlob(*d, b);
  for (size_t k = 0; k < 3; ++k) {
    CHECK(d->streams[0].phases[k].srcChunkOffsets == lists[k].first);
    CHECK(d->streams[0].phases[k].srcChunkTiles == lists[k].second);
  }

  SECTION("a shared list must be read with one length") {
    w[33 + 8] = 288;  // phase 2 (2 chunks) points at phase 0's 4-entry list
    auto d2 = decodeWords(withFixedChecksum(w));
    REQUIRE_FALSE(d2);
    CHECK_THAT(d2.error(), Catch::Contains("stream[0] (id 8).phase[2].chunk_list: the list at offset 0x120 is shared with a "
                                   "phase that reads 4 entries, this one 2"));
  }
  SECTION("a list that does not add up to num_msgs cannot be encoded") {
    b.streams[0].phases[2].numMsgs = 5;
    CHECK_THAT(checkEncodable(b), Catch::Contains("2 chunks of 2 tiles (src_chunk_offsets, src_chunk_tiles) are not "
                                                  "its num_msgs 5"));
  }
}

TEST_CASE("stream references pack as chip.y.x.stream bytes", "[blob]") {
  CHECK(packStreamRef(sn(1, 3, 8)) == 0x00010308u);
  CHECK(packStreamRef(sn(11, 12, 63, 2)) == 0x020b0c3fu);
  CHECK(unpackStreamRef(0x020b0c3fu) == sn(11, 12, 63, 2));
}

TEST_CASE("hex: write gives @address then 8 lower-case digits per line", "[blob][hex]") {
  std::vector<HexSegment> segs = {{0x4800, {0x4c425354, 1, 0xdeadBEEF}}, {0x10, {}}};
  CHECK(writeHex(segs) == "@00004800\n4c425354\n00000001\ndeadbeef\n@00000010\n");
}

TEST_CASE("hex: read accepts what write writes and BUDA's spelling", "[blob][hex]") {
  auto segs = readHex("@00008c20\n00000001\n0000000A\r\n\n  00000082  \n@10\nffffffff");
  INFO(messageOf(segs));
  REQUIRE(segs);
  REQUIRE(segs->size() == 2);
  CHECK((*segs)[0].wordAddress == 0x8c20);
  CHECK((*segs)[0].words == std::vector<uint32_t>{1, 10, 0x82});
  CHECK((*segs)[1].wordAddress == 0x10);
  CHECK((*segs)[1].words == std::vector<uint32_t>{0xffffffffu});

  std::vector<HexSegment> round = {{0x4800, kTinyWords}};
  auto back = readHex(writeHex(round));
  REQUIRE(back);
  REQUIRE(back->size() == 1);
  CHECK((*back)[0].wordAddress == 0x4800);
  CHECK((*back)[0].words == kTinyWords);

  auto empty = readHex("");
  REQUIRE(empty);
  CHECK(empty->empty());
}

TEST_CASE("hex: errors name the line", "[blob][hex]") {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"00000001\n", "line 1: word before the first @address line"},
      {"@00004800\n123456789\n", "line 2: bad word '123456789'"},
      {"@00004800\n0000000g\n", "line 2: bad word '0000000g'"},
      {"@00004800\n\n-1\n", "line 3: bad word '-1'"},
      {"@\n", "line 1: bad address line '@'"},
      {"@0x4800\n", "line 1: bad address line '@0x4800'"},
      {"@ffffffff\n0\n1\n", "line 3: words run past word address 0xffffffff"},
  };
  for (const Case& c : cases) {
    auto segs = readHex(c.text);
    INFO(c.text);
    REQUIRE_FALSE(segs);
    CHECK_THAT(messageOf(segs), Catch::StartsWith(c.expect));
  }
}

TEST_CASE("dump: the tiny blob as YAML", "[blob]") {
  std::string d = dumpCoreBlob(tinyBlob(), 172);
  CHECK_THAT(d, Catch::Contains("core: chip_0__y_1__x_3\nepoch: 2\nsize_bytes: 172\nnum_streams: 1\nnum_phases: 1\n"));
  CHECK_THAT(d, Catch::Contains("  chip_0__y_1__x_3__stream_id_8:\n    - phase_id: 0\n      num_msgs: 4\n"));
  CHECK_THAT(d, Catch::Contains("      buf_addr: 0x30000\n"));
  CHECK_THAT(d, Catch::Contains("      pipe_id: 4294967298\n"));
  CHECK_THAT(d, Catch::Contains("      remote_source: true\n      local_receiver: true\n"));
  CHECK_THAT(d, Catch::Contains("      src: [chip_0__y_1__x_1__stream_id_24]\n      dest: []\n"));
}

TEST_CASE("encodeCoreBlobWithin: the words only when they fit, the size info always", "[blob]") {
  const CoreBlob b = tinyBlob();  // 220 bytes, derived by hand above
  EncodedBlob fits = encodeCoreBlobWithin(b, 220);
  CHECK(fits.words == kTinyWords);
  CHECK(fits.info.bytes == 220);
  CHECK(fits.info.phases == 1);
  CHECK(fits.info.configs == 1);
  CHECK(fits.info.refs == 1);
  EncodedBlob over = encodeCoreBlobWithin(b, 216);
  CHECK(over.words.empty());
  CHECK(over.info.bytes == 220);
}

// ---- Layout version 5: ethernet relay phases (several chips) ----

namespace {

// The sending relay of an ethernet pipe: chip 0's ethernet core (y 6, x 9),
// stream 9, one phase taking 4 tiles from chip_0__y_1__x_1__stream_id_24 and
// sending them over the link to chip_1__y_0__x_9__stream_id_9.
CoreBlob ethBlob() {
  CoreBlob b;
  b.chip = 0;
  b.y = 6;
  b.x = 9;
  b.epoch = 0;
  Stream s;
  s.name = sn(6, 9, 9);
  StreamPhase p;
  p.numMsgs = 4;
  p.msgSize = 2080;
  p.bufAddr = 0x3df80;
  p.bufSize = 8320;
  p.numItersInEpoch = 2;
  p.pipeId = 500;
  p.bufId = 200;
  p.remoteSource = true;
  p.remoteReceiver = true;
  p.ethSender = true;
  p.src = {sn(1, 1, 24)};
  p.dest = {sn(0, 9, 9, 1)};
  p.dataFormat = 2;
  s.phases.push_back(p);
  b.streams.push_back(s);
  return b;
}

// By hand from docs/device-model.md (version 5): header at 0x00, stream
// table at 0x30, phase at 0x3c, config at 0x60, src ref at 0xd8, dest ref at
// 0xdc; 224 bytes. Flags: remote_source 0x2 | remote_receiver 0x10 |
// eth_sender 0x400 = 0x412. Refs: chip 0 y 1 x 1 stream 24 = 0x00010118,
// chip 1 y 0 x 9 stream 9 = 0x01000909.
// Checksum: header 5 + 224 + 6 + 9 + 1 + 48 + 1 + 96 = 390; table 9 + 1 +
// 60 = 70; phase 0x412 + 4 = 1046; config 2080 + 0x3df80 + 8320 + 2 + 500 +
// 200 + total_readers 1 + data_format 2 + 1 + 216 + 1 + 220 = 265367; refs
// 65816 + 16779529; sum 17112218 = 0x1051c9a; + magic 0x4c425354 =
// 0x4d476fee.
const std::vector<uint32_t> kEthWords = {
    0x4c425354, 5, 224, 0x4d476fee, 0, 6, 9, 0, 1, 48, 1, 96,
    9, 1, 60,
    0, 0, 0x412, 4, 0, 0, 0, 0, 0,
    2080, 0x3df80, 8320, 2, 500, 0, 200, 0,
    0, 0, 0, 0, 0, 0, 1,    // no DRAM, total_readers 1
    0, 0, 0, 2, 0,          // NOCs, vc, data_format 2, FIFO
    1, 216, 1, 220,         // src at 0xd8, dest at 0xdc
    0, 0, 0, 0, 0, 0,       // padding value, untilize
    0x00010118, 0x01000909,
};

}  // namespace

TEST_CASE("v5: an ethernet sender's words derived by hand; the flag bits decode", "[blob][ethernet]") {
  const CoreBlob b = ethBlob();
  REQUIRE(checkEncodable(b).empty());
  CHECK(encodeCoreBlob(b) == kEthWords);
  auto d = decodeWords(kEthWords);
  INFO(messageOf(d));
  REQUIRE(d);
  requireSameBlob(*d, b);
  CHECK(d->streams[0].phases[0].ethSender);
  CHECK_FALSE(d->streams[0].phases[0].ethReceiver);
  CHECK(kFlagEthSender == 0x400u);
  CHECK(kFlagEthReceiver == 0x800u);
  // The receiving end: one src on chip 0, flag 0x800.
  CoreBlob r = ethBlob();
  r.chip = 1;
  r.y = 0;
  r.streams[0].name = sn(0, 9, 9, 1);
  StreamPhase& p = r.streams[0].phases[0];
  p.ethSender = false;
  p.ethReceiver = true;
  p.src = {sn(6, 9, 9, 0)};
  p.dest = {sn(1, 1, 8, 1)};
  REQUIRE(checkEncodable(r).empty());
  std::vector<uint32_t> w = encodeCoreBlob(r);
  CHECK(w[kHeaderWords + kStreamEntryWords + kPhFlags] == 0x812u);
  auto rd = decodeWords(w);
  REQUIRE(rd);
  requireSameBlob(*rd, r);
}

TEST_CASE("v5: decoder faults for cross-chip references", "[blob][ethernet]") {
  struct Case {
    size_t word;
    uint32_t value;
    const char* expect;
  };
  const Case cases[] = {
      {17, 0x012, "offset 0x44: stream[0] (id 9).phase[0].flags: dest chip_1__y_0__x_9__stream_id_9 is on chip 1, not chip 0, but the phase has no eth_sender flag"},
      {12, 40, "offset 0x44: stream[0] (id 40).phase[0].flags: eth_sender on stream 40, which cannot use the ethernet link (an ethernet core's streams 0-31 can)"},
      {12, 63, "eth_sender on stream 63, which cannot use the ethernet link"},
      {55, 0x00000909, "offset 0x44: stream[0] (id 9).phase[0].flags: eth_sender but dest chip_0__y_0__x_9__stream_id_9 is on this stream's chip 0"},
      {17, 0xc12, "offset 0x44: stream[0] (id 9).phase[0].flags: eth_receiver but src chip_0__y_1__x_1__stream_id_24 is on this stream's chip 0"},
      {17, 0x402, "offset 0x44: stream[0] (id 9).phase[0].flags: eth_sender on a phase that is not remote_receiver"},
      {46, 2, "config[0].dest list"},  // two dests run into the blob's end
  };
  for (const Case& c : cases) {
    std::vector<uint32_t> w = kEthWords;
    w[c.word] = c.value;
    w = withFixedChecksum(w);
    auto d = decodeWords(w);
    INFO("word " << c.word << " = " << c.value << ": " << messageOf(d));
    REQUIRE_FALSE(d);
    CHECK_THAT(messageOf(d), Catch::Contains(c.expect));
  }
  // Every stream of an ethernet core may use the link (0-3 and 8-11 in
  // hardware, the others through its firmware).
  for (uint32_t id : {0u, 3u, 4u, 8u, 11u, 12u, 31u}) {
    std::vector<uint32_t> w = kEthWords;
    w[12] = id;
    CHECK(decodeWords(withFixedChecksum(w)));
  }
}

TEST_CASE("v5: checkEncodable and checkEthernetPhase name the broken rule", "[blob][ethernet]") {
  CoreBlob b = ethBlob();
  b.streams[0].phases[0].dest.push_back(sn(0, 9, 10, 1));
  CHECK(checkEncodable(b) == "stream 9 phase 0: eth_sender with 2 dest entries (a link has one stream at its other end)");
  b = ethBlob();
  b.streams[0].phases[0].ethSender = false;
  CHECK(checkEncodable(b) == "stream 9 phase 0: dest chip_1__y_0__x_9__stream_id_9 is on chip 1, not chip 0, but the phase has no eth_sender flag");
  StreamPhase local;
  local.remoteSource = true;
  local.localReceiver = true;
  local.src = {sn(1, 1, 24, 2)};
  CHECK(checkEthernetPhase(local, sn(1, 2, 8, 2)).empty());
  local.ethReceiver = true;
  CHECK(checkEthernetPhase(local, sn(1, 2, 8, 2)) ==
        "eth_receiver but src chip_2__y_1__x_1__stream_id_24 is on this stream's chip 2");
}
