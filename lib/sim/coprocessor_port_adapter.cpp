#include "sim/coprocessor_port_adapter.hpp"

namespace tessera::sim {

PortResult CoprocessorPortAdapter::push(Thread thread, uint32_t word, uint64_t cycle) {
  const CopResult r = cop_.push(thread, word, cycle);
  switch (r.kind) {
  case CopResult::Kind::Accepted: return PortResult::accepted(r.hartCycles, r.start, r.cycles);
  case CopResult::Kind::Stall: return PortResult::stall();
  case CopResult::Kind::Fault: return PortResult::fault(r.fault);
  }
  return PortResult::fault(contract::kCopIllegalInstruction);
}

uint64_t CoprocessorPortAdapter::progress() const {
  const CopCounters& c = cop_.counters();
  return c.config.instructions + c.unpack.instructions + c.math.instructions + c.pack.instructions;
}

std::string CoprocessorPortAdapter::waitReason(Thread thread) const {
  std::string why = cop_.describeWait(thread);
  return why.empty() ? std::string("a coprocessor instruction to issue") : why;
}

} // namespace tessera::sim
