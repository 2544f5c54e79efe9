#include "loader/golden_target.hpp"

#include "formats/blocking.hpp"
#include "formats/formats.hpp"
#include "golden/fused.hpp"
#include "golden/ops.hpp"
#include "golden/tm.hpp"
#include "loader/entry_ranges.hpp"
#include "support/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <set>

namespace tessera::loader {

using formats::Tensor;
using golden::GoldenError;
using runtime::RuntimeError;

GoldenTarget::GoldenTarget(const netlist::Netlist& nl, netlist::Arch arch, unsigned threads)
    : nl_(&nl), arch_(arch), threads_(threads ? threads : defaultJobs()) {
  for (const auto& f : nl.fusedOps) fusedOps_[f.id] = &f;
  for (const auto& q : nl.queues) consumers_[q.input.value].push_back(&q);
  for (const auto& q : nl.queues) queueNames_.insert(q.name);
  for (const auto& g : nl.graphs)
    for (const auto& op : g.ops) opGraph_.emplace(op.name, g.name);
}

std::optional<GoldenTarget::OpRef> GoldenTarget::producer(const std::vector<const netlist::Graph*>& graphs, OpRef at,
                                                           const std::string& input) {
  auto indexOf = [&](const netlist::Graph& g) -> const std::map<std::string, size_t>& {
    auto it = opIndex_.find(g.name);
    if (it != opIndex_.end()) return it->second;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < g.ops.size(); ++i) index.emplace(g.ops[i].name, i);
    return opIndex_.emplace(g.name, std::move(index)).first->second;
  };
  // Its own graph first: op names of different graphs may repeat on one chip.
  if (auto& own = indexOf(*graphs[at.graph]); own.count(input)) return OpRef{at.graph, own.at(input)};
  for (size_t g = 0; g < graphs.size(); ++g) {
    if (g == at.graph) continue;
    auto& other = indexOf(*graphs[g]);
    if (auto it = other.find(input); it != other.end()) return OpRef{g, it->second};
  }
  return std::nullopt;
}

