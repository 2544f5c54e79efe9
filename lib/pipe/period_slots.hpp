// A packer read by more pipes than its core has streams for, each reader
// taking its own part of the input, serves them in turn from one stream
// (docs/net2pipe.md "Successive periods to slots"). Internal to lib/pipe:
// the epoch builder (epoch_builder.cpp) calls it after the multicast split, before
// sizing buffers and checking resources.
#pragma once
#include "pipe/builder_internal.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace tessera::pipe::build {

// Whether two pending pipes' destinations may be served one after the other
// (neither waits for the other's output).
using IndependentFn = std::function<bool(const PendingPipe&, const PendingPipe&)>;
// Streams the core of buffer `h` needs besides the forks of its packer.
using CoreStreamsFn = std::function<uint32_t(uint32_t h)>;

// For every packer P on a worker core whose streams (`coreStreams(P)` plus
// one fork stream per reading pipe beyond the first) exceed `streamLimit`,
// when its reading pipes each take one run of L tiles of P, in order, the
// runs disjoint and together P's whole input, and the pipes pairwise
// `independent`: replaces them by one pipe whose slots (nested output_list)
// receive P's successive periods of L tiles, slot k the run at k x L.
// Sets `Buf::period` of P to L. Keeps the order of `pending` (the pipe takes
// the place of the first reader). Returns the packers so served.
size_t slotSuccessivePeriods(std::vector<PendingPipe>& pending, std::vector<Buf>& bufs, uint32_t streamLimit,
                             const CoreStreamsFn& coreStreams, const IndependentFn& independent);

} // namespace tessera::pipe::build
