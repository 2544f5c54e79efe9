// Overlay blob encode/decode (layout: docs/device-model.md, "Overlay blobs
// and streams") and the .hex text form.
#include "blob/blob_binary.hpp"

#include "blob/phase_loops.hpp"
#include "device/device_contract.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <map>
#include <tuple>

namespace tessera::blob {

namespace {

std::string hex32(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v & 0xFFFFFFFFu); }
uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint64_t join64(uint32_t lo, uint32_t hi) { return (static_cast<uint64_t>(hi) << 32) | lo; }

uint32_t phaseFlags(const StreamPhase& p) {
  uint32_t f = 0;
  if (p.sourceEndpoint) f |= kFlagSourceEndpoint;
  if (p.remoteSource) f |= kFlagRemoteSource;
  if (p.dramInput) f |= kFlagDramInput;
  if (p.localReceiver) f |= kFlagLocalReceiver;
  if (p.remoteReceiver) f |= kFlagRemoteReceiver;
  if (p.dramOutput) f |= kFlagDramOutput;
  if (p.dramRam) f |= kFlagDramRam;
  if (p.srcPeriodDone) f |= kFlagSrcPeriodDone;
  if (p.intermediate) f |= kFlagIntermediate;
  if (p.dramPadding) f |= kFlagDramPadding;
  if (p.ethSender) f |= kFlagEthSender;
  if (p.ethReceiver) f |= kFlagEthReceiver;
  return f;
}

// Streams in encoding order (by stream id; stable for equal ids).
std::vector<const Stream*> sortedStreams(const CoreBlob& blob) {
  std::vector<const Stream*> order;
  order.reserve(blob.streams.size());
  for (const Stream& s : blob.streams) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](const Stream* a, const Stream* b) { return a->name.streamId < b->name.streamId; });
  return order;
}

}  // namespace

uint32_t packStreamRef(const StreamName& n) {
  return ((n.chip & 0xFFu) << 24) | ((n.y & 0xFFu) << 16) | ((n.x & 0xFFu) << 8) | (n.streamId & 0xFFu);
}

StreamName unpackStreamRef(uint32_t w) {
  return StreamName{w >> 24, (w >> 16) & 0xFFu, (w >> 8) & 0xFFu, w & 0xFFu};
}

namespace {

std::string refText(const StreamName& n) {
  return "chip_" + std::to_string(n.chip) + "__y_" + std::to_string(n.y) + "__x_" + std::to_string(n.x) +
         "__stream_id_" + std::to_string(n.streamId);
}

}  // namespace

std::string checkEthernetPhase(const StreamPhase& p, const StreamName& stream) {
  for (const auto& [list, flag, role, name] :
       {std::tuple{&p.dest, p.ethSender, p.remoteReceiver, "eth_sender"},
        std::tuple{&p.src, p.ethReceiver, p.remoteSource, "eth_receiver"}}) {
    const bool isDest = list == &p.dest;
    const char* what = isDest ? "dest" : "src";
    if (!flag) {
      for (const StreamName& r : *list)
        if (r.chip != stream.chip)
          return std::string(what) + " " + refText(r) + " is on chip " + std::to_string(r.chip) + ", not chip " +
                 std::to_string(stream.chip) + ", but the phase has no " + name + " flag";
      continue;
    }
    if (!role) return std::string(name) + " on a phase that is not " + (isDest ? "remote_receiver" : "remote_source");
    if (list->size() != 1)
      return std::string(name) + " with " + std::to_string(list->size()) + " " + what +
             " entries (a link has one stream at its other end)";
    if ((*list)[0].chip == stream.chip)
      return std::string(name) + " but " + what + " " + refText((*list)[0]) + " is on this stream's chip " +
             std::to_string(stream.chip);
    if (!contract::isEthernetCapableStream(stream.streamId))
      return std::string(name) + " on stream " + std::to_string(stream.streamId) +
             ", which cannot use the ethernet link (an ethernet core's streams 0-31 can)";
  }
  return {};
}

