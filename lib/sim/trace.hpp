// What the simulated chip records for `loader run --trace` and `--report`
// (lib/loader/trace_writer.hpp turns it into Chrome trace-event JSON): the
// coprocessor units' busy spans of each kernel core (kept in its
// CoreTimeline beside the per-input events loader --perf-check uses) and
// the streams' tile transfers (StreamEngine), both in the epoch's cycles.
//
// Recording is off unless ChipRunOptions::recordTrace: the hooks are one
// branch on a flag or a null pointer. Spans of one unit or stream that
// follow each other closely are merged into one span that counts its busy
// cycles and instructions (or tiles), so a trace grows with the phases of the
// work, not with every tile.
#pragma once
#include "device/soc_descriptor.hpp"

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace tessera::sim {

// Two instructions of one unit, or two transfers of one stream, closer than
// this many cycles go into one span (docs/loader.md, "Trace").
inline constexpr uint64_t kTraceMergeGap = 32;

// One unit (a thread's coprocessor instructions) busy from `start` to `end`,
// `busy` cycles of it spent in `instructions` instructions.
struct UnitSpan {
  uint64_t start = 0, end = 0;
  uint64_t busy = 0;
  uint32_t instructions = 0;
};

// Adds one instruction at [start, start + cycles) to a unit's `spans`, merged
// into the last span when it starts within kTraceMergeGap of its end.
void noteUnitBusy(std::vector<UnitSpan>& spans, uint64_t start, uint64_t cycles);

enum class TransferKind : uint8_t { Noc, DramRead, DramWrite, Eth };
const char* transferKindName(TransferKind kind);  // "noc", "dram-read", "dram-write", "eth"

// Tiles a stream moved from `start` (first departure) to `end` (last arrival).
struct TransferSpan {
  CoreCoord core;          // the stream's core
  uint32_t stream = 0;     // its stream id
  TransferKind kind = TransferKind::Noc;
  uint64_t start = 0, end = 0;
  uint64_t tiles = 0, bytes = 0;
};

// The stream engine's transfers of one epoch.
class TransferRecorder {
public:
  // One tile of `bytes` leaving at `start` and arriving at `end`.
  void note(CoreCoord core, uint32_t stream, TransferKind kind, uint64_t start, uint64_t end, uint64_t bytes);
  // The spans by start cycle, then core and stream (a stable order for the trace).
  std::vector<TransferSpan> take();

private:
  std::vector<TransferSpan> spans_;
  std::map<std::tuple<int, int, uint32_t, TransferKind>, size_t> last_;  // the stream's open span
};

}  // namespace tessera::sim
