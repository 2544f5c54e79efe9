// Queue state and one epoch's reads and writes. The pointer model is the one
// BUDA keeps in each queue's DRAM header; docs/runtime.md states it precisely
// and says where it follows the BUDA golden model rather than the spec text.
#include "runtime/queues.hpp"

#include "netlist/shape.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

namespace tessera::runtime {

namespace {

std::string quote(const std::string& s) { return "'" + s + "'"; }

// Non-negative remainder: pointer arithmetic wraps in both directions.
int64_t floorMod(int64_t a, int64_t m) { return ((a % m) + m) % m; }

// Saturating product: strides and counts come from the netlist, and a huge
// one must fail the emptiness checks rather than overflow.
int64_t product(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? INT64_MAX : out;
}

std::string entriesText(int64_t n) { return std::to_string(n) + (n == 1 ? " entry" : " entries"); }

void requireAllocated(const QueueState& q, SourceLoc loc, const std::string& what) {
  if (!q.allocated())
    throw RuntimeError("queue-not-allocated", loc,
                       what + " queue " + quote(q.name()) + ", which is not allocated (allocate_queue it first)");
}

// A header a pointer write left inconsistent cannot be read, written,
// pushed or popped: say where it was written.
void requireConsistent(const QueueState& q, const std::string& error, SourceLoc loc) {
  if (q.occupancy() > q.entries()) throw RuntimeError("queue-pointer", loc, error);
}

} // namespace

// ====================================================================== QueueState
QueueState::QueueState(const netlist::Queue& q, bool allocated)
    : queue_(&q), entries_(std::max<int64_t>(1, q.entries.value)), allocated_(allocated),
      slots_(static_cast<size_t>(entries_)) {}

int64_t QueueState::occupancy() const { return floorMod(wrGlobal_ - rdGlobal_, 2 * entries_); }

int64_t QueueState::wrap(int64_t ptr) const { return floorMod(ptr, 2 * entries_); }

Tensor QueueState::zeroEntry() const {
  // A queue the validator would reject (missing fields) still gets a shape,
  // so the runtime never divides by zero on bad input.
  netlist::TensorShape shape = netlist::queueShape(*queue_).value_or(netlist::TensorShape{});
  return Tensor(1, std::max<int64_t>(1, shape.t), std::max<int64_t>(1, shape.r) * formats::kTileDim,
                std::max<int64_t>(1, shape.c) * formats::kTileDim);
}

bool QueueState::fitsEntry(const Tensor& t) const {
  if (zero_.data.empty()) zero_ = zeroEntry();
  return t.sameShape(zero_);
}

const Tensor& QueueState::slot(int64_t ptr) const {
  const Tensor& s = slots_[index(ptr)];
  if (!s.data.empty()) return s;
  if (zero_.data.empty()) zero_ = zeroEntry();
  return zero_;
}

Tensor& QueueState::slot(int64_t ptr) {
  Tensor& s = slots_[index(ptr)];
  if (s.data.empty()) s = zeroEntry();
  return s;
}

void QueueState::zeroAll() {
  for (Tensor& s : slots_) s = Tensor();
}

// ====================================================================== QueueStore
QueueStore::QueueStore(const netlist::Netlist& nl) {
  // Queues a program allocates or deallocates have a lifetime: they start
  // unallocated. Every other queue exists for the whole run.
  std::set<std::string> dynamic;
  for (const auto& p : nl.programs)
    for (const auto& ins : p.instructions)
      if (ins.kind == netlist::InstrKind::AllocateQueue || ins.kind == netlist::InstrKind::DeallocateQueue)
        for (const auto& q : ins.queues) dynamic.insert(q.value);
  for (const auto& q : nl.queues) queues_.emplace(q.name, QueueState(q, !dynamic.count(q.name)));

  // Dual views: only rams whose entries split evenly into the base's (the
  // BUDA golden model's rule); anything else stays two separate rams.
  for (const auto& q : nl.queues) {
    if (!q.alias.present()) continue;
    const QueueState* base = find(q.alias.value);
    const QueueState& view = queues_.at(q.name);
    if (!base || base->queue().alias.present() || !base->isRam() || !view.isRam()) continue;
    if (base->entries() % view.entries() != 0) continue;
    const int64_t k = base->entries() / view.entries();
    Tensor b = base->zeroEntry(), v = view.zeroEntry();
    if (v.z != k * b.z || v.r != b.r || v.c != b.c) continue;
    aliases_[q.name] = {q.alias.value, k};
  }
}

void QueueStore::loadFromBase(QueueState& view, int64_t ptr) {
  auto a = aliases_.find(view.name());
  if (a == aliases_.end()) return;
  const QueueState& base = queues_.at(a->second.base);
  Tensor& dst = view.slot(ptr);
  const int64_t slot = static_cast<int64_t>(view.index(ptr));
  for (int64_t j = 0; j < a->second.k; ++j) {
    const Tensor& src = base.slot(slot * a->second.k + j);
    std::copy(src.data.begin(), src.data.end(), dst.data.begin() + static_cast<std::ptrdiff_t>(j * src.size()));
  }
}

void QueueStore::storeToBase(QueueState& view, int64_t ptr) {
  auto a = aliases_.find(view.name());
  if (a == aliases_.end()) return;
  QueueState& base = queues_.at(a->second.base);
  const Tensor& src = view.slot(ptr);
  const int64_t slot = static_cast<int64_t>(view.index(ptr));
  for (int64_t j = 0; j < a->second.k; ++j) {
    Tensor& dst = base.slot(slot * a->second.k + j);
    auto from = src.data.begin() + static_cast<std::ptrdiff_t>(j * dst.size());
    std::copy(from, from + static_cast<std::ptrdiff_t>(dst.size()), dst.data.begin());
  }
}

void QueueStore::zeroView(QueueState& q) {
  q.zeroAll();
  // Every base slot belongs to exactly one view slot: zeroing all of a view
  // zeroes all of the base.
  if (auto a = aliases_.find(q.name()); a != aliases_.end()) queues_.at(a->second.base).zeroAll();
}

QueueState* QueueStore::find(const std::string& name) {
  auto it = queues_.find(name);
  return it == queues_.end() ? nullptr : &it->second;
}

const QueueState* QueueStore::find(const std::string& name) const {
  auto it = queues_.find(name);
  return it == queues_.end() ? nullptr : &it->second;
}

QueueState& QueueStore::get(const std::string& name) {
  if (QueueState* q = find(name)) return *q;
  throw RuntimeError("unknown-queue", SourceLoc{}, "no queue named " + quote(name));
}

std::vector<std::string> QueueStore::names() const {
  std::vector<std::string> out;
  out.reserve(queues_.size());
  for (const auto& [name, q] : queues_) out.push_back(name);
  return out;
}

void QueueStore::push(const std::string& name, Tensor entry) {
  QueueState& q = get(name);
  requireAllocated(q, q.queue().loc, "host push into");
  if (!q.fitsEntry(entry))
    throw RuntimeError("entry-shape", q.queue().loc, "host push into queue " + quote(name) + ": entry has the wrong shape");
  if (!q.isRam()) requireConsistent(q, q.headerError_, q.headerErrorLoc_);
  if (!q.isRam() && q.full())
    throw RuntimeError("queue-full", q.queue().loc,
                       "host push into queue " + quote(name) + ", which is full (" + entriesText(q.entries()) + ")");
  // A ram has no flow control: the host writes the slot at the write pointer
  // and moves on, so pushing every slot in order fills it.
  q.store(q.wrGlobal_, std::move(entry));
  storeToBase(q, q.wrGlobal_);
  q.wrGlobal_ = q.wrap(q.wrGlobal_ + 1);
}

Tensor QueueStore::pop(const std::string& name) {
  QueueState& q = get(name);
  requireAllocated(q, q.queue().loc, "host pop from");
  if (q.isRam())
    throw RuntimeError("pop-ram", q.queue().loc, "host pop from " + quote(name) + ", which is a ram (only queues pop)");
  requireConsistent(q, q.headerError_, q.headerErrorLoc_);
  if (q.occupancy() == 0)
    throw RuntimeError("queue-empty", q.queue().loc, "host pop from queue " + quote(name) + ", which is empty");
  Tensor out = std::as_const(q).slot(q.rdGlobal_);
  // A local read pointer sitting on the popped entry moves along with it;
  // one peeking further ahead keeps its place.
  if (q.rdLocal_ == q.rdGlobal_) q.rdLocal_ = q.wrap(q.rdLocal_ + 1);
  q.rdGlobal_ = q.wrap(q.rdGlobal_ + 1);
  return out;
}

void QueueStore::allocate(const std::string& name, SourceLoc loc) {
  QueueState& q = get(name);
  if (q.allocated_)
    throw RuntimeError("queue-already-allocated", loc,
                       "allocate_queue: queue " + quote(name) + " is already allocated (deallocate_queue it first)");
  q.allocated_ = true;
  q.rdGlobal_ = q.wrGlobal_ = q.rdLocal_ = 0;
  q.progRdGlobal_.reset();
  q.progWrGlobal_.reset();
  q.progRdLocal_.reset();
  q.headerError_.clear();
  q.zeroAll();
}

void QueueStore::deallocate(const std::string& name, SourceLoc loc) {
  QueueState& q = get(name);
  if (!q.allocated_)
    throw RuntimeError("queue-not-allocated", loc, "deallocate_queue: queue " + quote(name) + " is not allocated");
  q.allocated_ = false;
}

void QueueStore::programPointers(const std::string& name, const QueueSettingsValues& s, SourceLoc loc) {
  QueueState& q = get(name);
  requireAllocated(q, loc, "queue_settings of");
  const int64_t span = 2 * q.entries();

  if (q.isRam()) {
    // Ram pointers are addresses, not flow control: BUDA writes them at every
    // execute, so a pointer its autoinc moved is put back where the program says.
    if (s.rdPtrGlobal) {
      q.rdGlobal_ = q.rdLocal_ = q.wrap(*s.rdPtrGlobal);
      q.progRdGlobal_ = q.rdGlobal_;
    }
    if (s.wrPtrGlobal && !s.readOnly) { // a read-only view never moves the writer's pointer
      q.wrGlobal_ = q.wrap(*s.wrPtrGlobal);
      q.progWrGlobal_ = q.wrGlobal_;
    }
    return;
  }

  // A queue pointer is written as given. Moving rd forward pops, moving it
  // back re-exposes entries still in their slots (a backward pass re-reading
  // the activations its forward pass popped). Only a header claiming more
  // entries than slots is wrong; it is reported where the queue is next used,
  // so a program may leave a pointer it never uses again out of range.
  bool changed = false;
  auto write = [&](const std::optional<int64_t>& value, std::optional<int64_t>& last, int64_t& ptr) {
    if (!value) return false;
    int64_t v = q.wrap(*value);
    if (last == v) return false;
    last = v;
    ptr = v;
    changed = true;
    return true;
  };
  const bool globalMoved = write(s.rdPtrGlobal, q.progRdGlobal_, q.rdGlobal_);
  write(s.wrPtrGlobal, q.progWrGlobal_, q.wrGlobal_);
  if (!write(s.rdPtrLocal, q.progRdLocal_, q.rdLocal_) && !s.rdPtrLocal && globalMoved)
    q.rdLocal_ = q.rdGlobal_; // no local pointer of its own: it reads from the head
  if (!changed) return;
  if (q.occupancy() > q.entries()) {
    q.headerError_ = "queue_settings put the pointers of queue " + quote(name) + " at rd " + std::to_string(q.rdGlobal_) +
                     ", wr " + std::to_string(q.wrGlobal_) + ": that is " + std::to_string(q.occupancy()) +
                     " entries in a queue of " + std::to_string(q.entries()) + " (pointers wrap at 2*entries = " +
                     std::to_string(span) + ")";
    q.headerErrorLoc_ = loc;
  } else {
    q.headerError_.clear();
  }
}

// ====================================================================== EpochIo
std::vector<std::string> queuesReadBy(const QueueStore& store, const netlist::Graph& graph) {
  std::set<std::string> out;
  for (const auto& op : graph.ops)
    for (const auto& in : op.inputs)
      if (store.find(in.name)) out.insert(in.name);
  return {out.begin(), out.end()};
}

std::vector<std::string> queuesWrittenBy(const QueueStore& store, const netlist::Graph& graph) {
  std::set<std::string> ops;
  for (const auto& op : graph.ops) ops.insert(op.name);
  std::vector<std::string> out;
  for (const auto& name : store.names())
    if (ops.count(store.find(name)->queue().input.value)) out.push_back(name);
  return out;
}

EpochIo::EpochIo(QueueStore& store, const netlist::Graph& graph, int64_t inputCount,
                 std::map<std::string, QueueSettingsValues> settings, SourceLoc executeLoc)
    : store_(&store), graph_(&graph), inputCount_(inputCount), settings_(std::move(settings)), loc_(executeLoc) {
  for (auto& name : queuesReadBy(store, graph)) readable_.insert(std::move(name));
  for (auto& name : queuesWrittenBy(store, graph)) writable_.insert(std::move(name));
  auto baseOf = [&](const std::string& name) -> std::optional<std::string> {
    const QueueState* q = store.find(name);
    if (!q || !q->isRam()) return std::nullopt;
    auto a = store.aliases_.find(name);
    return a == store.aliases_.end() ? name : a->second.base;
  };
  for (const auto& r : readable_)
    for (const auto& w : writable_)
      if (r != w)
        if (auto br = baseOf(r), bw = baseOf(w); br && bw && *br == *bw) sharedBases_.insert(*br);
}

EpochIo::BaseSlots EpochIo::baseSlots(const QueueState& q, int64_t ptr) const {
  auto a = store_->aliases_.find(q.name());
  const int64_t slot = static_cast<int64_t>(q.index(ptr));
  if (a == store_->aliases_.end()) return {q.name(), slot, 1};
  return {a->second.base, slot * a->second.k, a->second.k};
}

const QueueSettingsValues& EpochIo::settings(const std::string& queue) const {
  static const QueueSettingsValues kDefaults;
  auto it = settings_.find(queue);
  return it == settings_.end() ? kDefaults : it->second;
}

std::string EpochIo::where() const { return "graph " + quote(graph_->name); }

QueueState& EpochIo::state(const std::string& queue) {
  QueueState* q = store_->find(queue);
  if (!q) throw RuntimeError("unknown-queue", loc_, where() + " uses " + quote(queue) + ", which is not a queue");
  requireAllocated(*q, loc_, where() + " uses");
  return *q;
}

void EpochIo::begin() {
  // Checked up front so the error names the execute, not whichever op the
  // target happens to run first.
  for (const auto& name : readable_) state(name);
  for (const auto& name : writable_) state(name);
  for (const auto& [name, s] : settings_) {
    QueueState& q = state(name);
    if (s.zero) store_->zeroView(q);
    store_->programPointers(name, s, loc_);
  }
}

const Tensor& EpochIo::read(const std::string& queue, int64_t i) {
  if (!readable_.count(queue))
    throw RuntimeError("internal", loc_, "target reads " + quote(queue) + ", which no op of " + where() + " reads");
  if (i < 0 || i >= inputCount_)
    throw RuntimeError("internal", loc_, "target reads entry " + std::to_string(i) + " of " + quote(queue) + " but " +
                                             where() + " has input_count " + std::to_string(inputCount_));
  QueueState& q = state(queue);
  const QueueSettingsValues& s = settings(queue);
  const bool preloaded = s.prologue || s.epilogue; // read once into L1, not streamed
  int64_t& seen = reads_[queue];
  seen = std::max(seen, i + 1);

  if (q.isRam()) {
    // Rams are addressed by rd_ptr_global; its autoinc (default 0) is the
    // stride between the entries of one epoch.
    int64_t stride = preloaded ? 0 : floorMod(s.globalRdptrAutoinc.value_or(0), 2 * q.entries());
    const int64_t ptr = q.rdGlobal_ + i * stride;
    store_->loadFromBase(q, ptr);
    const BaseSlots bs = baseSlots(q, ptr);
    if (!sharedBases_.count(bs.base)) return std::as_const(q).slot(ptr);
    // Base slots this epoch wrote: as they stood before input i's writes.
    Tensor value = std::as_const(q).slot(ptr);
    for (int64_t j = 0; j < bs.k; ++j) {
      auto h = history_.find({bs.base, bs.first + j});
      if (h == history_.end()) continue;
      const Tensor* seen = &h->second.before;
      for (const SlotWrite& w : h->second.writes)
        if (w.input < i) seen = &w.value;
      std::copy(seen->data.begin(), seen->data.end(),
                value.data.begin() + static_cast<std::ptrdiff_t>(j * static_cast<int64_t>(seen->size())));
    }
    return asOfInput_[{queue, i}] = std::move(value);
  }

  requireConsistent(q, q.headerError_, q.headerErrorLoc_);
  // rd_ptr_autoinc (default 1) is the stride between the entries the inputs
  // of one epoch read; 0 reads one entry for every input.
  int64_t stride = preloaded ? 0 : s.rdPtrAutoinc.value_or(1);
  if (stride < 0)
    throw RuntimeError("queue-setting", loc_, "rd_ptr_autoinc of queue " + quote(queue) + " is negative (" +
                                                  std::to_string(stride) + ")");
  const int64_t ahead = floorMod(q.rdLocal_ - q.rdGlobal_, 2 * q.entries()); // local pointer past the head
  const int64_t step = product(i, stride);
  int64_t available = std::max<int64_t>(0, q.occupancy() - ahead);
  // A device waiting on an empty queue lets a streaming host push more.
  while (step >= available && store_->onEmpty_ && !q.full() && store_->onEmpty_(queue))
    available = std::max<int64_t>(0, q.occupancy() - ahead);
  if (step >= available) {
    throw RuntimeError("queue-empty", loc_,
                       where() + " reads entry " + std::to_string(step) + " (input " + std::to_string(i) + " of " +
                           std::to_string(inputCount_) + ") of queue " + quote(queue) + " but only " +
                           entriesText(available) + (available == 1 ? " is" : " are") +
                           " available: reading an empty queue would hang the device");
  }
  return std::as_const(q).slot(q.rdLocal_ + step);
}

void EpochIo::write(const std::string& queue, Tensor entry) {
  if (!writable_.count(queue))
    throw RuntimeError("internal", loc_, "target writes " + quote(queue) + ", which no op of " + where() + " feeds");
  QueueState& q = state(queue);
  int64_t& written = writes_[queue];
  if (!q.fitsEntry(entry)) {
    Tensor want = q.zeroEntry();
    throw RuntimeError("entry-shape", loc_,
                       where() + " writes an entry of shape [" + std::to_string(entry.w) + ", " + std::to_string(entry.z) +
                           ", " + std::to_string(entry.r) + ", " + std::to_string(entry.c) + "] into queue " + quote(queue) +
                           ", whose entries are [1, " + std::to_string(want.z) + ", " + std::to_string(want.r) + ", " +
                           std::to_string(want.c) + "]");
  }
  if (!q.isRam()) {
    requireConsistent(q, q.headerError_, q.headerErrorLoc_);
    if (q.full())
      throw RuntimeError("queue-full", loc_,
                         where() + " writes entry " + std::to_string(written) + " into queue " + quote(queue) +
                             ", which is full (" + entriesText(q.entries()) +
                             " written and not popped): writing a full queue would hang the device");
  }
  store_->writeCount_[queue] += 1;
  if (store_->recordWrites_) store_->writeLog_[queue].push_back(formats::PackedTensor::pack(entry));
  if (q.isRam()) {
    // A ram's write pointer only moves by global_wrptr_autoinc (default 0):
    // without it every entry of the epoch lands in the same slot.
    const BaseSlots bs = baseSlots(q, q.wrGlobal_);
    const bool shared = sharedBases_.count(bs.base) > 0;
    if (shared) {
      const QueueState& base = *store_->find(bs.base);
      for (int64_t j = 0; j < bs.k; ++j)
        if (auto [h, added] = history_.try_emplace({bs.base, bs.first + j}); added) h->second.before = base.slot(bs.first + j);
    }
    q.store(q.wrGlobal_, std::move(entry));
    store_->storeToBase(q, q.wrGlobal_);
    if (shared) {
      const QueueState& base = *store_->find(bs.base);
      for (int64_t j = 0; j < bs.k; ++j)
        history_.at({bs.base, bs.first + j}).writes.push_back({written, base.slot(bs.first + j)});
    }
    q.wrGlobal_ = q.wrap(q.wrGlobal_ + floorMod(settings(queue).globalWrptrAutoinc.value_or(0), 2 * q.entries()));
  } else {
    q.store(q.wrGlobal_, std::move(entry));
    q.wrGlobal_ = q.wrap(q.wrGlobal_ + 1);
  }
  ++written;
}

const Tensor& EpochIo::current(const std::string& queue) const {
  QueueState* q = store_->find(queue);
  if (!q) throw RuntimeError("unknown-queue", loc_, where() + " uses " + quote(queue) + ", which is not a queue");
  requireAllocated(*q, loc_, where() + " uses");
  store_->loadFromBase(*q, q->wrGlobal_);
  return std::as_const(*q).slot(q->wrGlobal_);
}

void EpochIo::end() {
  for (const auto& name : readable_) {
    QueueState& q = state(name);
    const QueueSettingsValues& s = settings(name);
    const int64_t g = s.globalRdptrAutoinc.value_or(0);
    if (g <= 0) continue;
    if (q.isRam()) {
      if (!s.prologue && !s.epilogue)
        q.rdGlobal_ = q.rdLocal_ = q.wrap(q.rdGlobal_ + floorMod(product(g, inputCount_), 2 * q.entries()));
      continue;
    }
    requireConsistent(q, q.headerError_, q.headerErrorLoc_);
    // The device pops what it read: g entries per input, or once for a
    // prologue queue that was read once.
    const int64_t popped = product(g, s.prologue ? 1 : inputCount_);
    if (popped > q.occupancy())
      throw RuntimeError("queue-empty", loc_,
                         where() + " pops " + entriesText(popped) + " from queue " + quote(name) +
                             " (global_rdptr_autoinc " + std::to_string(g) + ") but it holds " +
                             std::to_string(q.occupancy()));
    const bool localAtHead = q.rdLocal_ == q.rdGlobal_;
    q.rdGlobal_ = q.wrap(q.rdGlobal_ + popped);
    // A local pointer the program does not set reads from the head.
    if (!s.rdPtrLocal && localAtHead) q.rdLocal_ = q.rdGlobal_;
  }
}

} // namespace tessera::runtime
