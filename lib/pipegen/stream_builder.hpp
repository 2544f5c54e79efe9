// pipegen's stream builder, shared by its parts (internal to lib/pipegen).
// StreamBuilder::run() chains the phases over one pipegen.yaml:
//   stream_plan.cpp      buffer kinds, padding, pipes -> plans, relay folding,
//                        passes and rounds, components
//   stream_schedule.cpp  endpoints (packer lanes, DRAM readers/writers, extra
//                        streams) and the transfers
//   stream_emit.cpp      phases per stream and the L1 of every ring
//   ethernet.cpp         the relay chains of several chips; pcie.cpp: pipes
//                        crossing chips through PCIe; order_check.cpp
//   stream_builder.cpp   run(), generateBlob and the shared lookups
//
// Vocabulary (docs/pipegen.md):
// - chunk: one input_list entry: `tiles` tiles at `offset` of the current
//   period of one buffer.
// - pass: one walk over a pipe's input_list; pass k goes to output group
//   k % G (G inner lists of a nested output_list, else 1).
// - round: pipe_periodic_repeat passes (at least 1); every popped source
//   (packer, DRAM queue) moves to its next period after a round.
// - transfer: tiles moving from one sending stream to its receivers (or to
//   or from DRAM) in one phase of each stream involved.
// - component: pipes that share a packer (a fork) and so must be unrolled
//   together; all its pipes have the same number of rounds.
#pragma once
#include "pipegen/pipegen.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace tessera::pipegen::detail {

using pipe::Buffer;
using pipe::BufferType;
using pipe::Pipe;
using pipe::PipegenYaml;

using pipe::kDramCore;

inline SourceLoc locOf(const pipe::SourcePos& p) { return {p.line, p.column}; }

inline std::string bufName(const Buffer& b) { return "buffer_" + std::to_string(b.uniqid); }
// Tiles a packer's kernel writes at a time: its ublock (1 when not given).
inline uint64_t ublockTiles(const Buffer& b) { return std::max<uint64_t>(1, uint64_t{b.ublockRt} * b.ublockCt); }
inline std::string coreText(uint32_t r, uint32_t c) { return "[" + std::to_string(r) + ", " + std::to_string(c) + "]"; }

enum class BufKind {
  Operand,  // unpacker, packer, intermediate, gradient_op: an operand buffer on a core
  Relay,    // prolog_relay / relay: folded away (docs/pipegen.md, "Relays")
  EthRelay, // relay / ethernet on an ethernet core (ethernet_chan): a relay stream of a chain (ethernet.cpp)
  Dram,     // data in DRAM: dram_io, dram_prolog, padding, anything at [255, 255]
  Other,    // anything else on a core (not usable in pipes)
};

struct BufInfo {
  BufKind kind = BufKind::Other;
  bool popped = false;      // Dram: reads pop queue slots; Operand packers: always consumed
  uint64_t period = 0;      // tiles of one period (slot for DRAM)
  int stream = -1;          // Operand, EthRelay: its stream
  std::vector<size_t> readerPlans; // plans reading it, in pipe order
  int writerPipe = -1;      // pipe whose output it is
  bool isPacker = false;
  bool isReceiver = false;  // unpacker
  bool isIntermediate = false;  // intermediate or gradient_op: no pipes, the kernel's own buffer
  bool padding = false;         // Dram: constant tiles, no memory
  bool ramLike = false;         // Dram: no pointer updates (RAM, prologue, epilogue)
  bool ramStreamed = false;     // Dram: a RAM streamed (not a prologue): each round ends its period, where the
                                // device steps the read pointer by the header's rd_autoinc
};

struct Chunk {
  uint32_t buf = 0;
  uint64_t offset = 0;
  uint64_t tiles = 0;
  // The ethernet relays the tiles pass through on their way from `buf` to
  // the pipe's outputs: an index into StreamBuilder::paths_ (0: none).
  uint32_t path = 0;
};