std::string checkEncodable(const CoreBlob& blob) {
  auto coordOk = [](const StreamName& n) { return n.chip <= 255 && n.y <= 255 && n.x <= 255 && n.streamId < kStreamsPerCore; };
  auto refName = [](const StreamName& n) {
    return "chip_" + std::to_string(n.chip) + "__y_" + std::to_string(n.y) + "__x_" + std::to_string(n.x) +
           "__stream_id_" + std::to_string(n.streamId);
  };
  if (blob.chip > 255 || blob.y > 255 || blob.x > 255)
    return "core coordinates (chip " + std::to_string(blob.chip) + ", y " + std::to_string(blob.y) + ", x " +
           std::to_string(blob.x) + ") do not fit the 8-bit fields of a stream reference";
  std::vector<uint32_t> ids;
  for (const Stream& s : blob.streams) {
    if (s.name.streamId >= kStreamsPerCore)
      return "stream id " + std::to_string(s.name.streamId) + " is out of range (a core has " +
             std::to_string(kStreamsPerCore) + " streams)";
    ids.push_back(s.name.streamId);
    for (const StreamPhase& p : s.phases) {
      if (!p.srcChunkOffsets.empty() &&
          (p.srcChunkTiles == 0 || uint64_t{p.srcChunkTiles} * p.srcChunkOffsets.size() != p.numMsgs))
        return "stream " + std::to_string(s.name.streamId) + " phase " + std::to_string(p.phaseId) + ": " +
               std::to_string(p.srcChunkOffsets.size()) + " chunks of " + std::to_string(p.srcChunkTiles) +
               " tiles (src_chunk_offsets, src_chunk_tiles) are not its num_msgs " + std::to_string(p.numMsgs);
      for (const auto* list : {&p.src, &p.dest})
        for (const StreamName& r : *list)
          if (!coordOk(r))
            return "stream " + std::to_string(s.name.streamId) + " phase " + std::to_string(p.phaseId) + ": " +
                   (list == &p.src ? "src " : "dest ") + refName(r) +
                   " does not fit a stream reference (chip, y, x <= 255, stream id < 64)";
      if (p.untilizeZDim > 0xFFFFFFu)  // its word's top bits hold the tile shape
        return "stream " + std::to_string(s.name.streamId) + " phase " + std::to_string(p.phaseId) + ": untilize_z_dim " +
               std::to_string(p.untilizeZDim) + " does not fit 24 bits";
      if (std::string e = checkEthernetPhase(p, StreamName{blob.chip, blob.y, blob.x, s.name.streamId}); !e.empty())
        return "stream " + std::to_string(s.name.streamId) + " phase " + std::to_string(p.phaseId) + ": " + e;
    }
  }
  std::sort(ids.begin(), ids.end());
  if (auto it = std::adjacent_find(ids.begin(), ids.end()); it != ids.end())
    return "stream id " + std::to_string(*it) + " appears twice";
  return {};
}

namespace {

// The config record of a phase: its words with the list offsets still 0.
std::vector<uint32_t> configWords(const StreamPhase& p) {
  std::vector<uint32_t> c(kConfigRecordWords, 0);
  c[kCfMsgSize] = p.msgSize;
  c[kCfBufAddr] = p.bufAddr;
  c[kCfBufSize] = p.bufSize;
  c[kCfNumIters] = p.numItersInEpoch;
  c[kCfPipeIdLo] = lo32(p.pipeId);
  c[kCfPipeIdHi] = hi32(p.pipeId);
  c[kCfBufIdLo] = lo32(p.bufId);
  c[kCfBufIdHi] = hi32(p.bufId);
  c[kCfDramAddrLo] = lo32(p.dramBufNocAddr);
  c[kCfDramAddrHi] = hi32(p.dramBufNocAddr);
  c[kCfDramQSlots] = p.dramBufSizeQSlots;
  c[kCfDramSlotTiles] = p.dramBufSizeTiles;
  c[kCfDramChunkTiles] = p.dramChunkTiles;
  c[kCfDramReaderIndex] = p.dramReaderIndex;
  c[kCfDramTotalReaders] = p.dramTotalReaders;
  c[kCfIncomingNoc] = p.incomingDataNoc;
  c[kCfOutgoingNoc] = p.outgoingDataNoc;
  c[kCfVc] = p.vc;
  c[kCfDataFormat] = p.dataFormat;
  c[kCfSrcPeriodTiles] = p.srcPeriodTiles;
  c[kCfSrcCount] = static_cast<uint32_t>(p.src.size());
  c[kCfDestCount] = static_cast<uint32_t>(p.dest.size());
  c[kCfPaddingValue] = std::bit_cast<uint32_t>(p.paddingValue);
  c[kCfUntilizeRDim] = p.untilizeRDim;
  c[kCfUntilizeCDim] = p.untilizeCDim;
  c[kCfUntilizeFullRDim] = p.untilizeFullRDim;
  c[kCfUntilizeFullCDim] = p.untilizeFullCDim;
  // Tiles smaller than 32x32 ride in the z word's top bits (zero for 32x32):
  // [28:24] 32 - rows, [29] 1 for 16 columns.
  c[kCfUntilizeZDim] = (p.untilizeZDim & 0xFFFFFFu) | ((32u - std::min(p.untilizeTileR, 32u)) & 31u) << 24 |
                       (p.untilizeTileC == 16 ? 1u : 0u) << 29;
  return c;
}

// What the encoder writes, in order: streams by id, their records (one per
// phase, or phase and loop records with `loops`), one config per distinct
// (config words, src, dest) in order of first use, one chunk list per
// distinct list in order of first use.
struct Plan {
  std::vector<const Stream*> streams;
  std::vector<std::vector<PhaseRecordRef>> records;  // per stream
  std::vector<uint32_t> phaseConfig;            // per phase record, streams in order
  std::vector<uint32_t> phaseChunkList;         // per phase record: index into chunkLists + 1, 0 for none
  std::vector<std::vector<uint32_t>> configs;   // config words (offsets 0)
  std::vector<const StreamPhase*> configPhase;  // a phase with that config (for its lists)
  std::vector<std::vector<uint32_t>> chunkLists;  // the words stored per list
  std::vector<bool> chunkCompressed;            // version 6: a length word, then a list with loop entries
  uint64_t phases = 0;                          // phases the blob stands for
  uint64_t phaseRecords = 0;
  uint64_t loopRecords = 0;
  uint64_t refs = 0;                            // src + dest entries of all configs
  uint64_t chunkWords = 0;                      // entries of all chunk lists

