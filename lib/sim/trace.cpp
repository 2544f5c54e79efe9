#include "sim/trace.hpp"

#include <algorithm>

namespace tessera::sim {

void noteUnitBusy(std::vector<UnitSpan>& spans, uint64_t start, uint64_t cycles) {
  if (!spans.empty() && start <= spans.back().end + kTraceMergeGap && start >= spans.back().start) {
    UnitSpan& s = spans.back();
    s.end = std::max(s.end, start + cycles);
    s.busy += cycles;
    ++s.instructions;
    return;
  }
  spans.push_back({start, start + cycles, cycles, 1});
}

const char* transferKindName(TransferKind kind) {
  switch (kind) {
  case TransferKind::Noc: return "noc";
  case TransferKind::DramRead: return "dram-read";
  case TransferKind::DramWrite: return "dram-write";
  case TransferKind::Eth: return "eth";
  }
  return "noc";
}

void TransferRecorder::note(CoreCoord core, uint32_t stream, TransferKind kind, uint64_t start, uint64_t end,
                            uint64_t bytes) {
  const auto key = std::make_tuple(core.x, core.y, stream, kind);
  auto it = last_.find(key);
  if (it != last_.end()) {
    TransferSpan& s = spans_[it->second];
    if (start >= s.start && start <= s.end + kTraceMergeGap) {
      s.end = std::max(s.end, end);
      ++s.tiles;
      s.bytes += bytes;
      return;
    }
  }
  last_[key] = spans_.size();
  spans_.push_back({core, stream, kind, start, end, 1, bytes});
}

std::vector<TransferSpan> TransferRecorder::take() {
  std::vector<TransferSpan> out = std::move(spans_);
  spans_.clear();
  last_.clear();
  std::stable_sort(out.begin(), out.end(), [](const TransferSpan& a, const TransferSpan& b) {
    return std::tie(a.start, a.core.y, a.core.x, a.stream, a.kind) <
           std::tie(b.start, b.core.y, b.core.x, b.stream, b.kind);
  });
  return out;
}

}  // namespace tessera::sim
