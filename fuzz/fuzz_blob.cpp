// libFuzzer target for the overlay blob decoder (lib/blob/blob_binary.cpp):
// the bytes the simulator's stream engine reads from a core's L1.
//
// One input goes through:
// - decodeCoreBlob on the raw bytes. Whatever decodes must re-encode to a
//   blob that decodes to the same model (the decoder accepts nothing the
//   encoder cannot express) and whose words are the canonical form: a second
//   encode gives the same words. dumpCoreBlob prints it.
// - readHex on the same bytes as text; a hex that parses is written back and
//   must read back to the same segments.
//
// Build and run: fuzz/run-fuzz.sh SECONDS blob (see docs/fuzzing.md).
#include "blob/blob_binary.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <span>
#include <string>

namespace {

using namespace tessera::blob;

[[noreturn]] void invariantBroken(const char* what) {
  std::cerr << "fuzz-blob: invariant broken: " << what << "\n";
  std::abort();
}

bool samePhase(const StreamPhase& p, const StreamPhase& q) {
  return p.phaseId == q.phaseId && p.numMsgs == q.numMsgs && p.msgSize == q.msgSize && p.bufAddr == q.bufAddr &&
         p.bufSize == q.bufSize && p.numItersInEpoch == q.numItersInEpoch && p.pipeId == q.pipeId &&
         p.bufId == q.bufId && p.sourceEndpoint == q.sourceEndpoint && p.remoteSource == q.remoteSource &&
         p.dramInput == q.dramInput && p.localReceiver == q.localReceiver && p.remoteReceiver == q.remoteReceiver &&
         p.dramOutput == q.dramOutput && p.src == q.src && p.dest == q.dest && p.dramBufNocAddr == q.dramBufNocAddr &&
         p.dramRam == q.dramRam && p.dramBufSizeQSlots == q.dramBufSizeQSlots &&
         p.dramBufSizeTiles == q.dramBufSizeTiles && p.dramChunkTiles == q.dramChunkTiles &&
         p.dramReaderIndex == q.dramReaderIndex && p.dramTotalReaders == q.dramTotalReaders &&
         p.incomingDataNoc == q.incomingDataNoc && p.outgoingDataNoc == q.outgoingDataNoc && p.vc == q.vc &&
         p.dataFormat == q.dataFormat && p.srcPeriodTiles == q.srcPeriodTiles && p.srcTileOffset == q.srcTileOffset &&
         p.srcPeriodDone == q.srcPeriodDone && p.intermediate == q.intermediate &&
         p.srcFreedTiles == q.srcFreedTiles && p.dramPadding == q.dramPadding &&
         std::memcmp(&p.paddingValue, &q.paddingValue, sizeof p.paddingValue) == 0 && // NaN bits too
         p.untilizeRDim == q.untilizeRDim && p.untilizeCDim == q.untilizeCDim &&
         p.untilizeFullRDim == q.untilizeFullRDim && p.untilizeFullCDim == q.untilizeFullCDim &&
         p.untilizeZDim == q.untilizeZDim;
}

bool sameBlob(const CoreBlob& a, const CoreBlob& b) {
  if (a.chip != b.chip || a.y != b.y || a.x != b.x || a.epoch != b.epoch || a.streams.size() != b.streams.size())
    return false;
  for (size_t i = 0; i < a.streams.size(); ++i) {
    const Stream& s = a.streams[i];
    const Stream& t = b.streams[i];
    if (!(s.name == t.name) || s.phases.size() != t.phases.size()) return false;
    for (size_t k = 0; k < s.phases.size(); ++k)
      if (!samePhase(s.phases[k], t.phases[k])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  if (auto blob = decodeCoreBlob(bytes)) {
    if (!checkEncodable(*blob).empty()) invariantBroken("a decoded blob is not encodable");
    std::vector<uint32_t> words = encodeCoreBlob(*blob);
    if (words.size() * 4 != encodedSizeBytes(*blob)) invariantBroken("encodedSizeBytes disagrees with encodeCoreBlob");
    std::vector<uint8_t> again = wordsToBytes(words);
    auto blob2 = decodeCoreBlob(again);
    if (!blob2) invariantBroken(("re-encoded blob does not decode: " + blob2.error()).c_str());
    if (!sameBlob(*blob, *blob2)) invariantBroken("decode(encode(decode(bytes))) != decode(bytes)");
    if (encodeCoreBlob(*blob2) != words) invariantBroken("encoding is not canonical");
    (void)dumpCoreBlob(*blob, words.size() * 4);
  } else if (blob.error().empty()) {
    invariantBroken("decode failed without an error message");
  }

  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto segments = readHex(text)) {
    std::string written = writeHex(*segments);
    auto back = readHex(written);
    if (!back || back->size() != segments->size()) invariantBroken("writeHex output does not read back");
    for (size_t i = 0; i < back->size(); ++i)
      if ((*back)[i].wordAddress != (*segments)[i].wordAddress || (*back)[i].words != (*segments)[i].words)
        invariantBroken("writeHex/readHex round trip changed a segment");
  }
  return 0;
}
