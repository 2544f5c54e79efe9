// The loader's host: what a user's runtime does around each epoch. It pushes
// host-fed queues (from .npy files or the test-config stimulus) and drains
// output queues nobody on the device reads.
#pragma once
#include "formats/packed.hpp"
#include "host/stimulus.hpp"
#include "runtime/interpreter.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessera::loader {

// Queues the host feeds: HOST inputs and queues another netlist would feed
// (BUDA's net2net naming), which a single-netlist run has to stand in for.
bool isHostSide(const netlist::Queue& q);

// Stimulus entries one run generated, for the next run of the same netlist
// and seed to take instead of generating them again (`loader run` checks the
// chip against the reference model: both push the same entries, and a
// training netlist's Box-Muller normals were a few percent of the run's CPU).
// Kept packed (the same bits) up to a byte budget; a run takes an entry out.
class GeneratedEntries {
public:
  explicit GeneratedEntries(size_t budgetBytes) : budget_(budgetBytes) {}
  bool filling = true; // false: runs only take what is there
  // Keeps `entry` (already quantized) when filling and within the budget.
  void offer(const std::string& queue, int64_t index, const formats::Tensor& entry);
  std::optional<formats::Tensor> take(const std::string& queue, int64_t index);
  size_t bytes() const { return bytes_; }

private:
  size_t budget_;
  size_t bytes_ = 0;
  std::map<std::pair<std::string, int64_t>, formats::PackedTensor> entries_;
};

class HostIo : public runtime::HostHooks {
public:
  // `inputs`: entries per host-fed queue read from .npy ([w] = entry); queues
  // without one are generated from the stimulus config with `seed`.
  HostIo(const netlist::Netlist& nl, std::map<std::string, formats::Tensor> inputs, uint64_t seed, bool recordPushes);

  // Installs the on-demand push (QueueStore::onEmpty) on `store`.
  void attach(runtime::QueueStore& store);
  void beforeExecute(const netlist::Graph& graph, runtime::QueueStore& store) override;
  void afterExecute(const netlist::Graph& graph, runtime::QueueStore& store) override;
  // Writes host-fed ram `q` now, every slot, instead of at its first use: a
  // test driver's rams written before the run (docs/stimulus.md).
  void preload(const netlist::Queue& q, runtime::QueueStore& store) { feed(q, store); }

  int64_t pushed(const std::string& queue) const;
  // Every entry pushed into each host-fed queue, in push order (--outputs writes them too).
  // Packed: the same bits in fewer bytes.
  const std::map<std::string, std::vector<formats::PackedTensor>>& pushLog() const { return pushLog_; }
  // Generated entries are taken from / offered to `shared` (null: none).
  void share(GeneratedEntries* shared) { shared_ = shared; }
  // Stimulus entries this run generated, and those it took from `shared`.
  int64_t generated() const { return generated_; }
  int64_t reused() const { return reused_; }

private:
  void feed(const netlist::Queue& q, runtime::QueueStore& store);
  formats::Tensor nextEntry(const netlist::Queue& q);
  bool hasMore(const netlist::Queue& q) const;

  const netlist::Netlist* nl_;
  std::map<std::string, formats::Tensor> inputs_;
  uint64_t seed_;
  bool recordPushes_;
  std::map<std::string, int64_t> pushed_;         // entries pushed so far per queue
  std::set<std::string> ramsFilled_;
  std::set<std::string> queuesFilled_; // filled once at first use; then pushed on demand
  std::map<std::string, const netlist::Queue*> hostQueues_;
  std::set<std::string> drained_;                 // op-fed queues no op reads: the host pops them
  std::map<std::string, host::Stimulus> stimuli_; // resolved lazily per queue
  std::map<std::string, std::vector<formats::PackedTensor>> pushLog_;
  GeneratedEntries* shared_ = nullptr;
  int64_t generated_ = 0, reused_ = 0;
};

} // namespace tessera::loader
