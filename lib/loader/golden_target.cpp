#include "loader/golden_target.hpp"

#include "formats/formats.hpp"
#include "golden/fused.hpp"
#include "golden/ops.hpp"
#include "golden/tm.hpp"
#include "support/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <set>
#include <thread>

namespace tessera::loader {

using formats::Tensor;
using golden::GoldenError;
using runtime::RuntimeError;

GoldenTarget::GoldenTarget(const netlist::Netlist& nl, netlist::Arch arch, unsigned threads)
    : nl_(&nl), arch_(arch), threads_(threads ? threads : defaultJobs()) {
  for (const auto& f : nl.fusedOps) fusedOps_[f.id] = &f;
  for (const auto& q : nl.queues) consumers_[q.input.value].push_back(&q);
}

const std::vector<size_t>& GoldenTarget::order(const netlist::Graph& graph) {
  auto found = orders_.find(graph.name);
  if (found != orders_.end()) return found->second;

  std::map<std::string, size_t> opIndex;
  for (size_t i = 0; i < graph.ops.size(); ++i) opIndex[graph.ops[i].name] = i;
  std::map<std::string, std::string> queueProducer; // queue -> producing op, same graph only
  // A relay queue (type queue) written and read in one epoch orders its
  // writer first. A ram written by the op that reads it (an optimizer
  // updating its weights) is read before the write: no edge.
  for (const auto& q : nl_->queues)
    if (opIndex.count(q.input.value) && q.type.value == netlist::IoType::Queue) queueProducer[q.name] = q.input.value;

  // Depth-first post-order; the validator rejects cycles, so a cycle here is
  // reported rather than looped on.
  std::vector<size_t> out;
  std::vector<int> state(graph.ops.size(), 0); // 0 new, 1 visiting, 2 done
  auto visit = [&](auto&& self, size_t i) -> void {
    if (state[i] == 2) return;
    if (state[i] == 1)
      throw RuntimeError("graph-cycle", graph.ops[i].loc, "op '" + graph.ops[i].name + "' depends on itself");
    state[i] = 1;
    for (const auto& in : graph.ops[i].inputs) {
      std::string producer = in.name;
      if (auto q = queueProducer.find(in.name); q != queueProducer.end()) producer = q->second;
      if (auto p = opIndex.find(producer); p != opIndex.end()) self(self, p->second);
    }
    state[i] = 2;
    out.push_back(i);
  };
  for (size_t i = 0; i < graph.ops.size(); ++i) visit(visit, i);
  return orders_.emplace(graph.name, std::move(out)).first->second;
}

namespace {

// Every op computes each entry (w) of its inputs on its own, so with several
// threads the entries are split into contiguous ranges, evaluated at once
// and joined: the same arithmetic per entry, the same bits. A failure is
// reported from one evaluation of all entries, so messages (which quote
// shapes) do not depend on the thread count.
Tensor evalByEntries(std::span<const Tensor> inputs, unsigned threads,
                     const std::function<Tensor(std::span<const Tensor>)>& eval) {
  const int64_t w = inputs.empty() ? 1 : inputs.front().w;
  const bool split = threads > 1 && w > 1 &&
                     std::all_of(inputs.begin(), inputs.end(), [w](const Tensor& t) { return t.w == w; });
  if (!split) return eval(inputs);
  const auto parts = static_cast<int64_t>(std::min<int64_t>(threads, w));
  std::vector<Tensor> results(static_cast<size_t>(parts));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  auto run = [&](int64_t p) {
    const int64_t first = w * p / parts, count = w * (p + 1) / parts - first;
    try {
      std::vector<Tensor> chunk;
      chunk.reserve(inputs.size());
      for (const Tensor& t : inputs) chunk.push_back(formats::entryRange(t, first, count));
      results[static_cast<size_t>(p)] = eval(chunk);
    } catch (...) {
      errors[static_cast<size_t>(p)] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> workers;
    for (int64_t p = 1; p < parts; ++p) workers.emplace_back(run, p);
    run(0);
  }
  for (const auto& e : errors)
    if (e) return eval(inputs);
  std::vector<const Tensor*> pieces;
  for (const Tensor& r : results) pieces.push_back(&r);
  return formats::concatEntries(pieces, results.front().z, results.front().r, results.front().c);
}

std::string shapeText(const Tensor& t) {
  return "[" + std::to_string(t.w) + ", " + std::to_string(t.z) + ", " + std::to_string(t.r) + ", " +
         std::to_string(t.c) + "]";
}

golden::OpSpec specOf(const netlist::Op& op, netlist::Arch arch) {
  golden::OpSpec s;
  s.name = op.name;
  s.type = op.type.value;
  s.attrs = &op.attributes;
  s.t = op.t.present() ? op.t.value : 1;
  s.grid = op.gridSize.value;
  s.mblock = op.mblock.value;
  s.ublock = op.ublock.value;
  s.ublockOrder = op.order();
  for (const auto& df : op.inDf) s.inDf.push_back(df.value);
  s.outDf = op.outDf.value;
  s.accDf = op.accDf.present() ? op.accDf.value : op.outDf.value;
  s.intermedDf = op.intermedDf.present() ? op.intermedDf.value : op.outDf.value;
  s.fidelity = op.mathFidelity.present() ? op.mathFidelity.value : netlist::MathFidelity::HiFi4;
  s.arch = arch;
  return s;
}

} // namespace

void GoldenTarget::execute(runtime::EpochIo& io) {
  const netlist::Graph& graph = io.graph();
  const int64_t n = io.inputCount();
  std::map<std::string, Tensor> results; // op name -> [n][t][r][c]
  // How many operand references to each op's result are still to be read:
  // the last one takes the tensor instead of copying it, so results leave
  // memory as soon as nothing needs them (yolo_v5's peak was 5 GB).
  std::map<std::string, size_t> pendingReads;
  for (const netlist::Op& op : graph.ops)
    for (const auto& operand : op.inputs) ++pendingReads[operand.name];

  for (size_t index : order(graph)) {
    const netlist::Op& op = graph.ops[index];
    std::vector<Tensor> inputs;
    inputs.reserve(op.inputs.size());
    for (const auto& operand : op.inputs) {
      Tensor value;
      if (auto r = results.find(operand.name); r != results.end()) {
        if (--pendingReads[operand.name] == 0) {
          value = std::move(r->second);
          results.erase(r);
        } else {
          value = r->second;
        }
      } else {
        std::vector<Tensor> entries;
        entries.reserve(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) entries.push_back(io.read(operand.name, i));
        std::vector<const Tensor*> ptrs;
        for (const auto& e : entries) ptrs.push_back(&e);
        value = formats::concatEntries(ptrs, ptrs.front()->z, ptrs.front()->r, ptrs.front()->c);
      }
      try {
        if (operand.unpad) value = golden::unpadTiles(value, *operand.unpad);
        value = golden::applyTms(std::move(value), operand.tms);
        if (operand.pad) value = golden::padTiles(value, *operand.pad);
      } catch (const GoldenError& e) {
        throw RuntimeError("golden-tm", operand.tmsLoc.valid() ? operand.tmsLoc : operand.loc,
                           "op '" + op.name + "' input '" + operand.name + "': " + e.what());
      }
      inputs.push_back(std::move(value));
    }

    golden::OpSpec spec = specOf(op, arch_);
    Tensor out;
    auto started = std::chrono::steady_clock::now();
    try {
      if (op.type.value == "fused_op") {
        auto f = fusedOps_.find(op.attributes.fusedOpId.value);
        if (f == fusedOps_.end())
          throw GoldenError("fused op id '" + op.attributes.fusedOpId.value + "' is not defined in fused_ops");
        const netlist::FusedOp& fused = *f->second;
        out = evalByEntries(inputs, threads_,
                            [&](std::span<const Tensor> in) { return golden::evalFusedOp(spec, fused, in); });
      } else {
        out = evalByEntries(inputs, threads_, [&](std::span<const Tensor> in) { return golden::evalOp(spec, in); });
      }
    } catch (const GoldenError& e) {
      // GoldenError messages already name the op.
      throw RuntimeError("golden-op", op.type.loc.valid() ? op.type.loc : op.loc, e.what());
    }
    OpTypeProfile& prof = profile_[op.type.value];
    prof.calls += 1;
    prof.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (op.type.value == "matmul" && inputs.size() >= 2)
      prof.flops += 2.0 * static_cast<double>(out.w) * static_cast<double>(out.z) * static_cast<double>(out.r) *
                    static_cast<double>(inputs[0].c) * static_cast<double>(out.c);

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
        // previous contents, into one entry.
        Tensor acc = io.current(q->name);
        for (int64_t w = 0; w < value.w; ++w) {
          Tensor e = formats::entryRange(value, w, 1);
          if (!e.sameShape(acc))
            throw RuntimeError("golden-shape", q->loc, "gradient op '" + op.name + "' output " + shapeText(e) +
                                                           " does not match queue '" + q->name + "' entry " + shapeText(acc));
          for (size_t i = 0; i < acc.size(); ++i) acc.data[i] += e.data[i];
        }
        formats::quantize(q->df.value, acc);
        io.write(q->name, std::move(acc));
        continue;
      }
      for (int64_t w = 0; w < value.w; ++w) {
        Tensor e = formats::entryRange(value, w, 1);
        formats::quantize(q->df.value, e);
        io.write(q->name, std::move(e));
      }
    }
    if (pendingReads[op.name] > 0) results[op.name] = std::move(out);
  }
}

} // namespace tessera::loader
