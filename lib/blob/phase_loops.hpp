// Phase loops (blob layout version 6): a stream's phase list written as
// phase records and loop records, so that long repeated phase patterns
// (gathers alternating between senders, strided and broadcast reads that
// step their window offset phase by phase) take a few records instead of
// one record per phase. Layout and semantics: docs/device-model.md,
// "Overlay blobs and streams" (phase loops).
//
// A loop record repeats the expansion of the `bodyItems` items before it
// (an item is a phase record or a loop record with its own body) `count`
// more times; copy i (1..count) adds i x delta to every phase's phase id,
// src_tile_offset, src_freed_tiles and to each entry of its chunk list
// (phases without a chunk list keep none). Arithmetic wraps (64 bits for
// the phase id, 32 for the others), so deltas may be "negative".
#pragma once

#include "blob/blob_model.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::blob {

// What a loop record adds per copy.
struct PhaseDeltas {
  uint64_t phaseId = 0;
  uint32_t srcTileOffset = 0;
  uint32_t srcFreedTiles = 0;
  uint32_t chunkOffset = 0;
};

// One record of a stream's encoded phase list.
struct PhaseRecordRef {
  bool loop = false;
  uint32_t phase = 0;      // !loop: index into the stream's phases
  uint32_t count = 0;      // loop: copies added after the body (>= 1)
  uint32_t bodyItems = 0;  // loop: items before this record that it repeats (>= 1)
  PhaseDeltas deltas;      // loop
};

// The records of `phases`, phase loops found greedily (longest saving
// first, nested loops where the loops themselves repeat). Expanding the
// result (expandPhaseRecords) gives `phases` back exactly. Deterministic.
std::vector<PhaseRecordRef> compressPhases(const std::vector<StreamPhase>& phases);

// `p` shifted by `times` x `d` (the loop semantics above).
void shiftPhase(StreamPhase& p, const PhaseDeltas& d, uint64_t times);

}  // namespace tessera::blob

namespace tessera::blob {

// The phases `records` stand for: phase records take `phases[rec.phase]`.
// On a malformed list (a loop with no copies or an empty body, a body
// longer than the items before it, more than `maxPhases` phases in all)
// returns false with `error` and the index of the offending record in
// `badRecord`. `maxCopiedEntries` bounds the src, dest and chunk list
// entries of the copies the loops make (`copiedEntries`: how many).
bool expandPhaseRecords(const std::vector<PhaseRecordRef>& records, const std::vector<StreamPhase>& phases,
                        uint64_t maxPhases, uint64_t maxCopiedEntries, std::vector<StreamPhase>& out,
                        uint64_t& copiedEntries, std::string& error, size_t& badRecord);

// Chunk list loops (version 6): a compressed chunk list is its entries, where
// a word with bit 31 set starts a loop entry of three words: 0x80000000 |
// pattern length P, count N, increment D; it appends N copies of the last P
// entries so far, copy i adding i x D (mod 2^32). Tile offsets stay below
// 2^31, so bit 31 tells the two apart (as in BUDA's dram_scatter_offsets
// loops). Returns the compressed words, or the list itself when loops do
// not make it shorter.
constexpr uint32_t kChunkLoopFlag = 0x80000000u;
std::vector<uint32_t> compressChunkList(const std::vector<uint32_t>& list);

// The entries of a compressed list; false with `error` when it is
// malformed or does not expand to exactly `expected` entries.
bool expandChunkList(const uint32_t* words, size_t count, uint64_t expected, std::vector<uint32_t>& out,
                     std::string& error);

}  // namespace tessera::blob
