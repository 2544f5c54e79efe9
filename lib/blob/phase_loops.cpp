// Phase loops: finding them (blobgen) and expanding them (the decoder).
// Semantics in phase_loops.hpp; the layout in docs/device-model.md.
#include "blob/phase_loops.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>

namespace tessera::blob {

void shiftPhase(StreamPhase& p, const PhaseDeltas& d, uint64_t times) {
  const uint32_t t32 = static_cast<uint32_t>(times);
  p.phaseId += d.phaseId * times;
  p.srcTileOffset += d.srcTileOffset * t32;
  p.srcFreedTiles += d.srcFreedTiles * t32;
  for (uint32_t& o : p.srcChunkOffsets) o += d.chunkOffset * t32;
}

bool expandPhaseRecords(const std::vector<PhaseRecordRef>& records, const std::vector<StreamPhase>& phases,
                        uint64_t maxPhases, uint64_t maxCopiedEntries, std::vector<StreamPhase>& out,
                        uint64_t& copiedEntries, std::string& error, size_t& badRecord) {
  out.clear();
  copiedEntries = 0;
  std::vector<size_t> itemStart;  // first phase of every item so far (a loop absorbs its body)
  for (size_t r = 0; r < records.size(); ++r) {
    const PhaseRecordRef& rec = records[r];
    badRecord = r;
    if (!rec.loop) {
      if (rec.phase >= phases.size()) {
        error = "phase " + std::to_string(rec.phase) + " does not exist";
        return false;
      }
      if (out.size() + 1 > maxPhases) {
        error = "the stream expands to more than " + std::to_string(maxPhases) + " phases";
        return false;
      }
      itemStart.push_back(out.size());
      out.push_back(phases[rec.phase]);
      continue;
    }
    if (rec.count == 0 || rec.bodyItems == 0) {
      error = "a loop needs at least one copy and one body item (count " + std::to_string(rec.count) + ", body " +
              std::to_string(rec.bodyItems) + ")";
      return false;
    }
    if (rec.bodyItems > itemStart.size()) {
      error = "the loop repeats " + std::to_string(rec.bodyItems) + " items but only " +
              std::to_string(itemStart.size()) + " come before it";
      return false;
    }
    const size_t begin = itemStart[itemStart.size() - rec.bodyItems];
    const size_t end = out.size();
    if (uint64_t{end - begin} * rec.count + end > maxPhases) {
      error = "the stream expands to more than " + std::to_string(maxPhases) + " phases";
      return false;
    }
    uint64_t bodyEntries = 0;
    for (size_t k = begin; k < end; ++k)
      bodyEntries += out[k].src.size() + out[k].dest.size() + out[k].srcChunkOffsets.size();
    if (bodyEntries * rec.count > maxCopiedEntries - copiedEntries) {
      error = "the copies' src, dest and chunk lists add up to more than " + std::to_string(maxCopiedEntries) +
              " entries";
      return false;
    }
    copiedEntries += bodyEntries * rec.count;
    itemStart.resize(itemStart.size() - rec.bodyItems);
    itemStart.push_back(begin);
    out.reserve(end + (end - begin) * rec.count);
    for (uint32_t i = 1; i <= rec.count; ++i)
      for (size_t k = begin; k < end; ++k) {
        StreamPhase p = out[k];
        shiftPhase(p, rec.deltas, i);
        out.push_back(std::move(p));
      }
  }
  return true;
}

namespace {

// Longest body a loop may have (bounds the search; real patterns are a
// few phases: the senders of a gather, the readers of a fork).
constexpr size_t kMaxBody = 128;
// Passes over the item list (each may nest the loops of the one before).
constexpr int kMaxPasses = 4;

struct Item {
  uint32_t key = 0;                 // everything but the shiftable fields (interned)
  std::array<uint64_t, 4> base{};   // phase id, tile offset, freed tiles, first chunk offset
  bool chunk = false;               // has (or contains) a phase with a chunk list
  std::vector<PhaseRecordRef> records;
};

constexpr uint64_t kMask32 = 0xFFFFFFFFu;

class Compressor {
public:
  std::vector<Item> phaseItems(const std::vector<StreamPhase>& phases);
  std::vector<Item> pass(const std::vector<Item>& in);

private:
  uint32_t intern(std::vector<uint64_t> key) {
    auto [it, added] = keys_.emplace(std::move(key), static_cast<uint32_t>(keys_.size()));
    return it->second;
  }
  // The deltas that make items [b, b+L) from [a, a+L), if one set does.
  bool deltaOf(const std::vector<Item>& v, size_t a, size_t b, size_t len, PhaseDeltas& d) const;
  bool matches(const std::vector<Item>& v, size_t a, size_t b, size_t len, const PhaseDeltas& d) const;
  Item loopItem(const std::vector<Item>& v, size_t begin, size_t len, uint32_t count, const PhaseDeltas& d);

