// pipegen's stream builder, scheduling: endpoints (packer lanes and their
// emissions, DRAM readers and writers, extra streams), then the transfers of
// every component, merged where they can be (stream_builder.hpp).
#include "pipegen/stream_builder.hpp"

#include "device/arch_params.hpp"
#include "device/device_contract.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

namespace tessera::pipegen::detail {

// ---------------------------------------------------------------------------
// Endpoints: packer modes, direct DRAM readers/writers, extra streams.
// ---------------------------------------------------------------------------
int StreamBuilder::newExtraStream(size_t plan, StreamRole role, const std::vector<std::pair<uint32_t, uint32_t>>& cores,
                            uint32_t chip, uint32_t tileSize, uint32_t format) {
  const int maxStreams = archParams(soc_.arch).maxStreamsPerCore;
  std::vector<uint32_t> pool;
  for (uint32_t s = 0; s < blob::kOperandStreamBase; ++s) pool.push_back(s);
  for (uint32_t s = blob::kOperandStreamEnd; s < static_cast<uint32_t>(maxStreams); ++s) pool.push_back(s);
  const Pipe& p = doc_.pipes[plans_[plan].pipe];
  // Prefer a core with a free stream and room for the ring; else any core
  // with a free stream (the L1 check then reports the core).
  uint64_t top = soc_.workerL1Size ? soc_.workerL1Size : archParams(soc_.arch).defaultWorkerL1Size;
  uint64_t capacity = top > contract::kDataBufferBase ? top - contract::kDataBufferBase : 0;
  uint64_t ring = role == StreamRole::Fork ? 0 : satMul(std::max<uint32_t>(1, opts_.extraStreamRingTiles), tileSize);
  auto kindOf = [](StreamRole r) {
    return std::string(r == StreamRole::DramReader ? "DRAM reader" : r == StreamRole::DramWriter ? "DRAM writer" : "fork stream");
  };
  auto l1Used = [&](uint32_t r, uint32_t c) {
    uint64_t used = 0;
    for (const StreamInfo& s : streams_)
      if (s.name.chip == chip && s.r == r && s.c == c && !s.eth)
        used = satAdd(used, s.role == StreamRole::Operand ? satMul(s.ringTiles, s.msgSize)
                            : s.role == StreamRole::Fork ? 0
                                                         : satMul(std::max<uint32_t>(1, opts_.extraStreamRingTiles), s.msgSize));
    return used;
  };
  std::vector<std::pair<uint32_t, uint32_t>> ordered;
  for (auto rc : cores)
    if (std::find(ordered.begin(), ordered.end(), rc) == ordered.end() && satAdd(l1Used(rc.first, rc.second), ring) <= capacity)
      ordered.push_back(rc);
  for (auto rc : cores)
    if (std::find(ordered.begin(), ordered.end(), rc) == ordered.end()) ordered.push_back(rc);
  for (auto [r, c] : ordered) {
    auto& used = usedIds_[{chip, r, c}];
    for (uint32_t id : pool) {
      if (used.count(id)) continue;
      used.insert(id);
      StreamInfo s;
      s.name = *nocName(chip, r, c, id);
      s.r = r;
      s.c = c;
      s.plan = plan;
      s.role = role;
      s.msgSize = tileSize;
      s.dataFormat = format;
      s.loc = locOf(p.pos);
      std::string kind = kindOf(role);
      s.what = "stream " + std::to_string(id) + " (" + kind + " of pipe " + std::to_string(p.id) + ")";
      s.comment = kind + " of pipe " + std::to_string(p.id) + (p.comment.empty() ? "" : " (" + p.comment + ")") +
                  " on core " + coreText(r, c);
      streams_.push_back(std::move(s));
      return static_cast<int>(streams_.size() - 1);
    }
  }
  auto [r0, c0] = cores.front();
  auto d = pipeError("out-of-streams", p,
                     "core " + coreText(r0, c0) + " has no free overlay stream for the " +
                         kindOf(role) + " this pipe needs (" +
                         std::to_string(pool.size()) + " streams outside the operand range 8-39, all in use" +
                         (cores.size() > 1 ? " on every core of the pipe" : "") + ")");
  for (const StreamInfo& s : streams_)
    if (s.r == r0 && s.c == c0 && s.name.chip == chip && !s.eth && s.role != StreamRole::Operand) d.note(s.loc, s.what);
  return -1;
}

// A packer sending `emissions` (offset, tiles) of its `period`, in that
// order: after each emission it releases the longest prefix of the period
// no later emission reads (and the packer has surely pushed), `freed[k]`.
// Returns the ring that must hold what is read but not yet released (the
// reorder window), rounded up to the packer's push unit `unit` (a ublock:
// it waits for room for the whole ublock before it writes the tile an
// emission needs).
static uint64_t reorderWindow(const std::vector<std::pair<uint64_t, uint64_t>>& emissions, uint64_t period,
                              uint64_t unit, std::vector<uint64_t>& freed) {
  auto pushedBy = [unit](uint64_t end) { return (end + unit - 1) / unit * unit; };
  const size_t K = emissions.size();
  std::vector<uint64_t> laterMin(K, period);
  for (size_t k = K; k-- > 1;) laterMin[k - 1] = std::min(laterMin[k], emissions[k].first);
  freed.assign(K, 0);
  uint64_t released = 0, maxEnd = 0, window = 0;
  for (size_t k = 0; k < K; ++k) {
    uint64_t end = satAdd(emissions[k].first, emissions[k].second);
    maxEnd = std::max(maxEnd, end);
    window = std::max(window, pushedBy(end) - std::min(pushedBy(end), released));
    if (k + 1 == K) {
      window = std::max(window, pushedBy(period) - std::min(pushedBy(period), released));
      freed[k] = period;
    } else {
      freed[k] = std::max(released, std::min(laterMin[k], maxEnd));
      released = freed[k];
    }
  }
  return window;
}

// How the packer of buffer `bi` sends its tiles to its reader plans:
// merged, FIFO or windowed (emission order, releases, ring). Returns true
// when the ring had to grow past the buffer's size_tiles because readers
// take the period in pieces that leave nothing to release between them.
bool StreamBuilder::planPackerEmissions(size_t lane) {
  const size_t bi = laneBuf_[lane];
  BufInfo& in = info_[bi];
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> lists;
  std::vector<std::vector<uint32_t>> paths;  // per reader: the relay chain of each chunk
  // Per reader: where each chunk starts in the reader's whole input (all
  // its sources, one round), and that input's length (see the merge below).
  std::vector<std::vector<uint64_t>> clocks;
  std::vector<uint64_t> totals;
  bool anyDirect = false;
  for (size_t pi : laneReaders_[lane]) {
    const Plan& plan = plans_[pi];
    anyDirect |= plan.directDramWrite || (plan.chained && plan.dramOut);
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    std::vector<uint32_t>& chain = paths.emplace_back();
    std::vector<uint64_t>& at = clocks.emplace_back();
    uint64_t pos = 0;
    for (uint64_t r = 0; r < plan.passesPerRound; ++r)
      for (const Chunk& c : plan.chunks) {
        if (c.buf == bi) {
          ranges.push_back({c.offset, c.tiles});
          chain.push_back(c.path);
          at.push_back(pos);
        }
        pos = satAdd(pos, c.tiles);
      }
    totals.push_back(std::max<uint64_t>(pos, 1));
    lists.push_back(std::move(ranges));
  }
  // Where each chunk falls in its reader's input (see the merge below).
  auto sameClock = [&](size_t k) {
    for (size_t j = 0; j < clocks[k].size(); ++j)
      if (static_cast<unsigned __int128>(clocks[k][j]) * totals[0] !=
          static_cast<unsigned __int128>(clocks[0][j]) * totals[k])
        return false;
    return true;
  };
  // Forks that take the same tiles in the same order (through the same
  // relays) at the same point of their inputs share one multicast transfer
  // per chunk (not possible into DRAM: a phase has one destination). At
  // different points (a gather whose consumers start at different
  // sources), one shared transfer would hold the earlier reader until the
  // later one is ready: a deadlock when the later waits on the earlier.
  bool merged = lists.size() > 1 && !anyDirect &&
                std::all_of(lists.begin(), lists.end(), [&](const auto& l) { return l == lists[0]; }) &&
                std::all_of(paths.begin(), paths.end(), [&](const auto& l) { return l == paths[0]; });
  // (Through relay chains the readers must share the transfer: a relay
  // forwards one stream's tiles in order; ethernet.cpp checks that.)
  const bool chainedLane = std::any_of(paths[0].begin(), paths[0].end(), [](uint32_t p) { return p != 0; });
  for (size_t k = 1; merged && laneByClock_[lane] && !chainedLane && k < lists.size(); ++k) merged = sameClock(k);
  std::vector<std::pair<uint64_t, uint64_t>> emissions;
  std::vector<std::pair<size_t, size_t>>& order = packerOrder_[lane]; // (reader, its chunk index)
  order.clear();
  if (merged || lists.size() == 1) {
    emissions = lists[0];
    for (size_t j = 0; j < emissions.size(); ++j) order.push_back({0, j});
  } else {
    // Several pipes read different tiles: interleave them (each pipe keeps
    // its own order) by where each chunk falls in its reader's whole input,
    // as a fraction of that input. Every packer of the epoch orders its
    // sends by this one clock, and every reader receives in increasing
    // clock, so the earliest pending transfer can always go: no cycle of
    // senders and gathering readers waiting on each other (two feeders
    // gathered by several consumers in different orders, output_padding).
    // Ordering by tile offset alone let one packer serve a reader that
    // still waited for another packer's earlier tiles (a deadlock).
    // Ties: the lower tile offset, then the reader's pipe order.
    std::vector<size_t> head(lists.size(), 0);
    auto earlier = [&](size_t a, size_t b) {
      if (!laneByClock_[lane]) return lists[a][head[a]].first < lists[b][head[b]].first;
      unsigned __int128 ca = static_cast<unsigned __int128>(clocks[a][head[a]]) * totals[b];
      unsigned __int128 cb = static_cast<unsigned __int128>(clocks[b][head[b]]) * totals[a];
      if (ca != cb) return ca < cb;
      return lists[a][head[a]].first < lists[b][head[b]].first;
    };
    for (;;) {
      size_t best = lists.size();
      for (size_t k = 0; k < lists.size(); ++k)
        if (head[k] < lists[k].size() && (best == lists.size() || earlier(k, best)))
          best = k;
      if (best == lists.size()) break;
      emissions.push_back(lists[best][head[best]]);
      order.push_back({best, head[best]++});
    }
  }
  uint64_t at = 0;
  bool fifo = true;
  for (auto [off, n] : emissions) {
    fifo &= off == at;
    at += n;
  }
  fifo &= at == in.period;
  packerMerged_[lane] = merged;
  packerWindowed_[lane] = !fifo;
  packerEmissions_[lane] = emissions.size();
  packerFreed_[lane].clear();
  if (fifo) return false;
  const Buffer& packer = bufferAt(static_cast<uint32_t>(bi));
  std::vector<uint64_t> freed;
  uint64_t window = reorderWindow(emissions, in.period, ublockTiles(packer), freed);
  if (!opts_.releaseWindows) {
    // Release only whole periods: the ring holds the whole period.
    std::fill(freed.begin(), freed.end(), 0);
    freed.back() = in.period;
    window = in.period;
  }
  packerFreed_[lane] = std::move(freed);
  // Every lane sends from the packer's one buffer (the operand stream's ring).
  StreamInfo& s = streams_[static_cast<size_t>(in.stream)];
  s.ringTiles = std::max<uint64_t>(s.ringTiles, window);
  return opts_.releaseWindows && !merged && lists.size() > 1 && window > packer.sizeTiles;
}

// Forks that each take the packer's period in big pieces (a multicast to an
// op beside the write of the same tiles into a queue) release nothing until
// both have read a piece: split this buffer's chunks in every reader plan
// into its scatter granules (else ublocks) so the readers' transfers
// interleave. Returns whether anything was split.
bool StreamBuilder::splitPackerChunks(size_t bi) {
  const Buffer& b = bufferAt(static_cast<uint32_t>(bi));
  uint64_t granule = b.scatterGatherNumTiles;
  if (granule == 0) granule = ublockTiles(b);
  bool split = false;
  std::vector<std::vector<Chunk>> splitChunks;
  for (size_t pi : info_[bi].readerPlans) {
    const Plan& plan = plans_[pi];
    std::vector<Chunk>& chunks = splitChunks.emplace_back();
    for (const Chunk& c : plan.chunks) {
      if (c.buf != bi || c.tiles <= granule || c.tiles % granule != 0) {
        chunks.push_back(c);
        continue;
      }
      for (uint64_t o = 0; o < c.tiles; o += granule) chunks.push_back({c.buf, c.offset + o, granule});
      split = true;
    }
    if (satMul(plan.passesPerRound, chunks.size()) > opts_.maxUnrolledTransfers) return false;
  }
  if (!split) return false;
  for (size_t k = 0; k < splitChunks.size(); ++k) plans_[info_[bi].readerPlans[k]].chunks = std::move(splitChunks[k]);
  // The first attempt grew the ring to the whole period: start again.
  streams_[static_cast<size_t>(info_[bi].stream)].ringTiles = b.sizeTiles;
  return true;
}

void StreamBuilder::planLanes(const std::vector<size_t>& lanes) {
  for (size_t lane : lanes) {
    // A second attempt with this buffer's chunks split (below; only for a
    // lane of several readers).
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!planPackerEmissions(lane)) break;
      if (!splitPackerChunks(laneBuf_[lane])) break;
    }
  }
}

