#include "loader/host_io.hpp"

#include "formats/blocking.hpp"
#include "formats/formats.hpp"
#include "netlist/shape.hpp"

#include <algorithm>

namespace tessera::loader {

bool isHostSide(const netlist::Queue& q) { return q.isHostFed() || q.isExternal(); }

using formats::Tensor;

void GeneratedEntries::offer(const std::string& queue, int64_t index, const Tensor& entry) {
  if (!filling || bytes_ >= budget_) return;
  formats::PackedTensor packed = formats::PackedTensor::pack(entry);
  bytes_ += packed.bytes();
  entries_.insert_or_assign({queue, index}, std::move(packed));
}

std::optional<Tensor> GeneratedEntries::take(const std::string& queue, int64_t index) {
  auto it = entries_.find({queue, index});
  if (it == entries_.end()) return std::nullopt;
  Tensor t = it->second.unpack();
  bytes_ -= it->second.bytes();
  entries_.erase(it);
  return t;
}

HostIo::HostIo(const netlist::Netlist& nl, std::map<std::string, Tensor> inputs, uint64_t seed, bool recordPushes)
    : nl_(&nl), inputs_(std::move(inputs)), seed_(seed), recordPushes_(recordPushes) {
  std::set<std::string> read;
  for (const auto& g : nl.graphs)
    for (const auto& op : g.ops)
      for (const auto& in : op.inputs) read.insert(in.name);
  for (const auto& q : nl.queues)
    if (isHostSide(q)) hostQueues_[q.name] = &q;
  for (const auto& q : nl.queues)
    if (!isHostSide(q) && q.type.value == netlist::IoType::Queue && !read.count(q.name)) drained_.insert(q.name);
}

int64_t HostIo::pushed(const std::string& queue) const {
  auto it = pushed_.find(queue);
  return it == pushed_.end() ? 0 : it->second;
}

Tensor HostIo::nextEntry(const netlist::Queue& q) {
  int64_t index = pushed_[q.name];
  auto shape = netlist::queueShape(q);
  Tensor entry;
  if (auto in = inputs_.find(q.name); in != inputs_.end()) {
    const Tensor& all = in->second;
    entry = Tensor(1, all.z, all.r, all.c);
    size_t per = entry.size();
    std::copy(all.data.begin() + static_cast<std::ptrdiff_t>(index * per),
              all.data.begin() + static_cast<std::ptrdiff_t>((index + 1) * per), entry.data.begin());
    if (all.rawBits.size() == all.data.size()) // exact uint32 words (.npy of dtype uint32)
      entry.rawBits.assign(all.rawBits.begin() + static_cast<std::ptrdiff_t>(index * per),
                           all.rawBits.begin() + static_cast<std::ptrdiff_t>((index + 1) * per));
  } else if (std::optional<Tensor> kept = shared_ ? shared_->take(q.name, index) : std::nullopt) {
    // Generated, masked and quantized by an earlier run: the same bits.
    pushed_[q.name] = index + 1;
    ++reused_;
    if (recordPushes_) pushLog_[q.name].push_back(formats::PackedTensor::pack(*kept));
    return std::move(*kept);
  } else {
    auto s = stimuli_.find(q.name);
    if (s == stimuli_.end()) {
      const netlist::StimulusConfig* cfg =
          nl_->testConfig && nl_->testConfig->stimulus ? &*nl_->testConfig->stimulus : nullptr;
      host::Stimulus stimulus = host::stimulusFor(cfg, q.name);
      host::bindSparse(stimulus, *nl_, q.name);
      s = stimuli_.emplace(q.name, std::move(stimulus)).first;
    }
    entry = host::generateEntry(s->second, shape->t, shape->r * formats::kTileDim, shape->c * formats::kTileDim, seed_,
                                q.name, index);
    ++generated_;
  }
  // A queue of tiles smaller than 32x32 holds only each tile's corner.
  if (q.tileDim.present())
    formats::maskToTileShape(entry, {static_cast<uint32_t>(q.tileDim.value.r), static_cast<uint32_t>(q.tileDim.value.c)});
  formats::quantize(q.df.value, entry); // the host converts to the queue's format on push
  if (shared_ && !inputs_.count(q.name)) shared_->offer(q.name, index, entry);
  pushed_[q.name] = index + 1;
  if (recordPushes_) pushLog_[q.name].push_back(formats::PackedTensor::pack(entry));
  return entry;
}

void HostIo::feed(const netlist::Queue& q, runtime::QueueStore& store) {
  runtime::QueueState* state = store.find(q.name);
  if (!state || !state->allocated()) return;
  // Rams are written once, every slot, before first use; queues are filled
  // once, like BUDA's test harness does, and later pushed only when an epoch
  // waits on them (attach): programs that rewind a queue's read pointer then
  // find the entries they read before.
  auto& filled = state->isRam() ? ramsFilled_ : queuesFilled_;
  if (!filled.insert(q.name).second) return;
  for (int64_t i = 0; i < state->entries() && !state->full() && hasMore(q); ++i) store.push(q.name, nextEntry(q));
}

bool HostIo::hasMore(const netlist::Queue& q) const {
  auto in = inputs_.find(q.name);
  return in == inputs_.end() || pushed(q.name) < in->second.w;
}

void HostIo::attach(runtime::QueueStore& store) {
  store.onEmpty([this, &store](const std::string& name) {
    auto it = hostQueues_.find(name);
    if (it == hostQueues_.end() || !hasMore(*it->second)) return false;
    store.push(name, nextEntry(*it->second));
    return true;
  });
}

void HostIo::beforeExecute(const netlist::Graph& graph, runtime::QueueStore& store) {
  std::set<std::string> reads;
  for (const auto& op : graph.ops)
    for (const auto& in : op.inputs) reads.insert(in.name);
  for (const auto& q : nl_->queues)
    if (isHostSide(q) && reads.count(q.name)) feed(q, store);
}

void HostIo::afterExecute(const netlist::Graph& graph, runtime::QueueStore& store) {
  for (const auto& name : drained_) {
    runtime::QueueState* state = store.find(name);
    if (!state || !state->allocated()) continue;
    while (state->occupancy() > 0) store.pop(name);
  }
}

} // namespace tessera::loader
