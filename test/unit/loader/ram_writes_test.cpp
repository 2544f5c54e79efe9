// Where the sim target expects each input's entry of a ram written several
// times in one execute (global_wrptr_autoinc), and which launches it refuses.
// Expected slots worked out by hand: slot of input i = (i * g mod 2E) mod E.
#include "loader/ram_writes.hpp"

#include <catch2/catch.hpp>

using tessera::loader::ramWrites;
using tessera::loader::viewReadWhileWritten;
using tessera::netlist::IoType;
using tessera::netlist::Queue;
using tessera::runtime::QueueSettingsValues;

namespace {

Queue ram(const std::string& name, int64_t entries, const std::string& alias = "") {
  Queue q;
  q.name = name;
  q.type.set(IoType::Ram, {1, 1});
  q.entries.set(entries, {1, 1});
  if (!alias.empty()) q.alias.set(alias, {1, 1});
  return q;
}

QueueSettingsValues stride(int64_t g) {
  QueueSettingsValues s;
  s.globalWrptrAutoinc = g;
  return s;
}

} // namespace

TEST_CASE("a ram written once is read back from slot 0, whatever the autoinc", "[loader][ram]") {
  std::string error;
  auto w = ramWrites(ram("r", 4), stride(3), 1, error);
  REQUIRE(w);
  CHECK(w->autoinc == 0);
  CHECK(w->slots == std::vector<uint32_t>{0});
}

TEST_CASE("inputs of one execute step global_wrptr_autoinc slots apart", "[loader][ram]") {
  std::string error;
  auto two = ramWrites(ram("r", 4), stride(1), 2, error);
  REQUIRE(two);
  CHECK(two->autoinc == 1);
  CHECK(two->slots == std::vector<uint32_t>{0, 1});
  // E = 6, g = 2: pointers 0, 2, 4 -> slots 0, 2, 4.
  auto three = ramWrites(ram("r", 6), stride(2), 3, error);
  REQUIRE(three);
  CHECK(three->slots == std::vector<uint32_t>{0, 2, 4});
  // E = 14, g = 7 (dual_view_ram_batch): pointers 0, 7 -> slots 0, 7.
  auto batch = ramWrites(ram("r", 14), stride(7), 2, error);
  REQUIRE(batch);
  CHECK(batch->slots == std::vector<uint32_t>{0, 7});
  // E = 4, g = 3: pointers 0, 3, 6, 1 (mod 8) -> slots 0, 3, 2, 1.
  auto wrap = ramWrites(ram("r", 4), stride(3), 4, error);
  REQUIRE(wrap);
  CHECK(wrap->autoinc == 3);
  CHECK(wrap->slots == std::vector<uint32_t>{0, 3, 2, 1});
  // A negative stride wraps like the runtime's pointers: -1 mod 8 = 7 -> slots 0, 3.
  auto back = ramWrites(ram("r", 4), stride(-1), 2, error);
  REQUIRE(back);
  CHECK(back->autoinc == 7);
  CHECK(back->slots == std::vector<uint32_t>{0, 3});
}

TEST_CASE("two inputs in one slot: only the last is observable", "[loader][ram]") {
  std::string error;
  CHECK_FALSE(ramWrites(ram("cache", 4), QueueSettingsValues{}, 2, error)); // no autoinc: in place
  CHECK(error.find("ram 'cache' is written 2 times") != std::string::npos);
  CHECK(error.find("inputs 0 and 1") != std::string::npos);
  // E = 4, g = 2: pointers 0, 2, 4 -> slots 0, 2, 0.
  CHECK_FALSE(ramWrites(ram("cache", 4), stride(2), 3, error));
  CHECK(error.find("inputs 0 and 2") != std::string::npos);
  // E = 4, g = 4: pointers 0, 4 -> slot 0 twice.
  CHECK_FALSE(ramWrites(ram("cache", 4), stride(4), 2, error));
}

TEST_CASE("a launch reading one view of a ram while writing another is refused", "[loader][ram]") {
  Queue base = ram("base", 4), view = ram("view", 2, "base"), other = ram("other", 4), sibling = ram("sib", 4, "base");
  CHECK_FALSE(viewReadWhileWritten({&other}, {&base}));
  auto c = viewReadWhileWritten({&view}, {&base});
  REQUIRE(c);
  CHECK(c->reader == &view);
  CHECK(c->message.find("ram 'view' is read in the epoch that writes 'base'") != std::string::npos);
  CHECK(viewReadWhileWritten({&base}, {&view}));      // the base read, a view written
  CHECK(viewReadWhileWritten({&sibling}, {&view}));   // two views of one base
}

TEST_CASE("a ram read with global_rdptr_autoinc steps one staged slot per entry", "[loader][ram]") {
  using tessera::loader::ramReadStep;
  QueueSettingsValues s;
  CHECK(ramReadStep(ram("r", 4), s) == 0);  // default 0: every input reads one slot
  s.globalRdptrAutoinc = 1;
  CHECK(ramReadStep(ram("r", 4), s) == 1);
  s.globalRdptrAutoinc = 8;                 // a whole turn of the pointers (2E = 8): in place
  CHECK(ramReadStep(ram("r", 4), s) == 0);
  s.globalRdptrAutoinc = 2;
  s.prologue = true;                        // read once into L1
  CHECK(ramReadStep(ram("r", 4), s) == 0);
  Queue q = ram("q", 4);
  q.type.set(IoType::Queue, {1, 1});        // queues pop; the header's rd_autoinc is not theirs
  s.prologue = false;
  CHECK(ramReadStep(q, s) == 0);
}