bool StreamBuilder::placeEndpoints() {
  size_t errors = diags_.errorCount();
  // Pipes writing DRAM from a single packer: the packer's stream writes.
  for (Plan& plan : plans_) {
    if (plan.dropped || !plan.dramOut) continue;
    uint32_t src = plan.chunks.front().buf;
    plan.directDramWrite = !plan.chained && info_[src].isPacker &&
                           std::all_of(plan.chunks.begin(), plan.chunks.end(),
                                       [&](const Chunk& c) { return c.buf == src; });
  }
  // Packer emission modes.
  // Lanes: a fork gives every reader pipe after the first its own stream
  // over the packer's buffer, so a consumer that stops taking tiles does not
  // starve the others (fork-join graphs).
  for (size_t bi = 0; bi < doc_.buffers.size(); ++bi) {
    BufInfo& in = info_[bi];
    if (!in.isPacker || in.readerPlans.empty()) continue;
    // Readers that are DRAM writes never wait on a join: a packer with fewer
    // than two op readers keeps one lane (its readers interleave or share a
    // multicast on the operand stream, as before), saving streams.
    // A reader that jumps through the period (a TM's gather, a matmul's
    // ublock order) makes its lane's window, and so the packer's ring, as
    // large as the span it jumps over: lanes then only when every reader's
    // own window fits the buffer, or the period is at most twice the buffer
    // (else such forks keep the interleaved lane, whose split granules keep
    // the ring small: output padding's 3072-tile periods). A reader that
    // jumps only within an mblock (a matmul gathering sub-ublocks of a
    // column-ordered producer, read beside an eltwise op that joins the
    // matmul's result) gets its lane: interleaved, the eltwise reader's
    // full input held back the tiles the matmul needed (a hang).
    size_t opReaders = 0;
    bool inOrder = true;
    bool windowsFit = opts_.releaseWindows;
    bool chained = false;  // read through relay chains (ethernet.cpp): lanes by chain, below
    const Buffer& packer = bufferAt(static_cast<uint32_t>(bi));
    for (size_t pi : in.readerPlans) {
      opReaders += !plans_[pi].dramOut;
      for (const Chunk& c : plans_[pi].chunks) chained |= c.buf == bi && c.path != 0;
      uint64_t next = 0;
      bool readerInOrder = true;
      std::vector<std::pair<uint64_t, uint64_t>> emissions;
      for (uint64_t r = 0; r < plans_[pi].passesPerRound && windowsFit; ++r)
        for (const Chunk& c : plans_[pi].chunks)
          if (c.buf == bi) emissions.push_back({c.offset, c.tiles});
      for (const Chunk& c : plans_[pi].chunks) {
        if (c.buf != bi) continue;
        if (c.offset != next % std::max<uint64_t>(in.period, 1)) readerInOrder = false;
        next = c.offset + c.tiles;
      }
      inOrder &= readerInOrder;
      if (!readerInOrder && windowsFit && !emissions.empty()) {
        std::vector<uint64_t> freed;
        windowsFit = reorderWindow(emissions, in.period, ublockTiles(packer), freed) <= packer.sizeTiles;
      }
    }
    // Reader plans per lane.
    std::vector<std::vector<size_t>> lanes;
    if (chained) {
      // One lane for the readers on this chip and one per relay chain (a
      // relay forwards one stream's tiles): readers of one chain that read
      // alike then share one multicast, and cross the link once.
      std::vector<uint32_t> paths;  // lane key, in reader order
      for (size_t pi : in.readerPlans) {
        std::optional<uint32_t> path;
        for (const Chunk& c : plans_[pi].chunks)
          if (c.buf == bi) path = path && *path != c.path ? UINT32_MAX : c.path;
        const size_t k = static_cast<size_t>(std::find(paths.begin(), paths.end(), *path) - paths.begin());
        if (k == paths.size()) {
          paths.push_back(*path);
          lanes.emplace_back();
        }
        lanes[k].push_back(pi);
      }
      if (std::count(paths.begin(), paths.end(), UINT32_MAX)) lanes = {in.readerPlans};  // mixed: one lane
    } else if (opReaders < 2 || !(inOrder || windowsFit || in.period <= 2 * uint64_t{packer.sizeTiles})) {
      lanes = {in.readerPlans};
    } else {
      for (size_t pi : in.readerPlans) lanes.push_back({pi});
    }
    for (size_t k = 0; k < lanes.size(); ++k) {
      const size_t pi = lanes[k].front();
      int stream = in.stream;
      if (k > 0) {
        const Buffer& b = bufferAt(bi);
        stream = newExtraStream(pi, StreamRole::Fork, {{b.core.r, b.core.c}}, b.chipId, b.tileSize, formatOf(b));
        if (stream < 0) return false;
        StreamInfo& f = streams_[static_cast<size_t>(stream)];
        f.buf = static_cast<int>(bi);
        const Pipe& p = pipeOfPlan(pi);
        f.what = "stream " + std::to_string(f.name.streamId) + " (fork stream of " + bufName(b) + " for pipe " +
                 std::to_string(p.id) + ")";
        f.comment = "op '" + b.mdOpName + "' output " + std::to_string(b.id - 16) + " fork stream for pipe " +
                    std::to_string(p.id) + " (" + bufName(b) + ") on core " + coreText(b.core.r, b.core.c);
      }
      for (size_t r : lanes[k]) laneOf_[{static_cast<uint32_t>(bi), r}] = laneBuf_.size();
      laneBuf_.push_back(static_cast<uint32_t>(bi));
      laneStream_.push_back(stream);
      laneReaders_.push_back(lanes[k]);
    }
  }
  packerWindowed_.assign(laneBuf_.size(), false);
  packerMerged_.assign(laneBuf_.size(), false);
  packerEmissions_.assign(laneBuf_.size(), 0);
  packerFreed_.assign(laneBuf_.size(), {});
  packerOrder_.assign(laneBuf_.size(), {});
  laneByClock_.assign(laneBuf_.size(), false);
  std::vector<size_t> all(laneBuf_.size());
  for (size_t lane = 0; lane < all.size(); ++lane) all[lane] = lane;
  planLanes(all);
  // Lanes whose send order would deadlock against the readers' gather
  // order are planned again by the readers' clock (order_check.cpp), with
  // every other lane of their buffer, until none is stuck.
  for (;;) {
    std::vector<size_t> stuck = orderDeadlockLanes();
    std::set<uint32_t> bufs;
    for (size_t lane : stuck)
      if (!laneByClock_[lane]) bufs.insert(laneBuf_[lane]);
    if (bufs.empty()) break;
    std::vector<size_t> again;
    for (size_t lane = 0; lane < laneBuf_.size(); ++lane)
      if (bufs.count(laneBuf_[lane])) {
        laneByClock_[lane] = true;
        again.push_back(lane);
      }
    for (uint32_t b : bufs) streams_[static_cast<size_t>(info_[b].stream)].ringTiles = bufferAt(b).sizeTiles;
    planLanes(again);
  }
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    Plan& plan = plans_[pi];
    if (plan.dropped) continue;
    const Buffer& firstIn = bufferAt(plan.chunks.front().buf);
    for (const auto& g : plan.groups) {
      std::vector<int> ss;
      for (uint32_t b : g)
        if (info_[b].kind == BufKind::Operand) ss.push_back(info_[b].stream);
      plan.groupStreams.push_back(std::move(ss));
    }
    bool hasDram = false;  // read here (chained DRAM chunks are read by their first relay)
    for (size_t k = 0; k < plan.chunks.size(); ++k)
      if (info_[plan.chunks[k].buf].kind == BufKind::Dram) {
        hasDram |= plan.chunks[k].path == 0;
        plan.lastChunkOf[plan.chunks[k].buf] = k;
      }
    if (!plan.dramOut) {
      size_t outs = 0;
      for (const auto& g : plan.groups) outs += g.size();
      if (hasDram && plan.dramRelayCore) {
        plan.dramReader = newExtraStream(pi, StreamRole::DramReader, {*plan.dramRelayCore}, bufferAt(plan.groups[0][0]).chipId,
                                         firstIn.tileSize, formatOf(firstIn));
      } else if (hasDram) {
        if (outs == 1) {
          plan.directDramReader = plan.groupStreams[0][0];
        } else {
          std::vector<std::pair<uint32_t, uint32_t>> cores;
          for (const auto& g : plan.groups)
            for (uint32_t b : g) cores.push_back({bufferAt(b).core.r, bufferAt(b).core.c});
          plan.dramReader = newExtraStream(pi, StreamRole::DramReader, cores, bufferAt(plan.groups[0][0]).chipId,
                                           firstIn.tileSize, formatOf(firstIn));
        }
      }
    } else if (!plan.chained) {  // a chained write is the last relay's (ethernet.cpp)
      if (plan.directDramWrite) {
        plan.dramWriter = laneStream(plan.chunks.front().buf, pi);
      } else {
        std::vector<std::pair<uint32_t, uint32_t>> cores;
        for (const Chunk& c : plan.chunks) cores.push_back({bufferAt(c.buf).core.r, bufferAt(c.buf).core.c});
        plan.dramWriter = newExtraStream(pi, StreamRole::DramWriter, cores, firstIn.chipId, firstIn.tileSize,
                                         formatOf(firstIn));
      }
    }
  }
  return diags_.errorCount() == errors;
}