  uint32_t version() const {
    return loopRecords || std::find(chunkCompressed.begin(), chunkCompressed.end(), true) != chunkCompressed.end()
               ? kBlobVersionLoops
               : kBlobVersion;
  }
  uint64_t sizeBytes() const {
    return 4 * (kHeaderWords + uint64_t{kStreamEntryWords} * streams.size() +
                uint64_t{kPhaseRecordWords} * (phaseRecords + loopRecords) +
                uint64_t{kConfigRecordWords} * configs.size() + refs + chunkWords);
  }
};

Plan makePlan(const CoreBlob& blob, bool loops) {
  Plan plan;
  plan.streams = sortedStreams(blob);
  std::map<std::vector<uint32_t>, uint32_t> index;  // config words + packed src + packed dest -> config
  std::map<std::vector<uint32_t>, uint32_t> listIndex;  // chunk list -> index + 1
  for (const Stream* s : plan.streams) {
    plan.phases += s->phases.size();
    std::vector<PhaseRecordRef> recs;
    if (loops) {
      recs = compressPhases(s->phases);
    } else {
      recs.reserve(s->phases.size());
      for (size_t i = 0; i < s->phases.size(); ++i) recs.push_back(PhaseRecordRef{false, static_cast<uint32_t>(i), 0, 0, {}});
    }
    for (const PhaseRecordRef& rec : recs) {
      if (rec.loop) {
        ++plan.loopRecords;
        continue;
      }
      ++plan.phaseRecords;
      const StreamPhase& p = s->phases[rec.phase];
      uint32_t list = 0;
      if (!p.srcChunkOffsets.empty()) {
        auto [it, added] = listIndex.emplace(p.srcChunkOffsets, static_cast<uint32_t>(plan.chunkLists.size() + 1));
        if (added) {
          std::vector<uint32_t> words;
          if (loops) words = compressChunkList(p.srcChunkOffsets);
          const bool compressed = loops && words.size() < p.srcChunkOffsets.size();
          if (compressed) {
            words.insert(words.begin(), static_cast<uint32_t>(words.size()));
          } else {
            words = p.srcChunkOffsets;
          }
          plan.chunkWords += words.size();
          plan.chunkCompressed.push_back(compressed);
          plan.chunkLists.push_back(std::move(words));
        }
        list = it->second;
      }
      plan.phaseChunkList.push_back(list);
      std::vector<uint32_t> words = configWords(p);
      std::vector<uint32_t> key = words;
      for (const StreamName& n : p.src) key.push_back(packStreamRef(n));
      for (const StreamName& n : p.dest) key.push_back(packStreamRef(n));
      auto [it, added] = index.emplace(std::move(key), static_cast<uint32_t>(plan.configs.size()));
      if (added) {
        plan.configs.push_back(std::move(words));
        plan.configPhase.push_back(&p);
        plan.refs += p.src.size() + p.dest.size();
      }
      plan.phaseConfig.push_back(it->second);
    }
    plan.records.push_back(std::move(recs));
  }
  return plan;
}

BlobSizeInfo sizeInfo(const Plan& plan) {
  BlobSizeInfo info;
  info.streams = plan.streams.size();
  info.phases = plan.phases;
  info.configs = plan.configs.size();
  info.refs = plan.refs;
  info.chunkWords = plan.chunkWords;
  info.records = plan.phaseRecords;
  info.loops = plan.loopRecords;
  info.bytes = plan.sizeBytes();
  info.version = plan.version();
  return info;
}

}  // namespace

uint64_t encodedSizeBytes(const CoreBlob& blob) { return makePlan(blob, false).sizeBytes(); }

BlobSizeInfo blobSizeInfo(const CoreBlob& blob) { return sizeInfo(makePlan(blob, false)); }

uint32_t blobChecksum(std::span<const uint32_t> words) {
  uint32_t sum = 0;
  for (size_t i = 0; i < words.size(); ++i)
    if (i != kHdrChecksum) sum += words[i];
  return sum;
}