const std::vector<GoldenTarget::OpRef>& GoldenTarget::order(const std::vector<const netlist::Graph*>& graphs) {
  std::vector<std::string> key;
  for (const netlist::Graph* g : graphs) key.push_back(g->name);
  auto found = orders_.find(key);
  if (found != orders_.end()) return found->second;

  // A relay queue (type queue) written and read in one launch orders its
  // writer first. A ram written by the op that reads it (an optimizer
  // updating its weights) is read before the write: no edge.
  std::map<std::string, OpRef> queueProducer;
  for (const auto& q : nl_->queues) {
    if (q.type.value != netlist::IoType::Queue) continue;
    for (size_t g = 0; g < graphs.size(); ++g) {
      const auto& ops = graphs[g]->ops;
      auto it = std::find_if(ops.begin(), ops.end(), [&](const netlist::Op& op) { return op.name == q.input.value; });
      if (it != ops.end()) {
        queueProducer.emplace(q.name, OpRef{g, static_cast<size_t>(it - ops.begin())});
        break;
      }
    }
  }

  // A ram read while another view of its buffer (alias) is written in the
  // launch: the writers run first, so each input's read can see the writes
  // of the inputs before it (runtime::EpochIo). Not an edge that would close
  // a cycle: then the read comes first.
  std::map<std::string, const netlist::Queue*> rams;
  for (const auto& q : nl_->queues)
    if (q.type.value == netlist::IoType::Ram) rams.emplace(q.name, &q);
  auto baseOf = [](const netlist::Queue& q) { return q.alias.present() ? q.alias.value : q.name; };
  std::map<std::string, std::vector<std::pair<std::string, OpRef>>> viewWriters; // base -> (ram, writer op)
  for (const auto& [name, q] : rams)
    for (size_t g = 0; g < graphs.size(); ++g)
      for (size_t i = 0; i < graphs[g]->ops.size(); ++i)
        if (graphs[g]->ops[i].name == q->input.value) viewWriters[baseOf(*q)].push_back({name, OpRef{g, i}});

  // Whether `from`'s result reaches `to` through data edges (then `to`
  // cannot run before `from`).
  auto feeds = [&](OpRef from, OpRef to) {
    std::set<std::pair<size_t, size_t>> seen;
    std::vector<OpRef> stack{to};
    while (!stack.empty()) {
      const OpRef cur = stack.back();
      stack.pop_back();
      if (cur.graph == from.graph && cur.op == from.op) return true;
      if (!seen.insert({cur.graph, cur.op}).second) continue;
      for (const auto& in : graphs[cur.graph]->ops[cur.op].inputs) {
        if (auto q = queueProducer.find(in.name); q != queueProducer.end()) stack.push_back(q->second);
        else if (auto p = producer(graphs, cur, in.name)) stack.push_back(*p);
      }
    }
    return false;
  };

  // Depth-first post-order, graphs in launch order; the validator rejects
  // cycles, so a cycle here is reported rather than looped on.
  std::vector<OpRef> out;
  std::vector<std::vector<int>> state; // 0 new, 1 visiting, 2 done
  for (const netlist::Graph* g : graphs) state.emplace_back(g->ops.size(), 0);
  auto visit = [&](auto&& self, OpRef at) -> void {
    int& st = state[at.graph][at.op];
    const netlist::Op& op = graphs[at.graph]->ops[at.op];
    if (st == 2) return;
    if (st == 1) throw RuntimeError("graph-cycle", op.loc, "op '" + op.name + "' depends on itself");
    st = 1;
    for (const auto& in : op.inputs) {
      if (auto q = queueProducer.find(in.name); q != queueProducer.end()) self(self, q->second);
      else if (auto p = producer(graphs, at, in.name)) self(self, *p);
      else if (auto r = rams.find(in.name); r != rams.end())
        if (auto w = viewWriters.find(baseOf(*r->second)); w != viewWriters.end())
          for (const auto& [ram, writer] : w->second)
            if (ram != in.name && !feeds(at, writer)) self(self, writer);
    }
    st = 2;
    out.push_back(at);
  };
  for (size_t g = 0; g < graphs.size(); ++g)
    for (size_t i = 0; i < graphs[g]->ops.size(); ++i) visit(visit, OpRef{g, i});
  return orders_.emplace(std::move(key), std::move(out)).first->second;
}

namespace {

std::string shapeText(const Tensor& t) {
  return "[" + std::to_string(t.w) + ", " + std::to_string(t.z) + ", " + std::to_string(t.r) + ", " +
         std::to_string(t.c) + "]";
}

} // namespace

void GoldenTarget::execute(runtime::EpochIo& io) { run({&io}); }

void GoldenTarget::launch(const runtime::Launch& launch) { run(launch.graphs); }