  std::map<std::vector<uint64_t>, uint32_t> keys_;
};

// Every encoded field except the four a loop shifts (the blob's config
// words, flags, counts and lists); a chunk list by its shape.
std::vector<uint64_t> phaseKey(const StreamPhase& p) {
  std::vector<uint64_t> k{0,
                          p.numMsgs,
                          p.msgSize,
                          p.bufAddr,
                          p.bufSize,
                          p.numItersInEpoch,
                          p.pipeId,
                          p.bufId,
                          uint64_t{p.sourceEndpoint} | uint64_t{p.remoteSource} << 1 | uint64_t{p.dramInput} << 2 |
                              uint64_t{p.localReceiver} << 3 | uint64_t{p.remoteReceiver} << 4 |
                              uint64_t{p.dramOutput} << 5 | uint64_t{p.ethSender} << 6 |
                              uint64_t{p.ethReceiver} << 7 | uint64_t{p.dramRam} << 8 |
                              uint64_t{p.srcPeriodDone} << 9 | uint64_t{p.intermediate} << 10 |
                              uint64_t{p.dramPadding} << 11,
                          p.dramBufNocAddr,
                          p.dramBufSizeQSlots,
                          p.dramBufSizeTiles,
                          p.dramChunkTiles,
                          p.dramReaderIndex,
                          p.dramTotalReaders,
                          p.incomingDataNoc,
                          p.outgoingDataNoc,
                          p.vc,
                          p.dataFormat,
                          p.srcPeriodTiles,
                          std::bit_cast<uint32_t>(p.paddingValue),
                          p.untilizeRDim,
                          p.untilizeCDim,
                          p.untilizeFullRDim,
                          p.untilizeFullCDim,
                          p.untilizeZDim,
                          p.srcChunkTiles,
                          p.src.size(),
                          p.dest.size(),
                          p.srcChunkOffsets.size()};
  for (const auto* list : {&p.src, &p.dest})
    for (const StreamName& n : *list) k.insert(k.end(), {n.chip, n.y, n.x, n.streamId});
  for (uint32_t o : p.srcChunkOffsets) k.push_back((o - p.srcChunkOffsets.front()) & kMask32);
  return k;
}

uint64_t diff(const Item& a, const Item& b, int field) {
  const uint64_t d = b.base[field] - a.base[field];
  return field == 0 ? d : d & kMask32;
}

std::vector<Item> Compressor::phaseItems(const std::vector<StreamPhase>& phases) {
  std::vector<Item> items;
  items.reserve(phases.size());
  for (size_t i = 0; i < phases.size(); ++i) {
    const StreamPhase& p = phases[i];
    Item it;
    it.key = intern(phaseKey(p));
    it.chunk = !p.srcChunkOffsets.empty();
    it.base = {p.phaseId, p.srcTileOffset, p.srcFreedTiles, it.chunk ? p.srcChunkOffsets.front() : 0};
    it.records.push_back(PhaseRecordRef{false, static_cast<uint32_t>(i), 0, 0, {}});
    items.push_back(std::move(it));
  }
  return items;
}

bool Compressor::deltaOf(const std::vector<Item>& v, size_t a, size_t b, size_t len, PhaseDeltas& d) const {
  bool haveChunk = false;
  for (size_t j = 0; j < len; ++j) {
    const Item& x = v[a + j];
    const Item& y = v[b + j];
    if (x.key != y.key) return false;
    if (j == 0) {
      d.phaseId = diff(x, y, 0);
      d.srcTileOffset = static_cast<uint32_t>(diff(x, y, 1));
      d.srcFreedTiles = static_cast<uint32_t>(diff(x, y, 2));
      d.chunkOffset = 0;
    } else if (diff(x, y, 0) != d.phaseId || diff(x, y, 1) != d.srcTileOffset || diff(x, y, 2) != d.srcFreedTiles) {
      return false;
    }
    if (x.chunk) {
      if (!haveChunk) {
        d.chunkOffset = static_cast<uint32_t>(diff(x, y, 3));
        haveChunk = true;
      } else if (diff(x, y, 3) != d.chunkOffset) {
        return false;
      }
    }
  }
  return true;
}

bool Compressor::matches(const std::vector<Item>& v, size_t a, size_t b, size_t len, const PhaseDeltas& d) const {
  for (size_t j = 0; j < len; ++j) {
    const Item& x = v[a + j];
    const Item& y = v[b + j];
    if (x.key != y.key || diff(x, y, 0) != d.phaseId || diff(x, y, 1) != d.srcTileOffset ||
        diff(x, y, 2) != d.srcFreedTiles || (x.chunk && diff(x, y, 3) != d.chunkOffset))
      return false;
  }
  return true;
}

Item Compressor::loopItem(const std::vector<Item>& v, size_t begin, size_t len, uint32_t count,
                          const PhaseDeltas& d) {
  Item loop;
  loop.base = v[begin].base;
  for (size_t j = 0; j < len && !loop.chunk; ++j)
    if (v[begin + j].chunk) {
      loop.chunk = true;
      loop.base[3] = v[begin + j].base[3];
    }
  // The structure relative to the loop's base: equal keys and shifted
  // bases then mean every phase inside is shifted alike.
  std::vector<uint64_t> k{1, count, len, d.phaseId, d.srcTileOffset, d.srcFreedTiles, d.chunkOffset};
  for (size_t j = 0; j < len; ++j) {
    const Item& x = v[begin + j];
    k.insert(k.end(), {x.key, x.base[0] - loop.base[0], (x.base[1] - loop.base[1]) & kMask32,
                       (x.base[2] - loop.base[2]) & kMask32, x.chunk ? (x.base[3] - loop.base[3]) & kMask32 : 0});
    loop.records.insert(loop.records.end(), x.records.begin(), x.records.end());
  }
  loop.key = intern(std::move(k));
  loop.records.push_back(PhaseRecordRef{true, 0, count, static_cast<uint32_t>(len), d});
  return loop;
}

std::vector<Item> Compressor::pass(const std::vector<Item>& in) {
  std::vector<Item> out;
  const size_t n = in.size();
  std::vector<uint64_t> recordsBefore(n + 1, 0);  // prefix sums of record counts
  for (size_t i = 0; i < n; ++i) recordsBefore[i + 1] = recordsBefore[i] + in[i].records.size();
  size_t i = 0;
  while (i < n) {
    size_t bestLen = 0;
    uint64_t bestCount = 0, bestSaving = 0;
    PhaseDeltas bestDeltas;
    const size_t maxLen = std::min(kMaxBody, (n - i) / 2);
    for (size_t len = 1; len <= maxLen; ++len) {
      PhaseDeltas d;
      if (!deltaOf(in, i, i + len, len, d)) continue;
      uint64_t count = 1;
      while (i + (count + 2) * len <= n && count < 0xFFFFFFFFu && matches(in, i + count * len, i + (count + 1) * len, len, d))
        ++count;
      const uint64_t bodyRecords = recordsBefore[i + len] - recordsBefore[i];
      const uint64_t saving = count * bodyRecords;  // minus the loop record itself
      if (saving > 1 && saving - 1 > bestSaving) {
        bestSaving = saving - 1;
        bestLen = len;
        bestCount = count;
        bestDeltas = d;
      }
    }
    if (bestLen == 0) {
      out.push_back(in[i]);
      ++i;
      continue;
    }
    // The body may hold loops of its own (a period's steps inside the
    // periods' repeat): compress it before it becomes the loop's body.
    std::vector<Item> body(in.begin() + static_cast<std::ptrdiff_t>(i),
                           in.begin() + static_cast<std::ptrdiff_t>(i + bestLen));
    for (int p = 0; p < kMaxPasses && body.size() > 1; ++p) {
      const size_t before = body.size();
      body = pass(body);
      if (body.size() == before) break;
    }
    out.push_back(loopItem(body, 0, body.size(), static_cast<uint32_t>(bestCount), bestDeltas));
    i += (bestCount + 1) * bestLen;
  }
  return out;
}

// Equal in everything the blob encodes (the key) and the shifted fields.
bool samePhases(const std::vector<StreamPhase>& a, const std::vector<StreamPhase>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (phaseKey(a[i]) != phaseKey(b[i]) || a[i].phaseId != b[i].phaseId ||
        a[i].srcTileOffset != b[i].srcTileOffset || a[i].srcFreedTiles != b[i].srcFreedTiles ||
        a[i].srcChunkOffsets != b[i].srcChunkOffsets)
      return false;
  return true;
}

}  // namespace

std::vector<PhaseRecordRef> compressPhases(const std::vector<StreamPhase>& phases) {
  std::vector<PhaseRecordRef> flat;
  flat.reserve(phases.size());
  for (size_t i = 0; i < phases.size(); ++i) flat.push_back(PhaseRecordRef{false, static_cast<uint32_t>(i), 0, 0, {}});
  Compressor c;
  std::vector<Item> items = c.phaseItems(phases);
  for (int p = 0; p < kMaxPasses; ++p) {
    const size_t before = items.size();
    items = c.pass(items);
    if (items.size() == before) break;
  }
  std::vector<PhaseRecordRef> records;
  for (const Item& it : items) records.insert(records.end(), it.records.begin(), it.records.end());
  if (records.size() >= flat.size()) return flat;
  // The records must give the phases back; anything else would be a bug
  // in the search, and the flat list is always right.
  std::vector<StreamPhase> back;
  std::string error;
  size_t bad = 0;
  uint64_t copied = 0;
  if (!expandPhaseRecords(records, phases, phases.size(), UINT64_MAX, back, copied, error, bad) ||
      !samePhases(back, phases))
    return flat;
  return records;
}

std::vector<uint32_t> compressChunkList(const std::vector<uint32_t>& list) {
  std::vector<uint32_t> out;
  const size_t n = list.size();
  for (uint32_t v : list)
    if (v & kChunkLoopFlag) return list;  // not a tile offset: keep it plain
  size_t i = 0;
  while (i < n) {
    // The pattern [i, i + len) and how often it repeats with one increment.
    size_t bestLen = 0;
    uint64_t bestCount = 0, bestSaving = 0;
    uint32_t bestInc = 0;
    const size_t maxLen = std::min(kMaxBody * 4, (n - i) / 2);
    for (size_t len = 1; len <= maxLen; ++len) {
      const uint32_t inc = list[i + len] - list[i];
      uint64_t count = 0;
      for (size_t k = i + len; k + len <= n; k += len) {
        bool same = true;
        for (size_t j = 0; j < len && same; ++j) same = list[k + j] - list[k + j - len] == inc;
        if (!same) break;
        ++count;
      }
      const uint64_t saved = count * len;
      if (count > 0 && saved > 3 && saved - 3 > bestSaving) {
        bestSaving = saved - 3;
        bestLen = len;
        bestCount = count;
        bestInc = inc;
      }
    }
    if (bestLen == 0) {
      out.push_back(list[i++]);
      continue;
    }
    out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(i),
               list.begin() + static_cast<std::ptrdiff_t>(i + bestLen));
    out.insert(out.end(), {kChunkLoopFlag | static_cast<uint32_t>(bestLen), static_cast<uint32_t>(bestCount), bestInc});
    i += (bestCount + 1) * bestLen;
  }
  if (out.size() >= n) return list;
  // Keep the loops only if they give the list back (the search's safety net).
  std::vector<uint32_t> back;
  std::string error;
  if (!expandChunkList(out.data(), out.size(), n, back, error) || back != list) return list;
  return out;
}