namespace {

std::vector<uint32_t> encodeFromPlan(const CoreBlob& blob, const Plan& plan) {
  const uint32_t tableOffset = kHeaderWords * 4;
  const uint32_t phasesOffset = tableOffset + kStreamEntryWords * 4 * static_cast<uint32_t>(plan.streams.size());
  const uint32_t configOffset =
      phasesOffset + kPhaseRecordWords * 4 * static_cast<uint32_t>(plan.phaseRecords + plan.loopRecords);
  const uint32_t refsOffset = configOffset + kConfigRecordWords * 4 * static_cast<uint32_t>(plan.configs.size());

  std::vector<uint32_t> w(static_cast<size_t>(plan.sizeBytes() / 4), 0);
  w[kHdrMagic] = kBlobMagic;
  w[kHdrVersion] = plan.version();
  w[kHdrTotalBytes] = static_cast<uint32_t>(w.size() * 4);
  w[kHdrChip] = blob.chip;
  w[kHdrY] = blob.y;
  w[kHdrX] = blob.x;
  w[kHdrEpoch] = blob.epoch;
  w[kHdrStreamCount] = static_cast<uint32_t>(plan.streams.size());
  w[kHdrStreamTableOffset] = plan.streams.empty() ? 0 : tableOffset;
  w[kHdrConfigCount] = static_cast<uint32_t>(plan.configs.size());
  w[kHdrConfigTableOffset] = plan.configs.empty() ? 0 : configOffset;
  std::vector<uint32_t> listOffsets;  // byte offset of each chunk list, after the stream refs
  for (uint32_t next = refsOffset + 4 * static_cast<uint32_t>(plan.refs); const auto& list : plan.chunkLists) {
    listOffsets.push_back(next);
    std::copy(list.begin(), list.end(), w.begin() + next / 4);
    next += 4 * static_cast<uint32_t>(list.size());
  }

  uint32_t nextPhase = phasesOffset;  // byte offset of the next phase record
  size_t phaseIndex = 0;
  for (size_t i = 0; i < plan.streams.size(); ++i) {
    const Stream& s = *plan.streams[i];
    uint32_t* entry = &w[tableOffset / 4 + i * kStreamEntryWords];
    entry[0] = s.name.streamId;
    const std::vector<PhaseRecordRef>& recs = plan.records[i];
    entry[1] = static_cast<uint32_t>(recs.size());
    entry[2] = recs.empty() ? 0 : nextPhase;
    for (const PhaseRecordRef& rec : recs) {
      uint32_t* r = &w[nextPhase / 4];
      nextPhase += kPhaseRecordWords * 4;
      if (rec.loop) {
        r[kLpCount] = rec.count;
        r[kLpBodyItems] = rec.bodyItems;
        r[kPhFlags] = kFlagLoop;
        r[kLpIdDeltaLo] = lo32(rec.deltas.phaseId);
        r[kLpIdDeltaHi] = hi32(rec.deltas.phaseId);
        r[kLpOffsetDelta] = rec.deltas.srcTileOffset;
        r[kLpFreedDelta] = rec.deltas.srcFreedTiles;
        r[kLpChunkDelta] = rec.deltas.chunkOffset;
        continue;
      }
      const StreamPhase& p = s.phases[rec.phase];
      r[kPhIdLo] = lo32(p.phaseId);
      r[kPhIdHi] = hi32(p.phaseId);
      r[kPhFlags] = phaseFlags(p);
      r[kPhNumMsgs] = p.numMsgs;
      r[kPhSrcTileOffset] = p.srcTileOffset;
      r[kPhSrcFreedTiles] = p.srcFreedTiles;
      if (uint32_t list = plan.phaseChunkList[phaseIndex]) {
        r[kPhChunkTiles] = p.srcChunkTiles | (plan.chunkCompressed[list - 1] ? kChunkLoopFlag : 0);
        r[kPhChunkList] = listOffsets[list - 1];
      }
      r[kPhConfig] = plan.phaseConfig[phaseIndex++];
    }
  }
  uint32_t nextRef = refsOffset;  // byte offset of the next stream reference
  for (size_t c = 0; c < plan.configs.size(); ++c) {
    uint32_t* r = &w[configOffset / 4 + c * kConfigRecordWords];
    std::copy(plan.configs[c].begin(), plan.configs[c].end(), r);
    const StreamPhase& p = *plan.configPhase[c];
    auto putList = [&](const std::vector<StreamName>& list, uint32_t offsetIdx) {
      r[offsetIdx] = list.empty() ? 0 : nextRef;
      for (const StreamName& n : list) {
        w[nextRef / 4] = packStreamRef(n);
        nextRef += 4;
      }
    };
    putList(p.src, kCfSrcOffset);
    putList(p.dest, kCfDestOffset);
  }
  w[kHdrChecksum] = blobChecksum(w);
  return w;
}

}  // namespace

std::vector<uint32_t> encodeCoreBlob(const CoreBlob& blob) { return encodeFromPlan(blob, makePlan(blob, false)); }

std::vector<uint32_t> encodeCoreBlobLoops(const CoreBlob& blob) {
  Plan flat = makePlan(blob, false);
  Plan loops = makePlan(blob, true);
  return encodeFromPlan(blob, loops.sizeBytes() < flat.sizeBytes() ? loops : flat);
}

EncodedBlob encodeCoreBlobWithin(const CoreBlob& blob, uint64_t limitBytes) {
  Plan plan = makePlan(blob, false);
  if (plan.sizeBytes() > limitBytes)
    if (Plan loops = makePlan(blob, true); loops.sizeBytes() < plan.sizeBytes()) plan = std::move(loops);
  EncodedBlob e{sizeInfo(plan), {}};
  if (e.info.bytes <= limitBytes) e.words = encodeFromPlan(blob, plan);
  return e;
}

namespace {

class Decoder {
public:
  Decoder(std::span<const uint8_t> bytes, std::string& error) : bytes_(bytes), error_(error) {}

  std::optional<CoreBlob> run();

private:
  uint32_t word(uint64_t byteOffset) const {
    const uint8_t* p = bytes_.data() + byteOffset;
    return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
  }
  bool fail(uint64_t offset, const std::string& what, const std::string& problem) {
    error_ = "offset " + hex32(offset) + ": " + what + ": " + problem;
    return false;
  }
  // Claims [offset, offset + words * 4) for `what`: aligned, past the
  // header, inside the blob and not used by another structure.
  bool claim(uint64_t fieldOffset, const std::string& what, uint64_t offset, uint64_t words);
  // A count/offset pair of a table or list: a zero count has offset 0.
  bool region(uint64_t countField, uint64_t offsetField, const std::string& what, uint64_t entryWords,
              uint32_t& count, uint32_t& offset);
  bool readConfig(uint32_t index, uint64_t at, StreamPhase& out);
  // The phase record at `r`'s chunk list into p (numMsgs already set).
  bool readChunkList(uint64_t r, const std::string& pname, StreamPhase& p);

