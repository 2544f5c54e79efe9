// The send-order check (docs/pipegen.md "Send order"): whether the packers'
// send orders and the readers' receive orders can all run to the end.
//
// A packer stream sends its readers' chunks in one order (its lane's
// emission order), and a reader takes its chunks in its pipe's order, each
// phase naming its one sender. When a reader gathers from several packers
// and the packers serve several readers, the two orders can wait on each
// other whatever the buffer sizes: packer P sends reader B a chunk B takes
// only after packer Q's, while Q sends reader A a chunk A takes only after
// P's. The check plays one round of every reader and lane with no limit on
// buffers; a lane some reader is still waiting on at the end is planned
// again by the readers' clock (planPackerEmissions), under which no such
// cycle exists.

#include "pipegen/stream_builder.hpp"

#include <deque>

namespace tessera::pipegen::detail {

std::vector<size_t> StreamBuilder::orderDeadlockLanes() const {
  constexpr size_t kFree = SIZE_MAX;
  struct Step {
    size_t lane = kFree;  // kFree: not from a packer lane (DRAM, relay, constant, a relay chain)
    size_t reader = 0;    // the plan's index among the lane's readers
    size_t index = 0;     // which of this plan's chunks of that buffer
  };
  std::vector<std::vector<Step>> seq(plans_.size());
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    const Plan& plan = plans_[pi];
    std::map<uint32_t, size_t> count;
    for (uint64_t r = 0; r < plan.passesPerRound; ++r)
      for (const Chunk& c : plan.chunks) {
        Step st;
        auto it = laneOf_.find({c.buf, pi});
        if (it != laneOf_.end() && c.path == 0) {
          st.lane = it->second;
          const auto& readers = laneReaders_[st.lane];
          st.reader = static_cast<size_t>(std::find(readers.begin(), readers.end(), pi) - readers.begin());
          st.index = count[c.buf]++;
        }
        seq[pi].push_back(st);
      }
  }
  std::vector<size_t> head(plans_.size(), 0), laneHead(laneBuf_.size(), 0);
  std::deque<size_t> work;
  std::vector<bool> queued(plans_.size(), true);
  for (size_t pi = 0; pi < plans_.size(); ++pi) work.push_back(pi);
  auto wake = [&](size_t lane) {
    for (size_t r : laneReaders_[lane])
      if (!queued[r]) queued[r] = true, work.push_back(r);
  };
  while (!work.empty()) {
    const size_t pi = work.front();
    work.pop_front();
    queued[pi] = false;
    while (head[pi] < seq[pi].size()) {
      const Step& st = seq[pi][head[pi]];
      if (st.lane == kFree) {
        ++head[pi];
        continue;
      }
      const auto& order = packerOrder_[st.lane];
      if (laneHead[st.lane] >= order.size()) break;
      const auto [reader, index] = order[laneHead[st.lane]];
      if (packerMerged_[st.lane]) {
        // One transfer to every reader of the lane: all must be there.
        bool ready = index == st.index;
        for (size_t r : laneReaders_[st.lane]) {
          if (!ready) break;
          ready = head[r] < seq[r].size() && seq[r][head[r]].lane == st.lane && seq[r][head[r]].index == index;
        }
        if (!ready) break;
        for (size_t r : laneReaders_[st.lane]) ++head[r];
      } else {
        if (reader != st.reader || index != st.index) break;
        ++head[pi];
      }
      ++laneHead[st.lane];
      wake(st.lane);
    }
  }
  std::set<size_t> stuck;
  for (size_t pi = 0; pi < plans_.size(); ++pi)
    if (head[pi] < seq[pi].size()) stuck.insert(seq[pi][head[pi]].lane);
  return {stuck.begin(), stuck.end()};
}

}  // namespace tessera::pipegen::detail
