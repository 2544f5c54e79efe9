// Phase loops (blob layout version 6): what compressPhases finds for the
// patterns that overflowed the overlay region (gathers alternating between
// senders, a window stepped tile by tile, the same pattern per period),
// the round trip through the binary, the sizes worked out by hand from
// docs/device-model.md, and the decoder's checks of loop records.
#include "blob/blob_binary.hpp"
#include "blob/phase_loops.hpp"
#include "device/device_contract.h"

#include <catch2/catch.hpp>

using namespace tessera;
using namespace tessera::blob;

namespace {

StreamName sn(uint32_t y, uint32_t x, uint32_t id) { return StreamName{0, y, x, id}; }

StreamPhase base() {
  StreamPhase p;
  p.msgSize = 2080;
  p.bufAddr = 0x30000;
  p.bufSize = 8320;
  p.dataFormat = 1;
  return p;
}

// A receiver gathering from two senders in turn: 4 tiles from (1,1), 3
// from (2,1), `pairs` times (BUDA's template matmul feeders).
std::vector<StreamPhase> gather(uint32_t pairs) {
  std::vector<StreamPhase> v;
  for (uint32_t k = 0; k < 2 * pairs; ++k) {
    StreamPhase p = base();
    p.phaseId = k;
    p.remoteSource = true;
    p.localReceiver = true;
    p.src = {k % 2 ? sn(2, 1, 24) : sn(1, 1, 24)};
    p.numMsgs = k % 2 ? 3 : 4;
    v.push_back(p);
  }
  return v;
}

// A windowed packer broadcasting: phase k sends tile k of a 320-tile
// period 42 times (a chunk list of 42 entries k), frees k + 1 tiles; the
// last phase ends the period.
std::vector<StreamPhase> broadcast(uint32_t period) {
  std::vector<StreamPhase> v;
  for (uint32_t k = 0; k < period; ++k) {
    StreamPhase p = base();
    p.bufSize = 2080 * 320;
    p.phaseId = k;
    p.sourceEndpoint = true;
    p.remoteReceiver = true;
    p.dest = {sn(5, 1, 9)};
    p.srcPeriodTiles = period;
    p.srcTileOffset = k;
    p.srcFreedTiles = k + 1;
    p.srcChunkTiles = 1;
    p.srcChunkOffsets.assign(42, k);
    p.numMsgs = 42;
    p.srcPeriodDone = k + 1 == period;
    v.push_back(p);
  }
  return v;
}

CoreBlob coreWith(std::vector<StreamPhase> phases, uint32_t streamId) {
  CoreBlob b;
  b.y = 4;
  b.x = 1;
  Stream s;
  s.name = sn(4, 1, streamId);
  s.phases = std::move(phases);
  b.streams.push_back(std::move(s));
  return b;
}

std::vector<StreamPhase> expand(const std::vector<PhaseRecordRef>& recs, const std::vector<StreamPhase>& phases) {
  std::vector<StreamPhase> out;
  std::string error;
  size_t bad = 0;
  uint64_t copied = 0;
  REQUIRE(expandPhaseRecords(recs, phases, 1u << 20, UINT64_MAX, out, copied, error, bad));
  return out;
}

void requireSame(const std::vector<StreamPhase>& a, const std::vector<StreamPhase>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("phase " << i);
    CHECK(a[i].phaseId == b[i].phaseId);
    CHECK(a[i].numMsgs == b[i].numMsgs);
    CHECK(a[i].src == b[i].src);
    CHECK(a[i].dest == b[i].dest);
    CHECK(a[i].srcTileOffset == b[i].srcTileOffset);
    CHECK(a[i].srcFreedTiles == b[i].srcFreedTiles);
    CHECK(a[i].srcChunkOffsets == b[i].srcChunkOffsets);
    CHECK(a[i].srcPeriodDone == b[i].srcPeriodDone);
    CHECK(a[i].remoteSource == b[i].remoteSource);
    CHECK(a[i].sourceEndpoint == b[i].sourceEndpoint);
  }
}

}  // namespace