  std::span<const uint8_t> bytes_;
  std::string& error_;
  uint32_t total_ = 0;
  uint32_t version_ = 0;
  uint64_t decodedPhases_ = 0;  // phases of all streams so far, loops expanded
  std::vector<bool> used_;  // per word of the blob
  std::map<uint32_t, std::pair<uint32_t, bool>> chunkLists_;  // offset -> entries (and loops?) of the lists claimed (phases share them)
  uint64_t decodedEntries_ = 0;  // src/dest and chunk entries copied into phases so far
};

bool Decoder::readChunkList(uint64_t r, const std::string& pname, StreamPhase& p) {
  uint32_t tiles = word(r + kPhChunkTiles * 4);
  const uint32_t offset = word(r + kPhChunkList * 4);
  // Version 6: bit 31 of the chunk size marks a list with loop entries
  // (a length word first).
  const bool compressed = version_ == kBlobVersionLoops && (tiles & kChunkLoopFlag);
  tiles &= compressed ? ~kChunkLoopFlag : ~0u;
  if (tiles == 0) {
    if (offset != 0 || compressed)
      return fail(r + kPhChunkList * 4, pname + ".chunk_list",
                  "no chunk size but offset " + hex32(offset) + " (expected 0)");
    return true;
  }
  if (p.numMsgs == 0 || p.numMsgs % tiles != 0)
    return fail(r + kPhChunkTiles * 4, pname + ".chunk_tiles",
                "num_msgs " + std::to_string(p.numMsgs) + " is not a positive multiple of the chunk size " +
                    std::to_string(tiles));
  const uint32_t count = p.numMsgs / tiles;
  decodedEntries_ += count;
  if (decodedEntries_ > kMaxDecodedRefs)
    return fail(r + kPhChunkList * 4, pname + ".chunk_list",
                "the phases' lists add up to more than " + std::to_string(kMaxDecodedRefs) + " entries");
  uint32_t stored = count;  // words of the list after its length word, if any
  if (compressed) {
    if (offset % 4 != 0 || offset < kHeaderWords * 4 || uint64_t{offset} + 4 > total_)
      return claim(r + kPhChunkList * 4, pname + " chunk list", offset, 1);
    stored = word(offset);
  }
  const uint64_t words = uint64_t{stored} + (compressed ? 1 : 0);
  auto it = chunkLists_.find(offset);
  if (it == chunkLists_.end()) {
    if (!claim(r + kPhChunkList * 4, pname + " chunk list", offset, words)) return false;
    chunkLists_.emplace(offset, std::pair{count, compressed});
  } else if (it->second != std::pair{count, compressed}) {
    return fail(r + kPhChunkList * 4, pname + ".chunk_list",
                "the list at offset " + hex32(offset) + " is shared with a phase that reads " +
                    std::to_string(it->second.first) + " entries" + (it->second.second ? " (with loops)" : "") +
                    ", this one " + std::to_string(count) + (compressed ? " (with loops)" : ""));
  }
  p.srcChunkTiles = tiles;
  if (compressed) {
    std::vector<uint32_t> raw(stored);
    for (uint32_t j = 0; j < stored; ++j) raw[j] = word(uint64_t{offset} + 4 + uint64_t{j} * 4);
    std::string why;
    if (!expandChunkList(raw.data(), raw.size(), count, p.srcChunkOffsets, why))
      return fail(uint64_t{offset}, pname + " chunk list", why);
    return true;
  }
  p.srcChunkOffsets.resize(count);
  for (uint32_t j = 0; j < count; ++j) p.srcChunkOffsets[j] = word(uint64_t{offset} + uint64_t{j} * 4);
  return true;
}

bool Decoder::claim(uint64_t fieldOffset, const std::string& what, uint64_t offset, uint64_t words) {
  if (offset % 4 != 0) return fail(fieldOffset, what, "offset " + hex32(offset) + " is not a multiple of 4");
  if (offset < kHeaderWords * 4)
    return fail(fieldOffset, what, "offset " + hex32(offset) + " points into the header");
  if (offset + words * 4 > total_)
    return fail(fieldOffset, what,
                std::to_string(words) + " words at offset " + hex32(offset) + " run past the end of the blob (" +
                    std::to_string(total_) + " bytes)");
  for (uint64_t i = offset / 4; i < offset / 4 + words; ++i) {
    if (used_[i])
      return fail(fieldOffset, what,
                  "words at offset " + hex32(offset) + " overlap another part of the blob (offset " + hex32(i * 4) + ")");
    used_[i] = true;
  }
  return true;
}

bool Decoder::region(uint64_t countField, uint64_t offsetField, const std::string& what, uint64_t entryWords,
                     uint32_t& count, uint32_t& offset) {
  count = word(countField);
  offset = word(offsetField);
  if (count == 0) {
    if (offset != 0) return fail(offsetField, what + " offset", "nothing to point at but offset " + hex32(offset) + " (expected 0)");
    return true;
  }
  return claim(offsetField, what, offset, uint64_t{count} * entryWords);
}

bool Decoder::readConfig(uint32_t index, uint64_t at, StreamPhase& p) {
  auto f = [&](uint32_t idx) { return word(at + idx * 4); };
  const std::string cname = "config[" + std::to_string(index) + "]";
  p.msgSize = f(kCfMsgSize);
  p.bufAddr = f(kCfBufAddr);
  p.bufSize = f(kCfBufSize);
  p.numItersInEpoch = f(kCfNumIters);
  p.pipeId = join64(f(kCfPipeIdLo), f(kCfPipeIdHi));
  p.bufId = join64(f(kCfBufIdLo), f(kCfBufIdHi));
  p.dramBufNocAddr = join64(f(kCfDramAddrLo), f(kCfDramAddrHi));
  p.dramBufSizeQSlots = f(kCfDramQSlots);
  p.dramBufSizeTiles = f(kCfDramSlotTiles);
  p.dramChunkTiles = f(kCfDramChunkTiles);
  p.dramReaderIndex = f(kCfDramReaderIndex);
  p.dramTotalReaders = f(kCfDramTotalReaders);
  p.incomingDataNoc = f(kCfIncomingNoc);
  p.outgoingDataNoc = f(kCfOutgoingNoc);
  p.vc = f(kCfVc);
  p.dataFormat = f(kCfDataFormat);
  p.srcPeriodTiles = f(kCfSrcPeriodTiles);
  p.paddingValue = std::bit_cast<float>(f(kCfPaddingValue));
  p.untilizeRDim = f(kCfUntilizeRDim);
  p.untilizeCDim = f(kCfUntilizeCDim);
  p.untilizeFullRDim = f(kCfUntilizeFullRDim);
  p.untilizeFullCDim = f(kCfUntilizeFullCDim);
  p.untilizeZDim = f(kCfUntilizeZDim) & 0xFFFFFFu;
  p.untilizeTileR = 32u - ((f(kCfUntilizeZDim) >> 24) & 31u);
  p.untilizeTileC = (f(kCfUntilizeZDim) >> 29) & 1u ? 16u : 32u;
  auto getList = [&](uint32_t countIdx, uint32_t offsetIdx, const char* name, std::vector<StreamName>& out) {
    uint32_t count = 0, offset = 0;
    const std::string lname = cname + "." + name;
    if (!region(at + countIdx * 4, at + offsetIdx * 4, lname + " list", 1, count, offset)) return false;
    out.reserve(count);
    for (uint32_t j = 0; j < count; ++j) {
      const uint64_t a = uint64_t{offset} + uint64_t{j} * 4;
      StreamName n = unpackStreamRef(word(a));
      if (n.streamId >= kStreamsPerCore)
        return fail(a, lname + "[" + std::to_string(j) + "]",
                    "stream id " + std::to_string(n.streamId) + " is not below " + std::to_string(kStreamsPerCore));
      out.push_back(n);
    }
    return true;
  };
  return getList(kCfSrcCount, kCfSrcOffset, "src", p.src) && getList(kCfDestCount, kCfDestOffset, "dest", p.dest);
}

std::optional<CoreBlob> Decoder::run() {
  const uint64_t headerBytes = kHeaderWords * 4;
  if (bytes_.size() < headerBytes) {
    fail(0, "header", "truncated: " + std::to_string(bytes_.size()) + " bytes, the header alone is " +
                          std::to_string(headerBytes));
    return std::nullopt;
  }
  if (uint32_t m = word(0); m != kBlobMagic) {
    fail(0, "header.magic", "bad magic " + hex32(m) + " (expected " + hex32(kBlobMagic) + ", 'TSBL')");
    return std::nullopt;
  }
  version_ = word(kHdrVersion * 4);
  if (version_ != kBlobVersion && version_ != kBlobVersionLoops) {
    fail(kHdrVersion * 4, "header.version", "unsupported layout version " + std::to_string(version_) + " (expected " +
                                                std::to_string(kBlobVersion) + " or " +
                                                std::to_string(kBlobVersionLoops) + ")");
    return std::nullopt;
  }
  total_ = word(kHdrTotalBytes * 4);
  if (total_ % 4 != 0 || total_ < headerBytes || total_ > contract::kOverlayBlobSize) {
    fail(kHdrTotalBytes * 4, "header.total_bytes",
         std::to_string(total_) + " bytes: must be a multiple of 4 in [" + std::to_string(headerBytes) + ", " +
             std::to_string(contract::kOverlayBlobSize) + "]");
    return std::nullopt;
  }
  if (total_ > bytes_.size()) {
    fail(kHdrTotalBytes * 4, "header.total_bytes",
         "truncated: the blob is " + std::to_string(total_) + " bytes but only " + std::to_string(bytes_.size()) +
             " are present");
    return std::nullopt;
  }
  {
    uint32_t sum = 0;
    for (uint64_t i = 0; i < total_ / 4; ++i)
      if (i != kHdrChecksum) sum += word(i * 4);
    uint32_t stored = word(kHdrChecksum * 4);
    if (sum != stored) {
      fail(kHdrChecksum * 4, "header.checksum", "checksum mismatch: stored " + hex32(stored) + ", computed " + hex32(sum));
      return std::nullopt;
    }
  }
  used_.assign(total_ / 4, false);
  for (uint32_t i = 0; i < kHeaderWords; ++i) used_[i] = true;

  CoreBlob blob;
  blob.chip = word(kHdrChip * 4);
  blob.y = word(kHdrY * 4);
  blob.x = word(kHdrX * 4);
  blob.epoch = word(kHdrEpoch * 4);
  // The core's own coordinates must fit a stream reference (its streams'
  // names are built from them).
  for (auto [idx, name] : {std::pair{kHdrChip, "header.chip"}, {kHdrY, "header.y"}, {kHdrX, "header.x"}}) {
    if (uint32_t v = word(idx * 4); v > 255) {
      fail(idx * 4, name, std::to_string(v) + " is over 255 (a stream reference holds 8 bits)");
      return std::nullopt;
    }
  }
  if (uint32_t n = word(kHdrStreamCount * 4); n > kStreamsPerCore) {
    fail(kHdrStreamCount * 4, "header.stream_count",
         std::to_string(n) + " streams (a core has " + std::to_string(kStreamsPerCore) + ")");
    return std::nullopt;
  }
  uint32_t streamCount = 0, tableOffset = 0, configCount = 0, configOffset = 0;
  if (!region(kHdrStreamCount * 4, kHdrStreamTableOffset * 4, "stream table", kStreamEntryWords, streamCount,
              tableOffset) ||
      !region(kHdrConfigCount * 4, kHdrConfigTableOffset * 4, "config table", kConfigRecordWords, configCount,
              configOffset))
    return std::nullopt;

  // Configs first (each with its lists), then the streams' phases.
  std::vector<StreamPhase> configs(configCount);
  for (uint32_t c = 0; c < configCount; ++c)
    if (!readConfig(c, uint64_t{configOffset} + uint64_t{c} * kConfigRecordWords * 4, configs[c])) return std::nullopt;

  for (uint32_t i = 0; i < streamCount; ++i) {
    const uint64_t e = uint64_t{tableOffset} + uint64_t{i} * kStreamEntryWords * 4;
    const std::string sname = "stream[" + std::to_string(i) + "]";
    Stream s;
    s.name = StreamName{blob.chip, blob.y, blob.x, word(e)};
    if (s.name.streamId >= kStreamsPerCore) {
      fail(e, sname + ".stream_id", std::to_string(s.name.streamId) + " is not below " + std::to_string(kStreamsPerCore));
      return std::nullopt;
    }
    if (!blob.streams.empty() && s.name.streamId <= blob.streams.back().name.streamId) {
      fail(e, sname + ".stream_id",
           std::to_string(s.name.streamId) + " after " + std::to_string(blob.streams.back().name.streamId) +
               " (stream ids must be strictly increasing)");
      return std::nullopt;
    }
    const std::string what = sname + " (id " + std::to_string(s.name.streamId) + ")";
    uint32_t phaseCount = 0, phasesOffset = 0;
    if (!region(e + 4, e + 8, what + " phase records", kPhaseRecordWords, phaseCount, phasesOffset)) return std::nullopt;
    // Phase records as they are; loop records (version 6) expanded after.
    std::vector<StreamPhase> records;
    std::vector<PhaseRecordRef> refs;
    refs.reserve(phaseCount);
    for (uint32_t k = 0; k < phaseCount; ++k) {
      const uint64_t r = uint64_t{phasesOffset} + uint64_t{k} * kPhaseRecordWords * 4;
      auto f = [&](uint32_t idx) { return word(r + idx * 4); };
      const std::string pname = what + ".phase[" + std::to_string(k) + "]";
      const uint32_t flags = f(kPhFlags);
      if (version_ == kBlobVersionLoops && (flags & kFlagLoop)) {
        if (flags != kFlagLoop) {
          fail(r + kPhFlags * 4, pname + ".flags", "a loop record has no other flag bits, but " + hex32(flags));
          return std::nullopt;
        }
        if (f(kLpReserved) != 0) {
          fail(r + kLpReserved * 4, pname + ".reserved", "must be 0, not " + hex32(f(kLpReserved)));
          return std::nullopt;
        }
        refs.push_back(PhaseRecordRef{true, 0, f(kLpCount), f(kLpBodyItems),
                                      PhaseDeltas{join64(f(kLpIdDeltaLo), f(kLpIdDeltaHi)), f(kLpOffsetDelta),
                                                  f(kLpFreedDelta), f(kLpChunkDelta)}});
        continue;
      }
      const uint32_t config = f(kPhConfig);
      if (config >= configCount) {
        fail(r + kPhConfig * 4, pname + ".config",
             "index " + std::to_string(config) + " is not below the config count " + std::to_string(configCount));
        return std::nullopt;
      }
      if (flags & ~uint32_t{kFlagsKnown}) {
        fail(r + kPhFlags * 4, pname + ".flags", "unknown flag bits " + hex32(flags & ~uint32_t{kFlagsKnown}));
        return std::nullopt;
      }
      decodedEntries_ += configs[config].src.size() + configs[config].dest.size();
      if (decodedEntries_ > kMaxDecodedRefs) {
        fail(r + kPhConfig * 4, pname + ".config",
             "the phases' lists add up to more than " + std::to_string(kMaxDecodedRefs) + " entries");
        return std::nullopt;
      }
      StreamPhase p = configs[config];
      p.phaseId = join64(f(kPhIdLo), f(kPhIdHi));
      p.sourceEndpoint = flags & kFlagSourceEndpoint;
      p.remoteSource = flags & kFlagRemoteSource;
      p.dramInput = flags & kFlagDramInput;
      p.localReceiver = flags & kFlagLocalReceiver;
      p.remoteReceiver = flags & kFlagRemoteReceiver;
      p.dramOutput = flags & kFlagDramOutput;
      p.dramRam = flags & kFlagDramRam;
      p.srcPeriodDone = flags & kFlagSrcPeriodDone;
      p.intermediate = flags & kFlagIntermediate;
      p.dramPadding = flags & kFlagDramPadding;
      p.ethSender = flags & kFlagEthSender;
      p.ethReceiver = flags & kFlagEthReceiver;
      if (std::string e = checkEthernetPhase(p, s.name); !e.empty()) {
        fail(r + kPhFlags * 4, pname + ".flags", e);
        return std::nullopt;
      }
      p.numMsgs = f(kPhNumMsgs);
      p.srcTileOffset = f(kPhSrcTileOffset);
      p.srcFreedTiles = f(kPhSrcFreedTiles);
      if (!readChunkList(r, pname, p)) return std::nullopt;
      refs.push_back(PhaseRecordRef{false, static_cast<uint32_t>(records.size()), 0, 0, {}});
      records.push_back(std::move(p));
    }
    if (records.size() == refs.size()) {
      s.phases = std::move(records);
    } else {
      std::string why;
      size_t bad = 0;
      uint64_t copied = 0;
      if (!expandPhaseRecords(refs, records, kMaxDecodedPhases - decodedPhases_, kMaxDecodedRefs - decodedEntries_,
                              s.phases, copied, why, bad)) {
        fail(uint64_t{phasesOffset} + uint64_t{bad} * kPhaseRecordWords * 4,
             what + ".phase[" + std::to_string(bad) + "]", "loop record: " + why);
        return std::nullopt;
      }
      decodedEntries_ += copied;
    }
    decodedPhases_ += s.phases.size();
    if (decodedPhases_ > kMaxDecodedPhases) {
      fail(e + 4, what + " phase records", "the blob holds more than " + std::to_string(kMaxDecodedPhases) + " phases");
      return std::nullopt;
    }
    blob.streams.push_back(std::move(s));
  }
  return blob;
}

}  // namespace