struct Plan {
  size_t pipe = 0;
  std::vector<Chunk> chunks;                 // one pass
  std::vector<std::vector<uint32_t>> groups; // output buffers per group
  uint64_t passesPerRound = 1;               // pipe_periodic_repeat (at least 1), times a folded relay's
  uint64_t rounds = 0;
  uint64_t passTiles = 0;
  bool dramOut = false;
  bool dropped = false;                      // folded into its readers (relay input pipes)
  bool directDramWrite = false;              // dramOut from one packer: its stream writes DRAM
  bool ethPipe = false;                      // crosses chips: one ethernet relay to another (ethernet.cpp)
  bool chained = false;                      // some chunk comes through ethernet relays
  int component = -1;
  // Endpoints.
  int directDramReader = -1;                 // receiver stream reading DRAM itself
  int dramReader = -1;                       // extra stream reading DRAM and sending on
  int dramWriter = -1;                       // stream writing the DRAM output
  // Tessera's files: the core of a folded `relay` buffer this plan's DRAM
  // tiles came through; its DRAM reader stream runs there (net2pipe relays
  // DRAM reads of a core short of DRAM input streams).
  std::optional<std::pair<uint32_t, uint32_t>> dramRelayCore;
  std::vector<std::vector<int>> groupStreams;
  std::map<uint32_t, size_t> lastChunkOf;    // DRAM buffer -> index of its last chunk in a pass
};

enum class Src { Packer, Dram };
enum class Dst { Local, Remote, DramOut };

struct Transfer {
  int sender = -1;
  size_t plan = 0;
  uint64_t tiles = 0;
  Src src = Src::Packer;
  int dramIn = -1;             // Dram: buffer index
  uint64_t periodTiles = 0;    // windowed (DRAM always, packers when not FIFO)
  uint64_t offset = 0;
  bool done = false;
  uint64_t freedBefore = 0;    // windowed packers: tiles of the period released before / after this transfer
  uint64_t freed = 0;
  std::vector<uint64_t> chunkOffsets; // --chunk-lists: the chunks of `chunkTiles` tiles this transfer sends
  uint64_t chunkTiles = 0;
  Dst dst = Dst::Local;
  int dramOut = -1;            // DramOut: buffer index
  std::vector<int> dest;       // Remote: receivers
  std::vector<Dst> destRole;   // per receiver: Local or DramOut (a writer stream)
  std::vector<size_t> destPlan; // per receiver: its plan (forks merge several pipes into one transfer)
  // Relay streams between the sender and `dest`, in order (a chain over
  // ethernet); with relayDramOut >= 0 the last one writes that DRAM buffer
  // and `dest` is empty.
  std::vector<int> relays;
  int relayDramOut = -1;
  // Position of this transfer in each participant's item list.
  std::vector<std::pair<int, size_t>> pos;
  bool absorbed = false;
  size_t absorbedCount = 0;
};

// Fork: a packer read by several pipes sends each pipe's tiles from its own
// stream over the packer's buffer (BUDA's fork streams); the first pipe keeps
// the operand stream, the others get a Fork stream on the packer's core.
// Relay: the stream of a relay buffer on an ethernet core (ethernet.cpp).
enum class StreamRole { Operand, DramReader, DramWriter, Fork, Relay };

// A stream being built: where it runs, what it sends, its transfers.
struct StreamInfo {
  blob::StreamName name;
  uint32_t r = 0, c = 0;
  int buf = -1;                 // Operand streams
  size_t plan = 0;              // extra streams
  StreamRole role = StreamRole::Operand;
  uint32_t msgSize = 0;
  uint32_t dataFormat = 0;
  uint64_t ringTiles = 0;
  int component = -1;
  std::vector<size_t> items;    // transfers, in this stream's order
  std::string comment;
  SourceLoc loc;                // where to point diagnostics about it
  std::string what;             // for L1 notes
  uint32_t bufAddr = 0, bufSize = 0;
  bool eth = false;             // on an ethernet core: r, c are its NOC y, x
  uint32_t ethChan = 0;
};

