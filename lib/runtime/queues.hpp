// Queue state shared by every target: entries, the header pointers BUDA keeps
// in DRAM (rd/wr pointers wrapping in [0, 2*entries) so full and empty differ),
// ram vs queue semantics, allocation. Values are host tensors; a device target
// moves them to and from its DRAM model around each epoch.
#pragma once
#include "formats/packed.hpp"
#include "formats/tensor.hpp"
#include "netlist/model.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::runtime {

using formats::Tensor;

// A run-time failure caused by the netlist or its inputs (empty queue, full
// queue, undefined variable...). `rule` is a short id like the validator's,
// `loc` points at the instruction or queue involved (may be invalid).
struct RuntimeError : std::runtime_error {
  RuntimeError(std::string rule_, SourceLoc loc_, const std::string& msg)
      : std::runtime_error(msg), rule(std::move(rule_)), loc(loc_) {}
  std::string rule;
  SourceLoc loc;
};

// queue_settings of one queue in one execute, variables resolved.
struct QueueSettingsValues {
  bool prologue = false, epilogue = false, zero = false, readOnly = false;
  std::optional<int64_t> rdPtrLocal, rdPtrGlobal, wrPtrGlobal;
  std::optional<int64_t> globalRdptrAutoinc, rdPtrAutoinc, globalWrptrAutoinc;
};

class QueueState {
public:
  QueueState(const netlist::Queue& q, bool allocated);

  const netlist::Queue& queue() const { return *queue_; }
  const std::string& name() const { return queue_->name; }
  bool isRam() const { return queue_->type.value == netlist::IoType::Ram; }
  int64_t entries() const { return entries_; }
  bool allocated() const { return allocated_; }

  // Header pointers, each in [0, 2*entries).
  int64_t rdGlobal() const { return rdGlobal_; }
  int64_t wrGlobal() const { return wrGlobal_; }
  int64_t rdLocal() const { return rdLocal_; }
  int64_t occupancy() const; // entries written and not popped (queue type)
  bool full() const { return occupancy() == entries_; }

  // The shape of one entry: [1][t][rows*32][cols*32].
  Tensor zeroEntry() const;
  bool fitsEntry(const Tensor& t) const; // has the shape of zeroEntry()
  // Slots are stored only once written: a slot never written (or zeroed)
  // reads as a zero entry, so a netlist's thousands of MB of DRAM queues cost
  // nothing until used. The non-const form materialises the slot.
  const Tensor& slot(int64_t ptr) const;
  Tensor& slot(int64_t ptr);
  void zeroAll(); // every slot back to zeros

  int64_t wrap(int64_t ptr) const; // into [0, 2*entries)

private:
  friend class QueueStore;
  friend class EpochIo;
  size_t index(int64_t ptr) const { return static_cast<size_t>(wrap(ptr) % entries_); }
  void store(int64_t ptr, Tensor t) { slots_[index(ptr)] = std::move(t); } // no zero fill first
  const netlist::Queue* queue_;
  int64_t entries_ = 1;
  bool allocated_ = true;
  int64_t rdGlobal_ = 0, wrGlobal_ = 0, rdLocal_ = 0;
  // Last values the program wrote into the header: a pointer is reprogrammed
  // only when the program's value changes (a change is a pop/push).
  std::optional<int64_t> progRdGlobal_, progWrGlobal_, progRdLocal_;
  // Set when a pointer write left more entries between rd and wr than the
  // queue has slots; the next use of the queue reports it (docs/runtime.md).
  std::string headerError_;
  SourceLoc headerErrorLoc_;
  std::vector<Tensor> slots_;  // empty tensor = never written since the last zeroing
  mutable Tensor zero_;         // built on first use
};

// Every queue of a netlist by name.
class QueueStore {
public:
  explicit QueueStore(const netlist::Netlist& nl);

  QueueState* find(const std::string& name);
  const QueueState* find(const std::string& name) const;
  QueueState& get(const std::string& name); // throws RuntimeError when unknown
  std::vector<std::string> names() const;   // sorted

  // Host side. push: queue type appends at wr ptr (error when full); ram
  // writes the slot at wr ptr and advances it (the host fills rams in order).
  // pop: queue type returns the entry at rd ptr and advances it (error when
  // empty). Both need the queue allocated.
  void push(const std::string& name, Tensor entry);
  Tensor pop(const std::string& name);

  void allocate(const std::string& name, SourceLoc loc);   // resets pointers and contents
  void deallocate(const std::string& name, SourceLoc loc);

  // Writes the pointer fields of `settings` into the queue's header as an
  // execute does (docs/runtime.md): for a `queue` only values that differ
  // from the last one the program wrote (moving rd forward pops, back
  // rewinds), for a `ram` every given value. Errors carry `loc`. Called by
  // EpochIo::begin and by the interpreter when a varinst changes a variable
  // bound to a pointer.
  void programPointers(const std::string& name, const QueueSettingsValues& settings, SourceLoc loc);

