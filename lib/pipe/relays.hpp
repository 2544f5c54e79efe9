// Relay chains between chips: how the epoch builder (epoch_builder.hpp) makes a
// buffer on one chip readable on another (docs/cluster.md "The data path",
// docs/net2pipe.md "Several chips"). Internal to lib/pipe.
#pragma once
#include "pipe/builder_internal.hpp"
#include "pipe/ethernet.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tessera::pipe::build {

class RelayChains {
public:
  // Reports an error (the builder adds the epoch note and fails the epoch).
  using FailFn = std::function<void(const std::string& rule, SourceLoc loc, const std::string& message,
                                    const std::vector<std::string>& notes)>;

  // Adds buffers to `bufs` and pipes to `pending` (the builder's), each
  // relay carrying `inputCount` inputs per epoch.
  RelayChains(Shared& sh, std::vector<Buf>& bufs, std::vector<PendingPipe>& pending, int64_t inputCount, FailFn fail);

  bool multiChip() const { return sh_.out.multiChip; }
  // Where a buffer sits, for comments and messages ("chip 1 ethernet chan 0
  // [y=0, x=9]", "[r=1, c=2]").
  std::string where(uint32_t h) const;

  // Every source tile of `lists` on another chip than `chip` (padding
  // aside) is read from its replica on `chip` instead, the chain built on
  // first use (its pipes appended to `pending`), for `op`'s input `input`,
  // or for the write of `queue` by `op` when that is not empty. False after
  // reporting pipe-no-route (or pipe-ethernet) at `loc`.
  bool onChip(std::vector<std::vector<SourceTile>>& lists, uint32_t chip, const netlist::Op& op, int input, SourceLoc loc,
              const std::string& queue = "");

  // An ethernet_datacopy on chip `src`: per core k (row-major) an input
  // relay (`ins[i][k]`, on the ingress channel's ethernet core) and an
  // output buffer (`outs[k]`, buffer_type ethernet, on the destination
  // chip's egress channel), joined by a relay chain whose pipes go to
  // `pipes` (the builder adds them after the op's input pipes).
  bool ethernetDatacopy(const netlist::Op& op, uint32_t src, std::vector<std::vector<uint32_t>>& ins,
                        std::vector<uint32_t>& outs, std::vector<PendingPipe>& pipes);

  // A pipe-no-route (or a PCIe relay without a core) was reported (an
  // unread output then is no second error).
  bool unrouted() const { return unrouted_; }

  // A relay or ethernet_datacopy output: a buffer on an ethernet core.
  // (Without ethernet: a PCIe relay on a worker core, read alike.)
  bool onEthernet(uint32_t h) const { return bufs_[h].doc.chainRelay(); }

  // Reorder windows of chain origins. pipegen folds a read of a relay back
  // through its chain to the buffer the chain starts from (docs/pipegen.md
  // "Relay chains"): that buffer's stream sends the tiles in the reader's
  // order and every relay is a FIFO. So a packer at the start of a chain
  // keeps the window of each pipe that reads it through the chain, and the
  // relays keep none (a DRAM origin needs none). Grows Buf::window of the
  // origins read by `pending` (after time multiplexing: each slot re-reads).
  void originWindows(const std::vector<PendingPipe>& pending);

private:
  void fail(const std::string& rule, SourceLoc loc, const std::string& message,
            const std::vector<std::string>& notes = {}) {
    fail_(rule, loc, message, notes);
  }
  std::optional<CoreCoord> ethCore(EthEndpoint at, SourceLoc loc);
  std::optional<uint32_t> ethBuffer(const Buffer& like, int64_t granule, EthEndpoint at, BufferType type,
                                    const netlist::Op* op, int category, const std::string& comment, SourceLoc loc);
  PendingPipe chainPipe(uint32_t from, uint32_t to, const netlist::Op* op, int input, const std::string& what);
  int64_t granuleOf(uint32_t h) const;
  // `who` names the reading pipe (readerKey and the list): each its own chains.
  std::optional<uint32_t> relayTo(uint32_t src, uint32_t chip, const netlist::Op& forOp, int input, SourceLoc loc,
                                  const std::string& queue, const std::string& who);
  // The relay on `chip` that receives `tiles` (buffers of one other chip),
  // gathered in that order on their chip: the chain built on first use.
  std::optional<uint32_t> gatherTo(const std::vector<SourceTile>& tiles, uint32_t chip, const netlist::Op& forOp,
                                   int input, SourceLoc loc, const std::string& queue, const std::string& who);
  // A chain carrying `first` (tiles of buffers on `like`'s chip, in order;
  // `like` gives the relays' shape, `source` names it in comments) to
  // `chip`; `known(c)` is a relay on chip c already carrying them,
  // `made(c, h)` records one.
  std::optional<uint32_t> chain(const std::vector<SourceTile>& first, const Buffer& like, int64_t granule, uint32_t chip,
                                const netlist::Op& forOp, int input, SourceLoc loc, const std::string& queue,
                                const std::string& source, const std::function<std::optional<uint32_t>(uint32_t)>& known,
                                const std::function<void(uint32_t, uint32_t)>& made);
  // Without ethernet (grayskull): a relay on an idle worker core of `chip`
  // (no op of the netlist on that chip uses it, no other PCIe relay took it).
  std::optional<uint32_t> pcieBuffer(const Buffer& like, int64_t granule, uint32_t chip, const netlist::Op* op,
                                     const std::string& comment, SourceLoc loc);
  // What both kinds of relay share (shape of `like`, packer-like reads);
  // the caller places it, then addRelay appends it.
  Buf relayLike(const Buffer& like, int64_t granule, BufferType type, const netlist::Op* op, int category,
                const std::string& comment);
  uint32_t addRelay(Buf b);
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> pcieTaken_; // (chip, r, c)
  void noRoute(uint32_t from, uint32_t to, SourceLoc loc, const std::string& what);
  // Per tile of ethernet buffer `h`, the tile it carries from its chain's
  // origin; empty when its writer is not one pass of its period.
  const std::vector<SourceTile>& origins(uint32_t h, const std::map<uint32_t, const PendingPipe*>& writers,
                                         std::map<uint32_t, std::vector<SourceTile>>& memo, int depth);

  Shared& sh_;
  std::vector<Buf>& bufs_;
  std::vector<PendingPipe>& pending_;
  int64_t inputCount_;
  FailFn fail_;
  LinkPlanner links_;
  bool unrouted_ = false;
  static std::string readerKey(const netlist::Op& op, int input, const std::string& queue);
  // (source buffer, chip, reader) -> its replica there
  std::map<std::tuple<uint32_t, uint32_t, std::string>, uint32_t> relayed_;
  // (tiles, chip, reader) -> relay there
  std::map<std::tuple<std::vector<SourceTile>, uint32_t, std::string>, uint32_t> gathered_;
  std::map<EthEndpoint, uint32_t> dramWriters_; // last relays of chains into queues, per ethernet core
  std::map<EthEndpoint, uint32_t> dramReaders_; // first relays of chains from DRAM, per ethernet core
  // An ethernet core of `chip` with room whose DRAM streams of one kind
  // (`count`) are below `limit`: `at` itself when it is, else the first
  // such channel; `at` when none.
  EthEndpoint spareFor(EthEndpoint at, std::map<EthEndpoint, uint32_t>& count, uint32_t limit, uint64_t tileBytes);
};

} // namespace tessera::pipe::build