bool expandChunkList(const uint32_t* words, size_t count, uint64_t expected, std::vector<uint32_t>& out,
                     std::string& error) {
  out.clear();
  for (size_t w = 0; w < count; ++w) {
    if (!(words[w] & kChunkLoopFlag)) {
      if (out.size() + 1 > expected) {
        error = "expands to more than " + std::to_string(expected) + " entries";
        return false;
      }
      out.push_back(words[w]);
      continue;
    }
    if (w + 2 >= count) {
      error = "entry " + std::to_string(w) + ": a loop entry needs two more words";
      return false;
    }
    const uint64_t len = words[w] & ~kChunkLoopFlag, n = words[w + 1];
    const uint32_t inc = words[w + 2];
    if (len == 0 || len > out.size() || n == 0) {
      error = "entry " + std::to_string(w) + ": a loop of " + std::to_string(n) + " copies of the last " +
              std::to_string(len) + " entries (" + std::to_string(out.size()) + " so far)";
      return false;
    }
    if (out.size() + len * n > expected) {
      error = "expands to more than " + std::to_string(expected) + " entries";
      return false;
    }
    const size_t begin = out.size() - len;
    for (uint64_t i = 1; i <= n; ++i)
      for (uint64_t j = 0; j < len; ++j) out.push_back(out[begin + j] + static_cast<uint32_t>(i) * inc);
    w += 2;
  }
  if (out.size() != expected) {
    error = "expands to " + std::to_string(out.size()) + " entries, not " + std::to_string(expected);
    return false;
  }
  return true;
}

}  // namespace tessera::blob