// ---------------------------------------------------------------------------
// Transfers.
// ---------------------------------------------------------------------------
// Beyond this many the transfer list grows as it is built (the unroll
// limit allows millions; most epochs need thousands).
constexpr uint64_t kMaxReservedTransfers = uint64_t{1} << 18;

bool StreamBuilder::generate() {
  dramReaders_.assign(doc_.buffers.size(), {});
  std::vector<std::vector<size_t>> byComponent(componentRounds_.size());
  for (size_t pi = 0; pi < plans_.size(); ++pi)
    if (!plans_[pi].dropped) byComponent[static_cast<size_t>(plans_[pi].component)].push_back(pi);
  // Room for every transfer up front (at most one per chunk and pass; forks
  // share): growing the vector moved them all, a tenth of a large epoch.
  uint64_t expected = 0;
  for (size_t pi = 0; pi < plans_.size(); ++pi)
    if (!plans_[pi].dropped)
      expected = satAdd(expected, satMul(satMul(plans_[pi].passesPerRound, plans_[pi].chunks.size()),
                                         componentRounds_[static_cast<size_t>(plans_[pi].component)]));
  transfers_.reserve(static_cast<size_t>(std::min<uint64_t>(expected, kMaxReservedTransfers)));
  for (size_t k = 0; k < byComponent.size(); ++k) {
    const auto& comp = byComponent[k];
    uint64_t rounds = componentRounds_[k];
    // Bound the unrolled size before building anything.
    uint64_t perRound = 0;
    for (size_t pi : comp) perRound = satAdd(perRound, satMul(plans_[pi].passesPerRound, plans_[pi].chunks.size()));
    if (rounds != 0 && perRound > opts_.maxUnrolledTransfers / rounds) {
      const Pipe& p = pipeOfPlan(comp.front());
      pipeError("phase-limit", p,
                std::to_string(rounds) + " rounds of " + std::to_string(perRound) +
                    " transfers exceed the unroll limit of " + std::to_string(opts_.maxUnrolledTransfers) +
                    " (the rounds do not repeat with a shorter cycle)");
      return false;
    }
    for (size_t pi : comp) {
      const Plan& plan = plans_[pi];
      auto setComponent = [&](int s) {
        if (s >= 0) streams_[static_cast<size_t>(s)].component = static_cast<int>(k);
      };
      for (const Chunk& c : plan.chunks) {
        if (info_[c.buf].isPacker) setComponent(laneStream(c.buf, pi));
        for (int s : relayStreams(c.path)) setComponent(s);
      }
      for (const auto& g : plan.groupStreams)
        for (int s : g) setComponent(s);
      setComponent(plan.dramReader);
      setComponent(plan.dramWriter);
    }
    for (uint64_t round = 0; round < rounds; ++round) {
      std::map<std::pair<size_t, uint64_t>, size_t> merged; // (lane, emission) -> transfer
      // A relay reading DRAM for several plans pops the slot once a round:
      // (relay stream, DRAM buffer) -> its transfer that ends the period so far.
      std::map<std::pair<int, int>, size_t> relayDone;
      // Packer transfers of this round by (lane, reader, chunk): they join
      // the lane's list in the lane's emission order once the round is built.
      std::map<std::tuple<size_t, size_t, size_t>, size_t> pending;
      std::set<size_t> packers;  // lanes
      for (size_t pi : comp) {
        const Plan& plan = plans_[pi];
        std::map<uint32_t, uint64_t> emission; // packer -> index of its chunk in this plan's round
        for (uint64_t r = 0; r < plan.passesPerRound; ++r) {
          uint64_t pass = round * plan.passesPerRound + r;
          size_t g = static_cast<size_t>(pass % plan.groups.size());
          for (size_t ci = 0; ci < plan.chunks.size(); ++ci) {
            const Chunk& ch = plan.chunks[ci];
            const BufInfo& in = info_[ch.buf];
            // Receivers of this chunk and their roles.
            std::vector<int> dest;
            std::vector<Dst> roles;
            Dst senderDst = Dst::Remote;
            int sender = -1;
            if (in.kind == BufKind::Dram) {
              std::vector<int> relays = relayStreams(ch.path);
              if (!relays.empty()) {  // the chain's first relay reads DRAM (ethernet.cpp)
                sender = relays.front();
                relays.erase(relays.begin());
                for (int s : plan.groupStreams[g]) dest.push_back(s), roles.push_back(Dst::Local);
              } else {
                sender = plan.directDramReader >= 0 ? plan.directDramReader : plan.dramReader;
                if (plan.directDramReader >= 0) senderDst = Dst::Local;
                else
                  for (int s : plan.groupStreams[g]) dest.push_back(s), roles.push_back(Dst::Local);
              }
              Transfer t;
              t.sender = sender;
              t.plan = pi;
              t.tiles = ch.tiles;
              t.src = Src::Dram;
              t.dramIn = static_cast<int>(ch.buf);
              t.periodTiles = in.period;
              t.offset = ch.offset;
              t.done = (in.popped || in.ramStreamed) && r + 1 == plan.passesPerRound && plan.lastChunkOf.at(ch.buf) == ci;
              t.dst = senderDst;
              t.dest = dest;
              t.destRole = roles;
              t.destPlan.assign(dest.size(), pi);
              t.relays = std::move(relays);
              size_t id = transfers_.size();
              if (t.done && ch.path != 0) {
                auto [it, fresh] = relayDone.emplace(std::pair{sender, t.dramIn}, id);
                if (!fresh) transfers_[std::exchange(it->second, id)].done = false;
              }
              transfers_.push_back(std::move(t));
              addItem(sender, id);
              for (int s : dest) addItem(s, id);
              if (in.popped) {
                auto& readers = dramReaders_[ch.buf];
                if (std::find(readers.begin(), readers.end(), sender) == readers.end()) readers.push_back(sender);
              }
              continue;
            }
            // A packer.
            const size_t lane = laneOf_.at({ch.buf, pi});
            sender = laneStream_[lane];
            if (ch.path != 0) {
              // Through relays: the last writes DRAM, or sends to the outputs.
              if (!plan.dramOut)
                for (int s : plan.groupStreams[g]) dest.push_back(s), roles.push_back(Dst::Local);
            } else if (plan.dramOut) {
              if (plan.dramWriter == sender) senderDst = Dst::DramOut;
              else dest.push_back(plan.dramWriter), roles.push_back(Dst::DramOut);
            } else {
              for (int s : plan.groupStreams[g]) dest.push_back(s), roles.push_back(Dst::Local);
            }
            uint64_t j = emission[ch.buf]++;
            const auto& readers = laneReaders_[lane];
            size_t reader = packerMerged_[lane] ? 0 : static_cast<size_t>(std::find(readers.begin(), readers.end(), pi) - readers.begin());
            if (packerMerged_[lane]) {
              auto it = merged.find({lane, j});
              if (it != merged.end()) {
                Transfer& t = transfers_[it->second];
                for (size_t d = 0; d < dest.size(); ++d) {
                  t.dest.push_back(dest[d]);
                  t.destRole.push_back(roles[d]);
                  t.destPlan.push_back(pi);
                  addItem(dest[d], it->second);
                }
                continue;
              }
            }
            Transfer t;
            t.sender = sender;
            t.plan = pi;
            t.tiles = ch.tiles;
            t.src = Src::Packer;
            if (packerWindowed_[lane]) {
              t.periodTiles = in.period;
              t.offset = ch.offset;
            }
            t.dst = senderDst;
            if (senderDst == Dst::DramOut) t.dramOut = static_cast<int>(plan.groups[0][0]);
            t.dest = dest;
            t.destRole = roles;
            t.destPlan.assign(dest.size(), pi);
            t.relays = relayStreams(ch.path);
            if (!t.relays.empty() && plan.dramOut) t.relayDramOut = static_cast<int>(plan.groups[0][0]);
            size_t id = transfers_.size();
            transfers_.push_back(std::move(t));
            pending[{lane, reader, j}] = id;
            packers.insert(lane);
            for (int s : dest) addItem(s, id);
            if (packerMerged_[lane]) merged[{lane, j}] = id;
          }
        }
      }
      for (size_t b : packers) {
        const auto& order = packerOrder_[b];
        for (size_t e = 0; e < order.size(); ++e) {
          auto it = pending.find({b, order[e].first, order[e].second});
          if (it == pending.end()) continue; // cannot happen: every reader reads its chunks each round
          Transfer& t = transfers_[it->second];
          if (packerWindowed_[b]) {
            t.done = e + 1 == order.size();
            t.freedBefore = e == 0 ? 0 : packerFreed_[b][e - 1];
            t.freed = packerFreed_[b][e];
          }
          addItem(laneStream_[b], it->second);
        }
      }
    }
  }
  return true;
}