void GoldenTarget::run(const std::vector<runtime::EpochIo*>& ios) {
  std::vector<const netlist::Graph*> graphs;
  for (const runtime::EpochIo* io : ios) graphs.push_back(&io->graph());
  const std::vector<OpRef>& ops = order(graphs);
  // The operand each op input resolves to: an op of the launch, or a queue.
  std::vector<std::vector<std::vector<std::optional<OpRef>>>> sources(graphs.size());
  for (size_t g = 0; g < graphs.size(); ++g)
    for (size_t i = 0; i < graphs[g]->ops.size(); ++i) {
      auto& list = sources[g].emplace_back();
      for (const auto& operand : graphs[g]->ops[i].inputs) list.push_back(producer(graphs, OpRef{g, i}, operand.name));
    }
  // Results by op: [n][t][r][c]. How many operand references to each op's
  // result are still to be read: the last one takes the tensor instead of
  // copying it, so results leave memory as soon as nothing needs them
  // (yolo_v5's peak was 5 GB).
  std::vector<std::vector<std::optional<Tensor>>> results(graphs.size());
  std::vector<std::vector<size_t>> pendingReads(graphs.size());
  for (size_t g = 0; g < graphs.size(); ++g) {
    results[g].resize(graphs[g]->ops.size());
    pendingReads[g].resize(graphs[g]->ops.size());
  }
  for (size_t g = 0; g < graphs.size(); ++g)
    for (const auto& list : sources[g])
      for (const auto& src : list)
        if (src) ++pendingReads[src->graph][src->op];

  for (const OpRef at : ops) {
    runtime::EpochIo& io = *ios[at.graph];
    const int64_t n = io.inputCount();
    const netlist::Op& op = graphs[at.graph]->ops[at.op];
    std::vector<Tensor> inputs;
    inputs.reserve(op.inputs.size());
    std::vector<bool> inputRounded(op.inputs.size(), false);
    // Inputs known to be in their in_df already: evalOp then skips its check.
    // Only for the float formats, where rounding is per value, so TMs (which
    // move values, and pad with zeros) keep it; Bfp blocks would regroup.
    std::vector<bool> inDfKnown(op.inputs.size(), false);
    std::vector<bool> repeated(op.inputs.size(), false);  // inputs[k] is the one entry every input reads
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const auto& operand = op.inputs[k];
      const std::optional<OpRef>& src = sources[at.graph][at.op][k];
      const netlist::DataFormat inDf = k < op.inDf.size() ? op.inDf[k].value : netlist::DataFormat::Float32;
      const bool floatInDf = k < op.inDf.size() && (inDf == netlist::DataFormat::Float32 ||
                                                    inDf == netlist::DataFormat::Float16 ||
                                                    inDf == netlist::DataFormat::Float16_b);
      Tensor value;
      if (src) {
        // evalOp rounded the producer's result to its out_df (a requantizing
        // matmul packs Int8 instead).
        const netlist::Op& producerOp = graphs[src->graph]->ops[src->op];
        const netlist::Attribute* requant = producerOp.attributes.find("requant");
        inDfKnown[k] = floatInDf && producerOp.outDf.value == inDf &&
                       !(requant && requant->value.is_boolean() && requant->value.get<bool>());
        std::optional<Tensor>& r = results[src->graph][src->op];
        if (!r) // the order puts producers first; only a bug gets here
          throw RuntimeError("internal", operand.loc, "op '" + op.name + "' reads '" + operand.name + "' before it ran");
        if (--pendingReads[src->graph][src->op] == 0) {
          value = std::move(*r);
          r.reset();
        } else {
          value = *r;
        }
        if (value.w != n)
          throw RuntimeError("golden-shape", operand.loc,
                             "op '" + op.name + "' (graph '" + graphs[at.graph]->name + "', input_count " +
                                 std::to_string(n) + ") reads op '" + operand.name + "' of graph '" +
                                 graphs[src->graph]->name + "', which produces " + std::to_string(value.w) +
                                 " entries per launch");
      } else {
        if (auto other = opGraph_.find(operand.name); other != opGraph_.end() && !queueNames_.count(operand.name))
          throw RuntimeError("temporal-epoch", io.loc(),
                             "op '" + op.name + "' of graph '" + graphs[at.graph]->name + "' reads op '" + operand.name +
                                 "' of graph '" + other->second +
                                 "', which this execute does not launch with it: execute the graphs of one temporal "
                                 "epoch one after another, with no other instruction between them");
        // Each entry is copied straight into place (one copy, not two:
        // w-stacked weights are input_count copies of one ram entry), and
        // checked against in_df once per distinct entry (a ram read n times is
        // checked once, not n times by evalOp).
        bool checked = floatInDf;
        const Tensor* last = nullptr;
        // A ram or prologue queue gives every input the same entry: kept
        // once, stacked per range of entries when the op runs (below).
        std::vector<const Tensor*> entries;
        for (int64_t i = 0; i < n; ++i) entries.push_back(&io.read(operand.name, i));
        if (n > 1 && std::all_of(entries.begin(), entries.end(), [&](const Tensor* e) { return e == entries.front(); })) {
          const Tensor& e = *entries.front();
          value = e;
          if (value.rawBits.size() != value.data.size()) value.rawBits.clear();
          inDfKnown[k] = checked && formats::isQuantized(inDf, e.data);
          repeated[k] = true;
        }
        for (int64_t i = 0; i < n && !repeated[k]; ++i) {
          const Tensor& e = *entries[static_cast<size_t>(i)];
          if (checked && &e != last) checked = formats::isQuantized(inDf, e.data);
          last = &e;
          if (i == 0) {
            value = Tensor::reserved(n * e.w, e.z, e.r, e.c);  // appended below: no zero-fill first
            value.rawBits = e.rawBits;
          }
          if (!value.rawBits.empty() && i > 0) {
            if (e.rawBits.size() == e.data.size()) value.rawBits.insert(value.rawBits.end(), e.rawBits.begin(), e.rawBits.end());
            else value.rawBits.clear();
          }
          if (e.data.size() != entries.front()->data.size())
            throw RuntimeError("golden-shape", operand.loc, "op '" + op.name + "' reads entries of different shapes from '" + operand.name + "'");
          value.data.insert(value.data.end(), e.data.begin(), e.data.end());
        }
        if (!repeated[k]) {
          if (value.rawBits.size() != value.data.size()) value.rawBits.clear();
          inDfKnown[k] = checked;
        }
      }
      try {
        std::optional<netlist::DataFormat> inDf;
        if (k < op.inDf.size()) inDf = op.inDf[k].value;
        bool rounded = false;
        value = golden::unpackedOperand(std::move(value), operand, inDf, rounded);
        inputRounded[k] = rounded;
      } catch (const GoldenError& e) {
        throw RuntimeError("golden-tm", operand.tmsLoc.valid() ? operand.tmsLoc : operand.loc,
                           "op '" + op.name + "' input '" + operand.name + "': " + e.what());
      }
      inputs.push_back(std::move(value));
    }

    golden::OpSpec spec = golden::specOf(op, arch_);
    spec.inputRounded = std::move(inputRounded);
    // A gradient op adds each input's result as it stands in dest into its
    // ram cell (below): keep the dest value, round to out_df afterwards.
    const bool gradient = op.gradientOp.value && !netlist::isIntegerFormat(spec.outDf);
    if (gradient) spec.outDf = netlist::DataFormat::Float32;
    spec.partialsInPlace = gradient && partialsInPlace_.count(op.name) > 0;
    spec.inputsInDf = inDfKnown;
    // A dense matmul reads a repeated weight (input 1) once, not stacked.
    std::vector<bool> whole(inputs.size(), false);
    if (op.type.value == "matmul" && !op.attributes.identity.value && !spec.partialsInPlace && inputs.size() > 1 &&
        repeated[1] && inputs[1].w == 1) {
      spec.sharedWeights = true;
      whole[1] = true;
    }
    auto started = std::chrono::steady_clock::now();
    if (spec.partialsInPlace) {
      // Every partial sum is an entry (OpSpec::partialsInPlace): an epoch's
      // would take m_k times the op's output (GBs on bert_base_train ub64),
      // so a few inputs are evaluated at a time and added into the cells.
      std::vector<std::pair<const netlist::Queue*, Tensor>> cells;
      for (const netlist::Queue* q : consumers_[op.name]) cells.emplace_back(q, io.current(q->name));
      const int64_t w = inputs.empty() ? 0 : inputs.front().w;
      const int64_t chunk = std::max<int64_t>(1, threads_);
      for (int64_t first = 0; first < w; first += chunk) {
        std::vector<Tensor> part;
        for (const Tensor& in : inputs) part.push_back(formats::entryRange(in, first, std::min(chunk, w - first)));
        Tensor sums;
        try {
          sums = evalByEntries(std::move(part), threads_, [&](std::span<const Tensor> in) { return golden::evalOp(spec, in); });
        } catch (const GoldenError& e) {
          throw RuntimeError("golden-op", op.type.loc.valid() ? op.type.loc : op.loc, e.what());
        }
        for (auto& [q, cell] : cells) {
          Tensor written;
          if (!q->inputTms.empty()) {
            try {
              written = golden::applyTms(sums, q->inputTms);
            } catch (const GoldenError& e) {
              throw RuntimeError("golden-tm", q->inputTmsLoc.valid() ? q->inputTmsLoc : q->loc,
                                 "queue '" + q->name + "' input_tms: " + e.what());
            }
          }
          const Tensor& value = q->inputTms.empty() ? sums : written;
          if (value.w > 0 && !formats::entryRange(value, 0, 1).sameShape(cell))
            throw RuntimeError("golden-shape", q->loc, "gradient op '" + op.name + "' output " +
                                                           shapeText(formats::entryRange(value, 0, 1)) +
                                                           " does not match queue '" + q->name + "' entry " + shapeText(cell));
          golden::accumulateGradient(cell, value, q->df.value);
        }
      }
      for (auto& [q, cell] : cells) io.write(q->name, std::move(cell));
      OpTypeProfile& prof = profile_[op.type.value];
      prof.calls += 1;
      prof.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      continue; // a gradient op feeds no op (net2pipe's rule)
    }
    const int64_t innerDim = inputs.size() >= 2 ? inputs[0].c : 0;  // inputs are consumed below
    Tensor out;
    try {
      if (op.type.value == "fused_op") {
        auto f = fusedOps_.find(op.attributes.fusedOpId.value);
        if (f == fusedOps_.end())
          throw GoldenError("fused op id '" + op.attributes.fusedOpId.value + "' is not defined in fused_ops");
        const netlist::FusedOp& fused = *f->second;
        out = evalInRanges(std::move(inputs), repeated, whole, n, threads_,
                           [&](std::span<const Tensor> in) { return golden::evalFusedOp(spec, fused, in); });
      } else {
        out = evalInRanges(std::move(inputs), repeated, whole, n, threads_,
                           [&](std::span<const Tensor> in) { return golden::evalOp(spec, in); });
      }
    } catch (const GoldenError& e) {
      // GoldenError messages already name the op.
      throw RuntimeError("golden-op", op.type.loc.valid() ? op.type.loc : op.loc, e.what());
    }
    // The packer of an op with tile_dim smaller than 32x32 stores each tile's corner only.
    if (op.tileDim.present())
      formats::maskToTileShape(out, {static_cast<uint32_t>(op.tileDim.value.r), static_cast<uint32_t>(op.tileDim.value.c)});
    OpTypeProfile& prof = profile_[op.type.value];
    prof.calls += 1;
    prof.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (op.type.value == "matmul" && innerDim > 0)
      prof.flops += 2.0 * static_cast<double>(out.w) * static_cast<double>(out.z) * static_cast<double>(out.r) *
                    static_cast<double>(innerDim) * static_cast<double>(out.c);

    for (const netlist::Queue* q : consumers_[op.name]) {
      // A queue's input_tms reshape what its producer writes (BUDA's
      // producer-side TMs into DRAM).
      Tensor written;
      if (!q->inputTms.empty()) {
        try {
          written = golden::applyTms(out, q->inputTms);
        } catch (const GoldenError& e) {
          throw RuntimeError("golden-tm", q->inputTmsLoc.valid() ? q->inputTmsLoc : q->loc,
                             "queue '" + q->name + "' input_tms: " + e.what());
        }
      }
      const Tensor& value = q->inputTms.empty() ? out : written;
      if (op.gradientOp.value) {
        // Gradient ops accumulate every input of the epoch, and the queue's
        // previous contents, into one entry. The device packs after every
        // input (BUDA's matmul_u reloads the cell into dest and packs it
        // back; our packer adds dest into the L1 cell): the cell is rounded
        // to its format after each add, not once at the end.
        Tensor acc = io.current(q->name);
        if (value.w > 0) {
          const Tensor e = formats::entryRange(value, 0, 1);
          if (!e.sameShape(acc))
            throw RuntimeError("golden-shape", q->loc, "gradient op '" + op.name + "' output " + shapeText(e) +
                                                           " does not match queue '" + q->name + "' entry " + shapeText(acc));
        }
        golden::accumulateGradient(acc, value, q->df.value);
        io.write(q->name, std::move(acc));
        continue;
      }
      for (int64_t w = 0; w < value.w; ++w) {
        Tensor e = formats::entryRange(value, w, 1);
        formats::quantize(q->df.value, e);
        io.write(q->name, std::move(e));
      }
    }
    if (gradient) formats::quantize(op.outDf.value, out); // what other readers of the op see
    if (pendingReads[at.graph][at.op] > 0) results[at.graph][at.op] = std::move(out);
  }
}

} // namespace tessera::loader