TEST_CASE("phase loops: an alternating gather is two phases and one loop", "[blob][loops]") {
  const std::vector<StreamPhase> phases = gather(500);
  const std::vector<PhaseRecordRef> recs = compressPhases(phases);
  REQUIRE(recs.size() == 3);
  CHECK(!recs[0].loop);
  CHECK(recs[0].phase == 0);
  CHECK(recs[1].phase == 1);
  REQUIRE(recs[2].loop);
  CHECK(recs[2].count == 499);     // 500 pairs: the body and 499 copies
  CHECK(recs[2].bodyItems == 2);
  CHECK(recs[2].deltas.phaseId == 2);
  CHECK(recs[2].deltas.srcTileOffset == 0);
  requireSame(expand(recs, phases), phases);
}

TEST_CASE("phase loops: a window stepped tile by tile", "[blob][loops]") {
  const std::vector<StreamPhase> phases = broadcast(320);
  const std::vector<PhaseRecordRef> recs = compressPhases(phases);
  // Phase 0, a loop adding 1 to id, offset, freed and chunk entries 318
  // times (phases 1-318), then phase 319 (it ends the period).
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].phase == 0);
  REQUIRE(recs[1].loop);
  CHECK(recs[1].count == 318);
  CHECK(recs[1].bodyItems == 1);
  CHECK(recs[1].deltas.phaseId == 1);
  CHECK(recs[1].deltas.srcTileOffset == 1);
  CHECK(recs[1].deltas.srcFreedTiles == 1);
  CHECK(recs[1].deltas.chunkOffset == 1);
  CHECK(recs[2].phase == 319);
  requireSame(expand(recs, phases), phases);
}

TEST_CASE("phase loops: the same period pattern again nests the loops", "[blob][loops]") {
  // Four periods of 8 tiles: per period phases at offsets 0..7, the last
  // ends the period; ids count on.
  std::vector<StreamPhase> phases;
  for (uint32_t t = 0; t < 4; ++t)
    for (StreamPhase p : broadcast(8)) {
      p.phaseId += 8 * t;
      phases.push_back(p);
    }
  const std::vector<PhaseRecordRef> recs = compressPhases(phases);
  // [phase 0, loop x6, phase 7, loop x3 over those two items (ids + 8)].
  REQUIRE(recs.size() == 4);
  CHECK(recs[0].phase == 0);
  CHECK(recs[1].loop);
  CHECK(recs[1].count == 6);
  CHECK(recs[2].phase == 7);
  REQUIRE(recs[3].loop);
  CHECK(recs[3].count == 3);
  CHECK(recs[3].bodyItems == 2);
  CHECK(recs[3].deltas.phaseId == 8);
  CHECK(recs[3].deltas.srcTileOffset == 0);
  CHECK(recs[3].deltas.chunkOffset == 0);
  requireSame(expand(recs, phases), phases);
}

TEST_CASE("phase loops: nothing repeats, nothing changes", "[blob][loops]") {
  std::vector<StreamPhase> phases = gather(1);
  phases[1].numMsgs = 7;
  const std::vector<PhaseRecordRef> recs = compressPhases(phases);
  REQUIRE(recs.size() == 2);
  CHECK(!recs[0].loop);
  CHECK(!recs[1].loop);
}

