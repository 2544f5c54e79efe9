// Adapts lib/sim/coprocessor.hpp's Coprocessor to the core's CoprocessorPort
// (tensix_core.hpp), so the two classes can evolve separately. Each accepted
// instruction's cycles are charged to the hart that pushed it.
#pragma once
#include "sim/coprocessor.hpp"
#include "sim/tensix_core.hpp"

namespace tessera::sim {

class CoprocessorPortAdapter final : public CoprocessorPort {
public:
  explicit CoprocessorPortAdapter(Coprocessor& cop) : cop_(cop) {}
  PortResult push(Thread thread, uint32_t word, uint64_t cycle) override;
  uint32_t status(Thread thread) const override { return cop_.status(thread); }
  // Completed instructions of every unit: a stalled push changes none of them.
  uint64_t progress() const override;
  std::string waitReason(Thread thread) const override;
  uint64_t mathBusyCycles() const override { return cop_.counters().math.cycles; }
  uint64_t doneAt(Thread thread) const override { return cop_.doneAt(thread); }

private:
  Coprocessor& cop_;
};

} // namespace tessera::sim