// A worker (logical r, c) or an ethernet core (eth = 1, NOC y, x).
struct CoreKey {
  uint32_t chip, r, c;
  uint32_t eth = 0;
  auto operator<=>(const CoreKey&) const = default;
};

inline uint64_t gcd64(uint64_t a, uint64_t b) { return std::gcd(a, b); }
inline uint64_t lcm64(uint64_t a, uint64_t b) { return a / std::gcd(a, b) * b; }
// Saturating arithmetic: absurd inputs give absurd numbers, never wrapped ones.
inline uint64_t satMul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline uint64_t satAdd(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
constexpr size_t kMaxFoldedChunks = 1'000'000;

class StreamBuilder {
public:
  StreamBuilder(const PipegenYaml& doc, const SocDescriptor& soc, DiagnosticEngine& diags, const GenerateOptions& opts)
      : doc_(doc), soc_(soc), diags_(diags), opts_(opts), info_(doc.buffers.size()) {}

  std::optional<Generated> run();

private:
  bool classifyBuffers();
  bool placePadding();
  bool makePlans();
  // ethernet.cpp: buffers on ethernet cores and the chains through them.
  bool classifyEthernetBuffer(size_t bi);
  bool classifyPcieRelay(size_t bi);
  bool checkPipeChips(Plan& plan);
  // pcie.cpp: pipes crossing chips through PCIe (host memory, mmio_pipe).
  // A pipe whose core buffers are on one chip and whose other buffers are
  // host memory or (mmio_pipe) other chips' DRAM: true; nullopt: the
  // ethernet rules apply; false: reported.
  std::optional<bool> checkPcieChips(const Plan& plan, const std::set<uint32_t>& ins, const std::set<uint32_t>& outs);
  bool foldEthernetChains();
  bool expandRelay(uint32_t relay, uint64_t offset, uint64_t tiles, const std::vector<uint32_t>& after, size_t plan,
                   size_t depth, std::vector<Chunk>& out);
  bool placeRelayStreams();
  bool checkChainedPlans();
  bool orderRelayItems();
  int emitRelayPhase(const Transfer& t, size_t stream, blob::StreamPhase& ph);
  uint32_t pathId(const std::vector<uint32_t>& relays);
  uint32_t joinPaths(uint32_t first, uint32_t second);
  std::vector<int> relayStreams(uint32_t path) const;
  std::string ethCoreText(const Buffer& b) const;
  const Pipe& pipeWriting(uint32_t buf) const { return doc_.pipes[static_cast<size_t>(info_[buf].writerPipe)]; }
  bool foldRelays();
  bool countPasses();
  bool makeComponents();
  bool placeEndpoints();
  bool planPackerEmissions(size_t lane);
  bool splitPackerChunks(size_t bi);
  void planLanes(const std::vector<size_t>& lanes);
  std::vector<size_t> orderDeadlockLanes() const;
  bool generate();
  void mergeTransfers();
  bool emitPhases(Generated& out);
  bool allocateL1(Generated& out);

  const Buffer& bufferAt(size_t i) const { return doc_.buffers[i]; }
  const Pipe& pipeOfPlan(size_t planIndex) const { return doc_.pipes[plans_[planIndex].pipe]; }
  std::string opText(const Buffer& b) const {
    return std::string(info_[&b - doc_.buffers.data()].kind == BufKind::Dram ? "queue '" : "op '") + b.mdOpName + "'";
  }
  DiagnosticEngine::Builder bufError(const std::string& rule, const Buffer& b, const std::string& msg) {
    return diags_.error(rule, locOf(b.pos), bufName(b) + " (" + opText(b) + "): " + msg);
  }
  DiagnosticEngine::Builder pipeError(const std::string& rule, const Pipe& p, const std::string& msg) {
    return diags_.error(rule, locOf(p.pos), "pipe " + std::to_string(p.id) + ": " + msg);
  }
  DiagnosticEngine::Builder noteBuf(DiagnosticEngine::Builder d, const Buffer& b) {
    const BufKind kind = info_[&b - doc_.buffers.data()].kind;
    return d.note(locOf(b.pos), bufName(b) + ": " + opText(b) +
                                    (kind == BufKind::Dram       ? std::string(" in DRAM")
                                     : kind == BufKind::EthRelay ? " on " + ethCoreText(b)
                                                                 : " on core " + coreText(b.core.r, b.core.c)));
  }
  std::optional<uint32_t> resolve(uint64_t id, uint64_t& offset) const;
  std::optional<blob::StreamName> nocName(uint32_t chip, uint32_t r, uint32_t c, uint32_t streamId) const;
  int newExtraStream(size_t plan, StreamRole role, const std::vector<std::pair<uint32_t, uint32_t>>& cores,
                     uint32_t chip, uint32_t tileSize, uint32_t format);
  uint32_t formatOf(const Buffer& b) const;
  // The NOC address of DRAM buffer `b` for a stream on `chip` (another
  // chip's DRAM: through the PCIe core's peer window, pcie.cpp).
  uint64_t dramAddr(const Buffer& b, uint32_t chip) const;
  uint64_t dramAddr(const Buffer& b) const { return dramAddr(b, b.chipId); }
  void addItem(int stream, size_t t) {
    transfers_[t].pos.push_back({stream, streams_[stream].items.size()});
    streams_[stream].items.push_back(t);
  }

  const PipegenYaml& doc_;
  const SocDescriptor& soc_;
  DiagnosticEngine& diags_;
  const GenerateOptions& opts_;
  std::vector<BufInfo> info_;
  std::map<uint64_t, uint32_t> byId_;
  std::vector<Plan> plans_;
  std::vector<StreamInfo> streams_;
  std::map<CoreKey, std::set<uint32_t>> usedIds_;
  std::vector<Transfer> transfers_;
  std::vector<uint64_t> componentMultiplier_;
  std::vector<uint64_t> componentRounds_;     // rounds generated per component
  std::vector<std::vector<int>> dramReaders_; // by buffer: streams that read it with pops, first-seen order
  std::map<uint64_t, uint64_t> paddingAddr_;  // padding buffer uniqid -> NOC address of its constant tile
  // Chains of ethernet relays (buffer indices, data-flow order); paths_[0]
  // is the empty path.
  std::vector<std::vector<uint32_t>> paths_{{}};
  std::map<std::vector<uint32_t>, uint32_t> pathIds_;
  // Packer lanes: the streams sending a packer's tiles. One lane per packer,
  // or, for a fork (several reader pipes), one lane per reader pipe, each its
  // own stream over the packer's buffer with its own read pointer.
  std::vector<uint32_t> laneBuf_;            // by lane: the packer buffer
  std::vector<bool> laneByClock_;            // by lane: sends ordered by the readers' clock (order_check.cpp)
  std::vector<int> laneStream_;              // by lane: its stream
  std::vector<std::vector<size_t>> laneReaders_; // by lane: reader plans
  std::map<std::pair<uint32_t, size_t>, size_t> laneOf_; // (packer buffer, plan) -> lane
  std::vector<bool> packerWindowed_;  // by lane
  std::vector<bool> packerMerged_;    // by lane
  std::vector<size_t> packerEmissions_; // by lane: emissions per round
  std::vector<std::vector<uint64_t>> packerFreed_; // by lane: windowed: tiles released after each emission
  std::vector<std::vector<std::pair<size_t, size_t>>> packerOrder_; // by lane: emission order (reader, chunk)
  int laneStream(uint32_t buf, size_t plan) const {
    auto it = laneOf_.find({buf, plan});
    return it == laneOf_.end() ? info_[buf].stream : laneStream_[it->second];
  }
};

} // namespace tessera::pipegen::detail