  // Every entry an op wrote into a queue, in write order (loader --outputs),
  // kept only while recording is on (default): large runs turn it off.
  // Entries are packed (formats::PackedTensor: the same bits in fewer bytes).
  const std::map<std::string, std::vector<formats::PackedTensor>>& writeLog() const { return writeLog_; }
  void recordWrites(bool on) { recordWrites_ = on; }
  // Moves the log out (the store can then go, with the queues it holds).
  std::map<std::string, std::vector<formats::PackedTensor>> releaseWriteLog() { return std::move(writeLog_); }
  // Called when an epoch reads past the entries a queue holds: the host may
  // push (returns true when it pushed one entry) before it counts as empty.
  void onEmpty(std::function<bool(const std::string& queue)> fn) { onEmpty_ = std::move(fn); }
  // Entries ops wrote per queue, counted whether or not they are recorded.
  int64_t writeCount(const std::string& name) const {
    auto it = writeCount_.find(name);
    return it == writeCount_.end() ? 0 : it->second;
  }

private:
  friend class EpochIo;
  // Dual-view rams (`alias: base`): the view's entry p is the base's entries
  // p*k .. p*k+k-1 stacked along t, k = base entries / view entries. The base
  // holds the data; a view's slots are refreshed from it before every read
  // and written back after every write.
  struct Alias {
    std::string base;
    int64_t k = 1;
  };
  void loadFromBase(QueueState& view, int64_t ptr);
  void storeToBase(QueueState& view, int64_t ptr);
  void zeroView(QueueState& q); // zero: a view zeroes the memory it shares
  std::map<std::string, QueueState> queues_;
  std::map<std::string, Alias> aliases_; // view -> base
  std::map<std::string, std::vector<formats::PackedTensor>> writeLog_;
  std::map<std::string, int64_t> writeCount_;
  bool recordWrites_ = true;
  std::function<bool(const std::string&)> onEmpty_;
};

// One execute's view of the queues, handed to the target. Reads and writes are
// checked as they happen, in the order the target performs them, so a queue
// written and read in the same epoch (a relay queue) works.
class EpochIo {
public:
  EpochIo(QueueStore& store, const netlist::Graph& graph, int64_t inputCount,
          std::map<std::string, QueueSettingsValues> settings, SourceLoc executeLoc);

  const netlist::Graph& graph() const { return *graph_; }
  int64_t inputCount() const { return inputCount_; }
  SourceLoc loc() const { return loc_; } // the execute instruction
  const QueueSettingsValues& settings(const std::string& queue) const; // defaults when absent

  // Applies pointer programming and `zero` (called by the interpreter).
  void begin();
  // The i-th entry (0 <= i < inputCount) ops of this epoch read from `queue`:
  // i * rd_ptr_autoinc (default 1) past the local read pointer of a queue,
  // i * global_rdptr_autoinc (default 0) past rd_ptr_global of a ram;
  // prologue queues give the same entry for every i. Error when the queue
  // does not hold it (reading an empty queue would hang the device).
  const Tensor& read(const std::string& queue, int64_t i);
  // Writes the next entry produced into `queue`: a queue appends (error when
  // full), a ram writes at its write pointer and moves it by
  // global_wrptr_autoinc (default 0).
  void write(const std::string& queue, Tensor entry);
  // The slot the next write into `queue` would overwrite (gradient ops
  // accumulate into it).
  const Tensor& current(const std::string& queue) const;
  // A queue's global read and write pointers as they stand (after begin(),
  // before the target writes: where this execute starts).
  int64_t rdPtrGlobal(const std::string& queue) { return state(queue).rdGlobal(); }
  int64_t wrPtrGlobal(const std::string& queue) { return state(queue).wrGlobal(); }
  // Applies the autoinc fields (called by the interpreter after the target ran).
  void end();

private:
  QueueState& state(const std::string& queue);
  std::string where() const; // "graph 'g'" for messages
  // Two views of one ram buffer (alias), one read and another written by
  // this graph: input i's read sees the writes of inputs before i only, as
  // BUDA's golden model runs a graph once per input, reading its input
  // queues before its ops (docs/runtime.md "Dual views in one epoch").
  struct BaseSlots {
    std::string base;
    int64_t first = 0, k = 1; // base slots first .. first+k-1
  };
  BaseSlots baseSlots(const QueueState& q, int64_t ptr) const;
  struct SlotWrite {
    int64_t input = 0;
    Tensor value; // the base slot after the write
  };
  struct SlotHistory {
    Tensor before; // the base slot before this epoch's first write
    std::vector<SlotWrite> writes;
  };
  std::set<std::string> sharedBases_; // bases with a view read and another written here
  std::map<std::pair<std::string, int64_t>, SlotHistory> history_; // (base, slot)
  std::map<std::pair<std::string, int64_t>, Tensor> asOfInput_;    // (queue, input) -> what that input read
  QueueStore* store_;
  const netlist::Graph* graph_;
  int64_t inputCount_;
  std::map<std::string, QueueSettingsValues> settings_;
  std::map<std::string, int64_t> reads_;  // highest entry index read + 1, per queue
  std::map<std::string, int64_t> writes_; // entries written, per queue
  std::set<std::string> readable_; // queues ops of the graph read
  std::set<std::string> writable_; // queues fed by ops of the graph
  SourceLoc loc_;
};

// The queues ops of `graph` read (names among their inputs) and the queues
// fed by ops of `graph`, sorted.
std::vector<std::string> queuesReadBy(const QueueStore& store, const netlist::Graph& graph);
std::vector<std::string> queuesWrittenBy(const QueueStore& store, const netlist::Graph& graph);

} // namespace tessera::runtime
