// How the golden target evaluates one op over its input_count entries: in
// ranges of entries on several threads, with the inputs every entry shares
// (a ram, a prologue queue) stacked one range at a time. Entries are
// independent, so the results are the bits of one evaluation of all entries,
// whatever the thread count or range size.
#pragma once
#include "formats/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tessera::loader {

using EntryEval = std::function<formats::Tensor(std::span<const formats::Tensor>)>;

// At most this many bytes of stacked repeated inputs per range.
inline constexpr size_t kRangeBytes = size_t{256} << 20;

// `eval` over the inputs' entries (every input has the same w, except those
// marked `whole`, which every range gets as they are), split into up to
// `threads` contiguous ranges evaluated at once and joined. A failure is
// reported from one evaluation of all entries, so messages (which quote
// shapes) do not depend on the thread count. The inputs are consumed.
formats::Tensor evalByEntries(std::vector<formats::Tensor>&& inputs, unsigned threads, const EntryEval& eval,
                              const std::vector<bool>& whole = {});

// evalByEntries over `n` entries where the inputs marked `repeated` are one
// entry that every entry reads: those are stacked for a range of entries at a
// time (a range holds at most `rangeBytes` of them) and the ranges' results
// joined. Inputs also marked `whole` are read by the op as one entry
// (golden::OpSpec::sharedWeights) and never stacked. The inputs are consumed.
formats::Tensor evalInRanges(std::vector<formats::Tensor>&& inputs, const std::vector<bool>& repeated,
                             const std::vector<bool>& whole, int64_t n, unsigned threads, const EntryEval& eval,
                             size_t rangeBytes = kRangeBytes);

} // namespace tessera::loader