// Consecutive transfers with the same participants, adjacent in every
// participant's list and contiguous in their source, become one.
void StreamBuilder::mergeTransfers() {
  for (size_t ti = 0; ti < transfers_.size(); ++ti) {
    Transfer& t = transfers_[ti];
    if (t.absorbed) continue;
    for (;;) {
      size_t next = SIZE_MAX;
      bool ok = true;
      for (auto [s, p] : t.pos) {
        const auto& items = streams_[static_cast<size_t>(s)].items;
        size_t idx = p + 1 + t.absorbedCount;
        if (idx >= items.size()) {
          ok = false;
          break;
        }
        if (next == SIZE_MAX) next = items[idx];
        else if (next != items[idx]) ok = false;
      }
      if (!ok || next == SIZE_MAX || next == ti) break;
      Transfer& u = transfers_[next];
      if (u.absorbed || u.pos.size() != t.pos.size() || u.sender != t.sender || u.plan != t.plan || u.src != t.src ||
          u.dst != t.dst || u.dramIn != t.dramIn || u.dramOut != t.dramOut || u.dest != t.dest ||
          u.destRole != t.destRole || u.destPlan != t.destPlan || u.periodTiles != t.periodTiles ||
          u.relays != t.relays || u.relayDramOut != t.relayDramOut)
        break;
      if (t.periodTiles != 0 && t.done) break;
      if (t.src == Src::Packer && t.freed != t.freedBefore) break; // would need a larger window
      if (t.tiles + u.tiles > 0xFFFFFFFFull) break;
      bool contiguous = t.chunkOffsets.empty() && u.offset == t.offset + t.tiles;
      if (t.periodTiles != 0 && !contiguous) {
        // A chunk list: same chunk size, one offset per chunk.
        uint64_t chunk = t.chunkOffsets.empty() ? t.tiles : t.chunkTiles;
        if (!opts_.chunkLists || u.tiles != chunk) break;
        if (t.chunkOffsets.empty()) {
          t.chunkOffsets.push_back(t.offset);
          t.chunkTiles = chunk;
        }
        t.chunkOffsets.push_back(u.offset);
      }
      t.tiles += u.tiles;
      t.done = u.done;
      t.freed = u.freed;
      u.absorbed = true;
      t.absorbedCount += 1 + u.absorbedCount; // u may have absorbed its own successors already
    }
  }
}

} // namespace tessera::pipegen::detail