TEST_CASE("phase loops: sizes by hand and the round trip through the binary", "[blob][loops]") {
  const CoreBlob b = coreWith(broadcast(320), 24);
  // Version 5 (docs/device-model.md): 12 header + 3 stream + 320 x 9
  // phase + 1 x 30 config + 1 dest ref + 320 distinct chunk lists x 42
  // = 16366 words = 65464 bytes: over the 57344 of the region.
  const BlobSizeInfo flat = blobSizeInfo(b);
  CHECK(flat.bytes == 65464);
  CHECK(flat.version == 5);
  // Version 6: 12 + 3 + (2 phase + 1 loop records) x 9 + 30 + 1 + the
  // lists of phases 0 and 319, each with a loop: a length word, the
  // pattern [k], a loop entry (3 words: 41 copies, increment 0) = 2 x 5:
  // 83 words = 332 bytes.
  const EncodedBlob e = encodeCoreBlobWithin(b, contract::kOverlayBlobSize);
  CHECK(e.info.bytes == 332);
  CHECK(e.info.version == 6);
  CHECK(e.info.records == 2);
  CHECK(e.info.loops == 1);
  CHECK(e.info.phases == 320);
  REQUIRE(e.words.size() == 83);
  CHECK(e.words[kHdrVersion] == 6);
  // The loop record: after the header, the stream table and phase 0's record.
  const uint32_t loop = kHeaderWords + kStreamEntryWords + kPhaseRecordWords;
  CHECK(e.words[loop + kLpCount] == 318);
  CHECK(e.words[loop + kLpBodyItems] == 1);
  CHECK(e.words[loop + kPhFlags] == kFlagLoop);
  CHECK(e.words[loop + kLpIdDeltaLo] == 1);
  CHECK(e.words[loop + kLpIdDeltaHi] == 0);
  CHECK(e.words[loop + kLpOffsetDelta] == 1);
  CHECK(e.words[loop + kLpFreedDelta] == 1);
  CHECK(e.words[loop + kLpChunkDelta] == 1);
  CHECK(e.words[loop + kLpReserved] == 0);
  CHECK(e.words[kHeaderWords + 1] == 3);  // the stream's record count

  const std::vector<uint8_t> bytes = wordsToBytes(e.words);
  const auto d = decodeCoreBlob(bytes);
  INFO((d ? "" : d.error()));
  REQUIRE(d);
  REQUIRE(d->streams.size() == 1);
  requireSame(d->streams[0].phases, b.streams[0].phases);
  CHECK(d->streams[0].phases[200].srcChunkOffsets == std::vector<uint32_t>(42, 200));
}

TEST_CASE("phase loops: a blob that fits flat keeps its version 5 words", "[blob][loops]") {
  const CoreBlob b = coreWith(gather(100), 8);  // 200 phases: 12 + 3 + 1800 + 60 + 2 words
  const EncodedBlob e = encodeCoreBlobWithin(b, contract::kOverlayBlobSize);
  CHECK(e.info.version == 5);
  CHECK(e.info.bytes == 4 * (12 + 3 + 200 * 9 + 2 * 30 + 2));
  CHECK(e.words == encodeCoreBlob(b));
  // Forced: 2 phase records + 1 loop = 12 + 3 + 27 + 60 + 2 words.
  const std::vector<uint32_t> loops = encodeCoreBlobLoops(b);
  CHECK(loops.size() == 12 + 3 + 27 + 60 + 2);
  const auto d = decodeCoreBlob(wordsToBytes(loops));
  REQUIRE(d);
  requireSame(d->streams[0].phases, b.streams[0].phases);
}

