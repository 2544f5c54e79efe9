// Where the sim target expects each input's entry of a ram written several
// times in one execute (global_wrptr_autoinc), and which launches it refuses.
// Expected slots worked out by hand: slot of input i = (i * g mod 2E) mod E.
#include "loader/ram_writes.hpp"

#include <catch2/catch.hpp>

using tessera::loader::ramWrites;
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

namespace {

using tessera::loader::RamAccess;
using tessera::loader::sharedRamViews;

// A one-cell Float16 ram of `t` tiles per entry at DRAM channel 0, 0x1000.
Queue viewRam(const std::string& name, int64_t entries, int64_t t, const std::string& alias = "") {
  Queue q = ram(name, entries, alias);
  q.t.set(t, {1, 1});
  q.mblock.set({1, 1}, {1, 1});
  q.ublock.set({1, 1}, {1, 1});
  q.df.set(tessera::netlist::DataFormat::Float16, {1, 1});
  q.location.set(tessera::netlist::IoLocation::Dram, {1, 1});
  q.dram.push_back({0, 0x1000, {}});
  return q;
}

QueueSettingsValues reads(int64_t g) {
  QueueSettingsValues s;
  s.globalRdptrAutoinc = g;
  return s;
}

} // namespace

TEST_CASE("views of one buffer in one launch: real slots, one header", "[loader][ram]") {
  // writer: 8 entries of 1 tile; reader: 4 entries of 2 tiles (reader k = writer 2k, 2k+1).
  Queue w = viewRam("w", 8, 1), r = viewRam("r", 4, 2, "w"), other = viewRam("o", 4, 1);
  const QueueSettingsValues ws = stride(1), rs = reads(1);
  std::string rule, error;
  const Queue* at = nullptr;
  // Unrelated rams: nothing to plan, nothing refused.
  CHECK_FALSE(sharedRamViews({{&other, 0, &rs}}, {{&w, 0, &ws}}, 2, rule, error, at));
  CHECK(error.empty());
  // Writes w 4, 5; reads r 0, 1 (w 0-3): disjoint.
  auto v = sharedRamViews({{&r, 0, &rs}}, {{&w, 4, &ws}}, 2, rule, error, at);
  REQUIRE(v);
  CHECK(v->reader == &r);
  CHECK(v->writer == &w);
  CHECK(v->rdPtr == 0);
  CHECK(v->wrPtr == 4);
  CHECK(v->rdAutoinc == 1);
  CHECK(v->wrAutoinc == 1);
  CHECK(v->readSlots == std::vector<uint32_t>{0, 1});
  CHECK(v->writeSlots == std::vector<uint32_t>{4, 5});
  // Pointers wrap at 2E: reader pointer 7 (E 4) with stride 1 -> 7, 0 -> slots 3, 0;
  // writer pointer 13 (E 8) -> 13, 14 -> slots 5, 6. r 3 = w 6, 7: overlaps w 6.
  CHECK_FALSE(sharedRamViews({{&r, 7, &rs}}, {{&w, 13, &ws}}, 2, rule, error, at));
  CHECK(rule == "dual-view-race");
  CHECK(at == &r);
  CHECK(error.find("input 0 reads its entry 3, which shares bytes with entry 6 of 'w' that input 1 writes") !=
        std::string::npos);
  // Writer pointer 12 -> slots 4, 5 (r 2): disjoint from r 3, 0.
  auto wrap = sharedRamViews({{&r, 7, &rs}}, {{&w, 12, &ws}}, 2, rule, error, at);
  REQUIRE(wrap);
  CHECK(wrap->readSlots == std::vector<uint32_t>{3, 0});
  CHECK(wrap->writeSlots == std::vector<uint32_t>{4, 5});
}

TEST_CASE("a read overlapping any write of the launch is a race", "[loader][ram]") {
  Queue w = viewRam("w", 8, 1), r = viewRam("r", 4, 2, "w");
  const QueueSettingsValues ws = stride(1), rs = reads(1);
  std::string rule, error;
  const Queue* at = nullptr;
  // The same input: r 1 = w 2, 3; input 0 writes w 3.
  CHECK_FALSE(sharedRamViews({{&r, 1, &rs}}, {{&w, 3, &ws}}, 2, rule, error, at));
  CHECK(rule == "dual-view-race");
  CHECK(error.find("input 0 reads its entry 1, which shares bytes with entry 3 of 'w' that input 0 writes") !=
        std::string::npos);
  // A later read of an earlier write: writes w 2, 3 (inputs 0, 1); input 1 reads r 1.
  CHECK_FALSE(sharedRamViews({{&r, 0, &rs}}, {{&w, 2, &ws}}, 2, rule, error, at));
  CHECK(error.find("input 0 reads") == std::string::npos); // r 0 = w 0, 1: untouched
  CHECK(error.find("input 1 reads its entry 1, which shares bytes with entry 2 of 'w' that input 0 writes") !=
        std::string::npos);
  // Two inputs writing one slot stays refused (sim-unsupported).
  const QueueSettingsValues inPlace;
  CHECK_FALSE(sharedRamViews({{&r, 0, &rs}}, {{&w, 4, &inPlace}}, 2, rule, error, at));
  CHECK(rule == "sim-unsupported");
}

TEST_CASE("views the sim target cannot lay out together are refused", "[loader][ram]") {
  Queue w = viewRam("w", 8, 1), r = viewRam("r", 4, 2, "w"), moved = viewRam("m", 4, 2, "w");
  moved.dram[0].address = 0x2000;
  const QueueSettingsValues ws = stride(1), rs = reads(1);
  std::string rule, error;
  const Queue* at = nullptr;
  CHECK_FALSE(sharedRamViews({{&moved, 0, &rs}}, {{&w, 4, &ws}}, 2, rule, error, at));
  CHECK(rule == "sim-unsupported");
  CHECK(error.find("not at the same DRAM addresses") != std::string::npos);
  QueueSettingsValues pro = rs;
  pro.prologue = true;
  CHECK_FALSE(sharedRamViews({{&r, 0, &pro}}, {{&w, 4, &ws}}, 2, rule, error, at));
  CHECK(error.find("prologue") != std::string::npos);
}
