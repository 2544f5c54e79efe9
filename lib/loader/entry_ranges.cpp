#include "loader/entry_ranges.hpp"

#include "golden/ops.hpp"

#include <algorithm>
#include <exception>
#include <thread>

namespace tessera::loader {

using formats::Tensor;

namespace {

// The ranges' results one after the other.
Tensor joined(const std::vector<Tensor>& parts) {
  std::vector<const Tensor*> pieces;
  for (const Tensor& t : parts) pieces.push_back(&t);
  return formats::concatEntries(pieces, parts.front().z, parts.front().r, parts.front().c);
}

// `count` copies of a one-entry tensor, stacked along w.
Tensor stacked(const Tensor& one, int64_t count) {
  Tensor out = Tensor::reserved(count * one.w, one.z, one.r, one.c);  // appended: no zero-fill first
  for (int64_t i = 0; i < count; ++i) out.data.insert(out.data.end(), one.data.begin(), one.data.end());
  if (!one.rawBits.empty())
    for (int64_t i = 0; i < count; ++i) out.rawBits.insert(out.rawBits.end(), one.rawBits.begin(), one.rawBits.end());
  return out;
}

} // namespace

// Ranges 1.. are copied out, range 0 keeps the inputs' own storage cut to its
// entries: a copy of every entry would be fresh memory the size of the inputs
// (GBs of page faults for a large activation).
Tensor evalByEntries(std::vector<Tensor>&& inputs, unsigned threads, const EntryEval& eval,
                     const std::vector<bool>& whole) {
  auto isWhole = [&](size_t k) { return k < whole.size() && whole[k]; };
  const int64_t w = inputs.empty() ? 1 : inputs.front().w;
  bool split = threads > 1 && w > 1;
  for (size_t k = 0; k < inputs.size() && split; ++k) split = isWhole(k) || inputs[k].w == w;
  if (!split) return eval(inputs);
  const auto parts = static_cast<int64_t>(std::min<int64_t>(threads, w));
  auto firstOf = [&](int64_t p) { return w * p / parts; };
  std::vector<std::vector<Tensor>> chunks(static_cast<size_t>(parts));
  for (int64_t p = 1; p < parts; ++p) {
    std::vector<Tensor>& chunk = chunks[static_cast<size_t>(p)];
    chunk.reserve(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k)
      chunk.push_back(isWhole(k) ? inputs[k] : formats::entryRange(inputs[k], firstOf(p), firstOf(p + 1) - firstOf(p)));
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (isWhole(k)) continue;
    Tensor& t = inputs[k];
    const auto kept = static_cast<size_t>(firstOf(1) * t.z * t.r * t.c);
    t.w = firstOf(1);
    t.data.resize(kept);
    if (!t.rawBits.empty()) t.rawBits.resize(kept);
  }
  chunks[0] = std::move(inputs);
  std::vector<Tensor> results(static_cast<size_t>(parts));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  auto run = [&](int64_t p) {
    try {
      results[static_cast<size_t>(p)] = eval(chunks[static_cast<size_t>(p)]);
    } catch (...) {
      errors[static_cast<size_t>(p)] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> workers;
    for (int64_t p = 1; p < parts; ++p) workers.emplace_back(run, p);
    run(0);
  }
  if (std::any_of(errors.begin(), errors.end(), [](const std::exception_ptr& e) { return e != nullptr; })) {
    std::vector<Tensor> all;  // the inputs again, joined from the ranges
    for (size_t k = 0; k < chunks[0].size(); ++k) {
      if (isWhole(k)) {
        all.push_back(std::move(chunks[0][k]));  // only range 0's copy is read below
        continue;
      }
      std::vector<const Tensor*> pieces;
      for (const auto& chunk : chunks) pieces.push_back(&chunk[k]);
      all.push_back(formats::concatEntries(pieces, chunks[0][k].z, chunks[0][k].r, chunks[0][k].c));
    }
    return eval(all);
  }
  return joined(results);
}

// Ranges, not all entries at once: w-stacked weights of a 128-input
// bert_large were 2 GB per operand. When one range holds every entry, the
// repeated inputs are stacked in place and the others evaluated as they are
// (a copy of each would be another input_count entries).
Tensor evalInRanges(std::vector<Tensor>&& inputs, const std::vector<bool>& repeated, const std::vector<bool>& whole,
                    int64_t n, unsigned threads, const EntryEval& eval, size_t rangeBytes) {
  size_t perEntry = 0;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (repeated[k] && !whole[k]) perEntry += inputs[k].data.size() * sizeof(float);
  auto range = [&](int64_t first, int64_t count) {
    std::vector<Tensor> part;
    part.reserve(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k)
      part.push_back(whole[k] ? inputs[k] : repeated[k] ? stacked(inputs[k], count) : formats::entryRange(inputs[k], first, count));
    return part;
  };
  if (perEntry == 0) return evalByEntries(std::move(inputs), threads, eval, whole);
  const auto step = static_cast<int64_t>(std::clamp<size_t>(rangeBytes / perEntry, 1, static_cast<size_t>(n)));
  if (step >= n) {
    for (size_t k = 0; k < inputs.size(); ++k)
      if (repeated[k] && !whole[k]) inputs[k] = stacked(inputs[k], n);
    return evalByEntries(std::move(inputs), threads, eval, whole);
  }
  std::vector<Tensor> results;
  try {
    for (int64_t first = 0; first < n; first += step)
      results.push_back(evalByEntries(range(first, std::min(step, n - first)), threads, eval, whole));
  } catch (const golden::GoldenError&) {
    return evalByEntries(range(0, n), threads, eval, whole);
  }
  return joined(results);
}

} // namespace tessera::loader