Expected<CoreBlob> decodeCoreBlob(std::span<const uint8_t> bytes) {
  std::string error;
  if (std::optional<CoreBlob> blob = Decoder(bytes, error).run()) return std::move(*blob);
  return Failure{std::move(error)};
}

std::vector<uint8_t> wordsToBytes(std::span<const uint32_t> words) {
  std::vector<uint8_t> out;
  out.reserve(words.size() * 4);
  for (uint32_t w : words)
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(w >> (8 * b)));
  return out;
}

std::vector<uint32_t> bytesToWords(std::span<const uint8_t> bytes) {
  std::vector<uint32_t> out(bytes.size() / 4);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = uint32_t{bytes[4 * i]} | (uint32_t{bytes[4 * i + 1]} << 8) | (uint32_t{bytes[4 * i + 2]} << 16) |
             (uint32_t{bytes[4 * i + 3]} << 24);
  return out;
}

// ---- .hex ----

std::string writeHex(const std::vector<HexSegment>& segments) {
  std::string out;
  size_t words = 0;
  for (const HexSegment& s : segments) words += s.words.size() + 1;
  out.reserve(words * 9);
  // Eight lowercase hex digits and a newline, as "%08x\n" gives, without a snprintf call per word.
  auto word = [&out](uint32_t w) {
    char buf[9];
    for (int i = 7; i >= 0; --i, w >>= 4) buf[i] = "0123456789abcdef"[w & 0xF];
    buf[8] = '\n';
    out.append(buf, 9);
  };
  for (const HexSegment& s : segments) {
    out += '@';
    word(s.wordAddress);
    for (uint32_t w : s.words) word(w);
  }
  return out;
}