TEST_CASE("phase loops: the decoder checks loop records", "[blob][loops]") {
  const CoreBlob b = coreWith(gather(500), 8);
  const std::vector<uint32_t> good = encodeCoreBlobLoops(b);
  REQUIRE(good.size() == 12 + 3 + 27 + 60 + 2);
  const uint32_t loop = kHeaderWords + kStreamEntryWords + 2 * kPhaseRecordWords;
  REQUIRE(good[loop + kPhFlags] == kFlagLoop);
  struct Case {
    uint32_t word;
    uint32_t value;
    std::string error;
  };
  const std::string at = "offset 0x" + [&] {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%x", loop * 4);
    return std::string(buf);
  }();
  const std::vector<Case> cases = {
      {kLpBodyItems, 3, at + ": stream[0] (id 8).phase[2]: loop record: the loop repeats 3 items but only 2 come before it"},
      {kLpBodyItems, 0, at + ": stream[0] (id 8).phase[2]: loop record: a loop needs at least one copy and one body item (count 499, body 0)"},
      {kLpCount, 0, at + ": stream[0] (id 8).phase[2]: loop record: a loop needs at least one copy and one body item (count 0, body 2)"},
      {kLpCount, 0xFFFFFFFF, at + ": stream[0] (id 8).phase[2]: loop record: the stream expands to more than 262144 phases"},
      {kPhFlags, kFlagLoop | kFlagDramInput, "offset 0x" + std::to_string(0) + ""},
      {kLpReserved, 1, ""},
  };
  for (const Case& c : cases) {
    std::vector<uint32_t> w = good;
    w[loop + c.word] = c.value;
    w[kHdrChecksum] = blobChecksum(w);
    INFO("word " << c.word << " = " << c.value);
    auto d = decodeCoreBlob(wordsToBytes(w));
    REQUIRE(!d);
    if (c.error.size() > 12) CHECK(d.error() == c.error);
    else CHECK(!d.error().empty());
  }
  // Version 5 knows no loop flag.
  std::vector<uint32_t> w = good;
  w[kHdrVersion] = 5;
  w[kHdrChecksum] = blobChecksum(w);
  auto d = decodeCoreBlob(wordsToBytes(w));
  REQUIRE(!d);
  CHECK(d.error().find("unknown flag bits 0x80000000") != std::string::npos);
}

TEST_CASE("chunk list loops: a strided read is a pattern and a loop entry", "[blob][loops]") {
  // A DRAM reader's 2-tile chunks interleaving two 20-tile halves, 90 times
  // 40 tiles further (a template matmul's operand): [0, 20, 2, 22, ...,
  // 18, 38, 40, 60, ...]: the 20-entry pattern, then 0x80000000 | 20, 89
  // copies, increment 40.
  std::vector<uint32_t> list;
  for (uint32_t b = 0; b < 90; ++b)
    for (uint32_t k = 0; k < 10; ++k) list.insert(list.end(), {40 * b + 2 * k, 40 * b + 20 + 2 * k});
  const std::vector<uint32_t> c = compressChunkList(list);
  REQUIRE(c.size() == 23);
  CHECK(std::vector<uint32_t>(c.begin(), c.begin() + 20) == std::vector<uint32_t>(list.begin(), list.begin() + 20));
  CHECK(c[20] == (kChunkLoopFlag | 20));
  CHECK(c[21] == 89);
  CHECK(c[22] == 40);
  std::vector<uint32_t> back;
  std::string error;
  REQUIRE(expandChunkList(c.data(), c.size(), list.size(), back, error));
  CHECK(back == list);
  // Malformed: a loop longer than what precedes it, a truncated entry, the
  // wrong total.
  const std::vector<uint32_t> bad1 = {5, kChunkLoopFlag | 2, 3, 1};
  CHECK(!expandChunkList(bad1.data(), bad1.size(), 7, back, error));
  CHECK(error == "entry 1: a loop of 3 copies of the last 2 entries (1 so far)");
  const std::vector<uint32_t> bad2 = {5, kChunkLoopFlag | 1, 3};
  CHECK(!expandChunkList(bad2.data(), bad2.size(), 4, back, error));
  CHECK(error == "entry 1: a loop entry needs two more words");
  const std::vector<uint32_t> bad3 = {5, kChunkLoopFlag | 1, 3, 1};
  CHECK(!expandChunkList(bad3.data(), bad3.size(), 5, back, error));
  CHECK(error == "expands to 4 entries, not 5");
  // Nothing repeats: the list as it is.
  const std::vector<uint32_t> plain = {3, 1, 4, 1, 5, 9, 2, 6};
  CHECK(compressChunkList(plain) == plain);
}
