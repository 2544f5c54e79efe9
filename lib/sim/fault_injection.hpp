// Faults injected into the simulated chip (loader run --inject KIND[:SEED]):
// a dropped stream credit, a flipped bit in a DRAM read, a stalled NOC
// sender port, a hart that stops. Each lands once per run, where the seed
// picks (deterministic: the same seed lands on the same event); the chip
// must then report a named fault, a hang or a located mismatch, never a
// crash or a silent pass on wrong data. The chip and the stream engine call
// the hooks below only when ChipRunOptions::inject is set, so a normal run
// pays one null-pointer test per hook. docs/device-model.md, "Injected faults".
#pragma once
#include "sim/stream_engine.hpp"
#include "support/expected.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

class TensixCore;

enum class InjectKind : uint8_t { DropCredit, DramBitflip, NocStall, HartStop };
const char* injectKindName(InjectKind kind);  // "drop-credit", "dram-bitflip", "noc-stall", "hart-stop"

struct InjectSpec {
  InjectKind kind = InjectKind::DropCredit;
  uint64_t seed = 1;
};
// "KIND" or "KIND:SEED" (SEED a decimal up to 2^64-1; default 1); a
// failure naming what is wrong with anything else.
Expected<InjectSpec> parseInjectSpec(const std::string& text);

// A NOC sender port that never frees (noc-stall): transfers on it never start
// and it is no pending event, so the hang detector sees the chip stuck.
inline constexpr uint64_t kPortStalled = ~uint64_t{0};

class FaultInjector {
public:
  explicit FaultInjector(InjectSpec spec);
  const InjectSpec& spec() const { return spec_; }
  // Where the fault landed (core, stream or buffer, cycle), empty while it has not.
  const std::string& landed() const { return landed_; }
  // "drop-credit:7" (the spec as given back).
  std::string text() const;

  // --- Hooks ---
  // A slot of ring `r` is freed (a credit back to its sender, or to the
  // packer): true drops it (the slot stays taken for good).
  bool dropFree(StreamEngine::Ring& r, uint64_t cycle);
  // Stream `s` read `tile` (msg bytes, header first) from DRAM or host
  // memory at `address` of `channel`: may flip one bit of it.
  void dramRead(const StreamEngine::Stream& s, std::span<uint8_t> tile, const DramLocation& loc, uint64_t address,
                uint64_t cycle);
  // Start of a stream engine window at cycle `now`: may stall a port.
  void beforeAdvance(StreamEngine& engine, uint64_t now);
  // Start of a chip round at `now`: `cores` are the kernel cores whose harts
  // run this round (NOC order). May stop one of their harts.
  void beforeRound(uint64_t now, const std::vector<TensixCore*>& cores);

private:
  uint64_t pick(uint64_t salt, uint64_t n) const;  // seeded choice in [0, n)

  InjectSpec spec_;
  uint64_t target_ = 0;  // which event (0-based) of the kind's hook it lands on
  uint64_t events_ = 0;
  std::string landed_;
};

}  // namespace tessera::sim