namespace {

// 1 to 8 hex digits, nothing else.
std::optional<uint32_t> parseHexWord(std::string_view s) {
  if (s.empty() || s.size() > 8) return std::nullopt;
  uint32_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

Expected<std::vector<HexSegment>> readHex(const std::string& text) {
  std::vector<HexSegment> segments;
  size_t pos = 0;
  uint64_t lineNo = 0;
  auto fail = [&](const std::string& msg) { return Failure{"line " + std::to_string(lineNo) + ": " + msg}; };
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty()) continue;
    if (line.front() == '@') {
      auto addr = parseHexWord(line.substr(1));
      if (!addr) return fail("bad address line '" + std::string(line.substr(0, 40)) + "' (expected @ and 1 to 8 hex digits)");
      segments.push_back(HexSegment{*addr, {}});
      continue;
    }
    auto w = parseHexWord(line);
    if (!w) return fail("bad word '" + std::string(line.substr(0, 40)) + "' (expected 1 to 8 hex digits)");
    if (segments.empty()) return fail("word before the first @address line");
    HexSegment& seg = segments.back();
    if (uint64_t{seg.wordAddress} + seg.words.size() > 0xFFFFFFFFull)
      return fail("words run past word address 0xffffffff");
    seg.words.push_back(*w);
  }
  return segments;
}

}  // namespace tessera::blob
