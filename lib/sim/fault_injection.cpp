#include "sim/fault_injection.hpp"

#include "formats/formats.hpp"
#include "sim/tensix_core.hpp"
#include "support/text_format.hpp"

#include <charconv>

#include "sim/stream_engine_state.hpp"

namespace tessera::sim {

namespace {

// splitmix64: a fixed, well-mixed function of (seed, salt), so a seed picks
// the same places on every machine and compiler.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The first events of a run are where every netlist has some: the fault
// lands on one of the first kWindow events of its kind.
constexpr uint64_t kWindow = 8;

}  // namespace

const char* injectKindName(InjectKind kind) {
  switch (kind) {
  case InjectKind::DropCredit: return "drop-credit";
  case InjectKind::DramBitflip: return "dram-bitflip";
  case InjectKind::NocStall: return "noc-stall";
  case InjectKind::HartStop: return "hart-stop";
  }
  return "?";
}

Expected<InjectSpec> parseInjectSpec(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  InjectSpec spec;
  bool known = false;
  for (InjectKind k : {InjectKind::DropCredit, InjectKind::DramBitflip, InjectKind::NocStall, InjectKind::HartStop})
    if (kind == injectKindName(k)) {
      spec.kind = k;
      known = true;
    }
  if (!known) {
    return Failure{"unknown fault kind '" + kind + "' (expected drop-credit, dram-bitflip, noc-stall or hart-stop)"};
  }
  if (colon != std::string::npos) {
    const std::string seed = text.substr(colon + 1);
    const char* end = seed.data() + seed.size();
    auto [p, ec] = std::from_chars(seed.data(), end, spec.seed);
    if (seed.empty() || ec != std::errc() || p != end) {
      return Failure{"bad seed '" + seed + "' (expected a decimal number below 2^64)"};
    }
  }
  return spec;
}

FaultInjector::FaultInjector(InjectSpec spec) : spec_(spec) { target_ = pick(0, kWindow); }

std::string FaultInjector::text() const {
  return std::string(injectKindName(spec_.kind)) + ":" + std::to_string(spec_.seed);
}

uint64_t FaultInjector::pick(uint64_t salt, uint64_t n) const {
  return n == 0 ? 0 : mix(spec_.seed * 0x100000001B3ull ^ mix(salt + static_cast<uint64_t>(spec_.kind) * 16)) % n;
}

bool FaultInjector::dropFree(StreamEngine::Ring& r, uint64_t cycle) {
  if (spec_.kind != InjectKind::DropCredit || !landed_.empty() || events_++ != target_) return false;
  landed_ = "core '" + r.core->name() + "': the buffer at " + support::hexLiteral(r.base) +
            (r.operand >= 0 ? " (operand " + std::to_string(r.operand) + ")" : std::string()) +
            " lost the credit of a freed slot at cycle " + std::to_string(cycle);
  return true;
}

void FaultInjector::dramRead(const StreamEngine::Stream& s, std::span<uint8_t> tile, const DramLocation& loc,
                             uint64_t address, uint64_t cycle) {
  if (spec_.kind != InjectKind::DramBitflip || !landed_.empty()) return;
  if (tile.size() < 2 * formats::kTileHeaderBytes + 4 || events_++ < target_) return;
  // Bit 30 of a 32-bit word of the tile's data (after its 16-byte header,
  // before its last 16 bytes, which are padding in most formats): the top
  // exponent bit of a Float32, or of the upper Float16/Float16_b value of
  // the word; an exponent or mantissa bit of a block-float tile. A flip of
  // it changes a value by far more than any comparison tolerates.
  const uint64_t words = (tile.size() - 2 * formats::kTileHeaderBytes) / 4;
  const uint64_t word = pick(1, words);
  const size_t byte = formats::kTileHeaderBytes + word * 4 + 3;  // little-endian: bits 24..31
  tile[byte] ^= 0x40;
  landed_ = "core '" + s.coreName() + "' stream " + std::to_string(s.name.streamId) + ": bit " +
            std::to_string(word * 32 + 30) + " of the tile data (byte " + std::to_string(byte) +
            " of the tile) read from " + (loc.host ? std::string("host memory") : "channel " + std::to_string(loc.channel)) +
            " address " + support::hexLiteral(address) + " at cycle " + std::to_string(cycle) + " flipped";
}

void FaultInjector::beforeAdvance(StreamEngine& engine, uint64_t now) {
  if (spec_.kind != InjectKind::NocStall || !landed_.empty() || events_++ < target_) return;
  // Candidates: the NOC ports that unfinished streams still send on, in configuration order.
  std::vector<std::pair<StreamEngine::CoreSlot*, uint32_t>> ports;
  for (const auto& sp : engine.streams_) {
    const StreamEngine::Stream& s = *sp;
    if (s.done || !s.core || s.core->ethernet) continue;
    for (size_t k = s.phase; k < s.phases.size(); ++k) {
      const blob::StreamPhase& p = s.phases[k];
      if (!p.remoteReceiver && !p.dramOutput) continue;
      const std::pair<StreamEngine::CoreSlot*, uint32_t> port{s.core, p.outgoingDataNoc & 1};
      if (std::find(ports.begin(), ports.end(), port) == ports.end()) ports.push_back(port);
    }
  }
  if (ports.empty()) return;  // nothing sends yet: try the next window
  auto [slot, noc] = ports[pick(2, ports.size())];
  slot->portBusy[noc] = kPortStalled;
  const std::string name = slot->core ? slot->core->name() : engine_detail::coordText(slot->noc);
  landed_ = "core '" + name + "': its NOC " + std::to_string(noc) + " sender port stalled from cycle " +
            std::to_string(now);
}

void FaultInjector::beforeRound(uint64_t now, const std::vector<TensixCore*>& cores) {
  if (spec_.kind != InjectKind::HartStop || !landed_.empty() || cores.empty() || events_++ < target_) return;
  TensixCore& core = *cores[pick(3, cores.size())];
  std::vector<Thread> threads;
  for (uint32_t t = 0; t < contract::kThreadCount; ++t)
    if (core.threadActive(static_cast<Thread>(t))) threads.push_back(static_cast<Thread>(t));
  if (threads.empty()) return;
  const Thread t = threads[pick(4, threads.size())];
  core.stopThread(t);
  landed_ = "core '" + core.name() + "' " + threadLabel(t) + " stopped at cycle " + std::to_string(now) + " (pc " +
            support::hexLiteral(core.hart(t).pc()) + ")";
}

// The end-of-epoch credit audit: when every stream has finished, every slot
// a writer took in a buffer must have been freed again (for an output
// operand: every tile the packer pushed). A slot still taken is a credit the
// flow control lost: the run could have finished only because the buffer
// had slots to spare, and the next epoch's streams would start short.
std::optional<StreamFault> StreamEngine::auditCredits() const {
  for (const auto& sp : streams_) {
    const Stream& s = *sp;
    for (const auto& rp : s.rings) {
      const Ring& r = *rp;
      if (r.kernelConsumes) continue;  // the kernel's pops free it (its counters)
      const uint64_t taken = r.kernelProduces ? ringValid(r) : r.reserved;
      if (taken <= r.freed) continue;
      const std::string cname = s.coreName();
      return StreamFault{"stream-credit", cname,
                         "core '" + cname + "': stream " + std::to_string(s.name.streamId) + ": " +
                             std::to_string(taken - r.freed) + " of " + std::to_string(taken) +
                             " slots taken in its buffer at " + support::hexLiteral(r.base) +
                             " were never freed when the epoch ended (a lost credit)"};
    }
  }
  return std::nullopt;
}

}  // namespace tessera::sim
