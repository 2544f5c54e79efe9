// Multicasts a core has no multicast stream for become unicasts
// (docs/net2pipe.md "Multicasts beyond the core's streams"). Internal to
// lib/pipe: the epoch builder (epoch_builder.cpp) calls it after time
// multiplexing, before sizing buffers and checking resources.
#pragma once
#include "pipe/builder_internal.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace tessera::pipe::build {

// Where a pending pipe's sending stream runs: a key of that core, and
// whether every tile comes from one buffer core (`single`: the core's own
// packer stream sends it; otherwise a relay stream on a destination does).
using SendingCoreFn = std::function<uint64_t(const PendingPipe&, bool& single)>;

// For every core sending more than `limit` multicasts, splits multicasts
// (not time-multiplexed ones) into one unicast pipe per destination until
// the core sends `limit`: first those of its own packer (a unicast of a
// packer is a fork stream, of which a core has many more than multicast
// streams), then DRAM reads and gathers relayed there (each destination
// then reads or gathers its own copy), fewest destinations first. Each
// destination receives the same tiles in the same order as from the
// multicast, and no longer waits for the others' room. Keeps the order of
// `pending` (a split pipe's unicasts take its place). Returns the number of
// multicasts split.
size_t splitExcessMulticasts(std::vector<PendingPipe>& pending, uint32_t limit, const SendingCoreFn& sendingCore);

// Splits every plain (not time-multiplexed) multicast that `where` picks
// into one unicast per destination, in place; `why` ends each unicast's
// comment. Returns the number of multicasts split.
size_t splitMulticastsWhere(std::vector<PendingPipe>& pending, const std::function<bool(const PendingPipe&)>& where,
                            const std::string& why);

} // namespace tessera::pipe::build
