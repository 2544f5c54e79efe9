// Unit tests of QueueStore and EpochIo (lib/runtime/queues). Expected values
// are worked out by hand from the pointer model of docs/runtime.md: pointers
// live in [0, 2*entries), slot = pointer % entries, occupancy = (wr - rd) mod
// 2*entries.
#include "runtime/queues.hpp"

#include "netlist/parser.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

using namespace tessera;
using namespace tessera::runtime;

namespace {

// One queue line: grid 1x1, t 1, one 1x1 mblock of one tile -> entries are
// [1][1][32][32].
std::string queue(const std::string& name, const std::string& input, const std::string& type, int entries,
                  const std::string& t = "1") {
  return "  " + name + ": {input: " + input + ", type: " + type + ", entries: " + std::to_string(entries) +
         ", grid_size: [1, 1], t: " + t +
         ", mblock: [1, 1], ublock: [1, 1], df: Float32, target_device: 0, loc: dram, dram: [[0, 0x1000]]}\n";
}

std::string op(const std::string& name, const std::string& inputs) {
  return "    " + name + ": {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [" + inputs +
         "], in_df: [Float32], out_df: Float32, intermed_df: Float32, acc_df: Float32, math_fidelity: HiFi4, t: 1, "
         "mblock: [1, 1], ublock: [1, 1]}\n";
}

netlist::Netlist parse(const std::string& text) {
  SourceBuffer source("t.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  INFO(text);
  REQUIRE(nl);
  REQUIRE(diags.errorCount() == 0);
  return std::move(*nl);
}

// in0 (host queue, 4 entries) -> op0 -> out0 (queue, 2 entries); ram0 (host
// ram, 2 entries) -> op1 -> acc (ram, 4 entries, t 2); dyn is allocated by
// program p0, so it starts unallocated.
const std::string kNetlist = "devices:\n  arch: grayskull\nqueues:\n" + queue("in0", "HOST", "queue", 4) +
                             queue("out0", "op0", "queue", 2) + queue("ram0", "HOST", "ram", 2) +
                             queue("acc", "op1", "ram", 4, "2") + queue("dyn", "HOST", "queue", 2) +
                             "graphs:\n  g0:\n    target_device: 0\n    input_count: 2\n" + op("op0", "in0") +
                             op("op1", "ram0") +
                             "programs:\n  - p0:\n    - allocate_queue: [dyn]\n    - deallocate_queue: [dyn]\n";

Tensor entry(const QueueState& q, float v) {
  Tensor t = q.zeroEntry();
  std::fill(t.data.begin(), t.data.end(), v);
  return t;
}

struct Fixture {
  netlist::Netlist nl = parse(kNetlist);
  QueueStore store{nl};
  const netlist::Graph& g0() const { return nl.graphs.at(0); }
  void push(const std::string& q, float v) { store.push(q, entry(store.get(q), v)); }
};

template <class F> RuntimeError errorOf(F&& f) {
  try {
    f();
  } catch (const RuntimeError& e) {
    return e;
  }
  FAIL("expected a RuntimeError");
  return RuntimeError("", {}, "");
}

} // namespace

TEST_CASE("queue store: allocation state, entry shape, names", "[runtime][queues]") {
  Fixture f;
  // dyn appears in allocate_queue/deallocate_queue of p0: dynamic.
  CHECK_FALSE(f.store.get("dyn").allocated());
  CHECK(f.store.get("in0").allocated());
  CHECK(f.store.names() == std::vector<std::string>{"acc", "dyn", "in0", "out0", "ram0"});
  CHECK(f.store.find("nope") == nullptr);
  CHECK(errorOf([&] { f.store.get("nope"); }).rule == "unknown-queue");

  // acc: t 2, grid/mblock/ublock 1x1 -> [1][2][32][32].
  Tensor z = f.store.get("acc").zeroEntry();
  CHECK((z.w == 1 && z.z == 2 && z.r == 32 && z.c == 32));
  CHECK(f.store.get("acc").entries() == 4);
  // Never-written slots read as zeros.
  CHECK(f.store.get("acc").slot(3).data.at(0) == 0.0f);
}

TEST_CASE("queue store: host push and pop wrap at 2*entries", "[runtime][queues]") {
  Fixture f;
  QueueState& q = f.store.get("in0");
  // Push 4 (full), pop 3, push 3 more: wr = 7, rd = 3, occupancy 4.
  for (float v : {1.f, 2.f, 3.f, 4.f}) f.push("in0", v);
  CHECK(q.full());
  CHECK(f.store.pop("in0").data[0] == 1.0f);
  CHECK(f.store.pop("in0").data[0] == 2.0f);
  CHECK(f.store.pop("in0").data[0] == 3.0f);
  for (float v : {5.f, 6.f, 7.f}) f.push("in0", v);
  CHECK(q.wrGlobal() == 7);
  CHECK(q.rdGlobal() == 3);
  CHECK(q.occupancy() == 4);
  // 5, 6, 7 went to slots 4%4=0, 5%4=1, 6%4=2; slot 3 still holds 4.
  CHECK(q.slot(4).data[0] == 5.0f);
  CHECK(q.slot(6).data[0] == 7.0f);
  // Pop the remaining four: 4, 5, 6, 7; rd goes 3 -> 7, wr stays 7.
  for (float v : {4.f, 5.f, 6.f, 7.f}) CHECK(f.store.pop("in0").data[0] == v);
  CHECK(q.occupancy() == 0);
  // One more push: slot 7%4 = 3, wr wraps 7+1 = 8 -> 0; occupancy (0-7) mod 8 = 1.
  f.push("in0", 8);
  CHECK(q.wrGlobal() == 0);
  CHECK(q.occupancy() == 1);
  // The local read pointer followed the pops while it sat on the head.
  CHECK(q.rdLocal() == 7);
}

TEST_CASE("queue store: host errors", "[runtime][queues]") {
  Fixture f;
  SECTION("push into a full queue") {
    for (float v : {1.f, 2.f, 3.f, 4.f}) f.push("in0", v);
    RuntimeError e = errorOf([&] { f.push("in0", 5); });
    CHECK(e.rule == "queue-full");
    CHECK_THAT(e.what(), Catch::Contains("'in0'"));
  }
  SECTION("pop from an empty queue") { CHECK(errorOf([&] { f.store.pop("in0"); }).rule == "queue-empty"); }
  SECTION("pop from a ram") { CHECK(errorOf([&] { f.store.pop("ram0"); }).rule == "pop-ram"); }
  SECTION("push or pop an unallocated queue") {
    CHECK(errorOf([&] { f.push("dyn", 1); }).rule == "queue-not-allocated");
    CHECK(errorOf([&] { f.store.pop("dyn"); }).rule == "queue-not-allocated");
  }
  SECTION("entry of the wrong shape") {
    CHECK(errorOf([&] { f.store.push("in0", Tensor(1, 2, 32, 32)); }).rule == "entry-shape");
  }
}

TEST_CASE("queue store: a ram push writes at the write pointer and wraps", "[runtime][queues]") {
  Fixture f;
  QueueState& r = f.store.get("ram0");
  // ram0 has 2 entries: pushes go to slots 0, 1, then 2%2 = 0 again (no full check).
  f.push("ram0", 1);
  f.push("ram0", 2);
  f.push("ram0", 3);
  CHECK(r.slot(0).data[0] == 3.0f);
  CHECK(r.slot(1).data[0] == 2.0f);
  CHECK(r.wrGlobal() == 3);
}

TEST_CASE("queue store: allocate and deallocate", "[runtime][queues]") {
  Fixture f;
  SourceLoc loc{7, 3};
  RuntimeError e = errorOf([&] { f.store.deallocate("dyn", loc); });
  CHECK(e.rule == "queue-not-allocated");
  CHECK(e.loc == loc);

  f.store.allocate("dyn", loc);
  CHECK(f.store.get("dyn").allocated());
  e = errorOf([&] { f.store.allocate("dyn", loc); });
  CHECK(e.rule == "queue-already-allocated");
  CHECK(e.loc == loc);

  // Push two, pop one: wr 2, rd 1. Deallocate + allocate resets pointers and zeroes.
  f.push("dyn", 9);
  f.push("dyn", 8);
  f.store.pop("dyn");
  f.store.deallocate("dyn", loc);
  CHECK_FALSE(f.store.get("dyn").allocated());
  f.store.allocate("dyn", loc);
  QueueState& q = f.store.get("dyn");
  CHECK((q.rdGlobal() == 0 && q.wrGlobal() == 0 && q.rdLocal() == 0));
  CHECK(q.slot(1).data[0] == 0.0f); // held 8 before the reallocation
}

TEST_CASE("queue store: programPointers on a queue writes the values that changed", "[runtime][queues]") {
  Fixture f;
  QueueState& q = f.store.get("in0");
  for (float v : {1.f, 2.f, 3.f, 4.f}) f.push("in0", v);
  QueueSettingsValues s;
  s.rdPtrGlobal = 2;
  // First write: 0 -> 2 pops two; no rd_ptr_local given, so the local pointer follows.
  f.store.programPointers("in0", s, {});
  CHECK(q.rdGlobal() == 2);
  CHECK(q.rdLocal() == 2);
  CHECK(q.occupancy() == 2);

  // A host pop moves the real pointer to 3; the program writing 2 again is no
  // change, so nothing is undone.
  f.store.pop("in0");
  f.store.programPointers("in0", s, {});
  CHECK(q.rdGlobal() == 3);

  // Values are taken modulo 2*entries = 8: 12 -> 4 pops one (3 -> 4).
  s.rdPtrGlobal = 12;
  s.rdPtrLocal = 6;
  f.store.programPointers("in0", s, {});
  CHECK(q.rdGlobal() == 4);
  CHECK(q.rdLocal() == 6); // given explicitly, not following
  CHECK(q.occupancy() == 0);

  // Moving rd back to 1 re-exposes the three entries still in slots 1..3.
  s.rdPtrGlobal = 1;
  s.rdPtrLocal.reset();
  f.store.programPointers("in0", s, {});
  CHECK(q.occupancy() == 3);
  CHECK(q.rdLocal() == 1);
  CHECK(f.store.pop("in0").data[0] == 2.0f);

  // rd 7 with wr 4 claims (4 - 7) mod 8 = 5 entries in a 4-entry queue: not an
  // error until the queue is used, then reported at the pointer write.
  s.rdPtrGlobal = 7;
  SourceLoc loc{12, 8};
  f.store.programPointers("in0", s, loc);
  RuntimeError e = errorOf([&] { f.store.pop("in0"); });
  CHECK(e.rule == "queue-pointer");
  CHECK(e.loc == loc);
  CHECK_THAT(e.what(), Catch::Contains("'in0'") && Catch::Contains("rd 7, wr 4"));
  CHECK(errorOf([&] { f.push("in0", 9); }).rule == "queue-pointer");

  // A consistent value clears it: rd 4 = wr 4, empty.
  s.rdPtrGlobal = 4;
  f.store.programPointers("in0", s, loc);
  CHECK(errorOf([&] { f.store.pop("in0"); }).rule == "queue-empty");

  // wr_ptr_global on a queue moves the write pointer the same way: 4 -> 6
  // turns slots 0, 1 (still holding the first pushes, 1 and 2) into entries.
  s = {};
  s.wrPtrGlobal = 6;
  f.store.programPointers("in0", s, loc);
  CHECK(q.occupancy() == 2);
  CHECK(f.store.pop("in0").data[0] == 1.0f);
}

TEST_CASE("queue store: programPointers on a ram sets every given value", "[runtime][queues]") {
  Fixture f;
  QueueState& r = f.store.get("acc");
  QueueSettingsValues s;
  s.rdPtrGlobal = 3;
  s.wrPtrGlobal = 9; // modulo 2*4 = 8 -> 1
  f.store.programPointers("acc", s, {});
  CHECK(r.rdGlobal() == 3);
  CHECK(r.wrGlobal() == 1);
  // A read-only view leaves the writer's pointer alone.
  s.wrPtrGlobal = 2;
  s.readOnly = true;
  f.store.programPointers("acc", s, {});
  CHECK(r.wrGlobal() == 1);
}

TEST_CASE("epoch io: streaming reads, pops by global_rdptr_autoinc", "[runtime][queues]") {
  Fixture f;
  for (float v : {10.f, 11.f, 12.f, 13.f}) f.push("in0", v);
  std::map<std::string, QueueSettingsValues> settings;
  settings["in0"].globalRdptrAutoinc = 1;
  EpochIo io(f.store, f.g0(), 2, settings, {});
  io.begin();
  // rd_ptr_autoinc defaults to 1: inputs 0, 1 read slots 0, 1.
  CHECK(io.read("in0", 0).data[0] == 10.0f);
  CHECK(io.read("in0", 1).data[0] == 11.0f);
  io.end();
  // global_rdptr_autoinc 1 * input_count 2 = 2 pops; the local pointer follows.
  QueueState& q = f.store.get("in0");
  CHECK(q.rdGlobal() == 2);
  CHECK(q.rdLocal() == 2);
  CHECK(q.occupancy() == 2);
}

TEST_CASE("epoch io: prologue and rd_ptr_autoinc 0 read one entry for every input", "[runtime][queues]") {
  Fixture f;
  f.push("in0", 7);
  std::map<std::string, QueueSettingsValues> settings;
  SECTION("prologue") { settings["in0"].prologue = true; }
  SECTION("rd_ptr_autoinc 0") { settings["in0"].rdPtrAutoinc = 0; }
  EpochIo io(f.store, f.g0(), 2, settings, {});
  io.begin();
  // Only one entry is in the queue, yet both inputs read it.
  CHECK(io.read("in0", 0).data[0] == 7.0f);
  CHECK(io.read("in0", 1).data[0] == 7.0f);
  io.end();
  CHECK(f.store.get("in0").occupancy() == 1); // nothing popped
}

TEST_CASE("epoch io: reading past the written entries is queue-empty", "[runtime][queues]") {
  Fixture f;
  f.push("in0", 7);
  SourceLoc loc{20, 7};
  EpochIo io(f.store, f.g0(), 2, {}, loc);
  io.begin();
  CHECK(io.read("in0", 0).data[0] == 7.0f);
  // Input 1 needs a second entry; the queue holds one, the local pointer is at
  // the head, so 1 entry is available.
  RuntimeError e = errorOf([&] { io.read("in0", 1); });
  CHECK(e.rule == "queue-empty");
  CHECK(e.loc == loc);
  CHECK_THAT(e.what(), Catch::Contains("'in0'") && Catch::Contains("graph 'g0'") && Catch::Contains("input 1 of 2") &&
                           Catch::Contains("only 1 entry is available"));
}

TEST_CASE("epoch io: a local pointer ahead of the head reads further in", "[runtime][queues]") {
  Fixture f;
  for (float v : {10.f, 11.f, 12.f, 13.f}) f.push("in0", v);
  std::map<std::string, QueueSettingsValues> settings;
  settings["in0"].rdPtrLocal = 2;
  settings["in0"].rdPtrGlobal = 0;
  EpochIo io(f.store, f.g0(), 2, settings, {});
  io.begin();
  // Local 2, global 0: inputs read slots 2, 3 without popping anything.
  CHECK(io.read("in0", 0).data[0] == 12.0f);
  CHECK(io.read("in0", 1).data[0] == 13.0f);
  io.end();
  CHECK(f.store.get("in0").occupancy() == 4);
}

TEST_CASE("epoch io: writes into a queue, full is an error", "[runtime][queues]") {
  Fixture f;
  EpochIo io(f.store, f.g0(), 2, {}, {});
  io.begin();
  const QueueState& q = f.store.get("out0");
  io.write("out0", entry(q, 1));
  io.write("out0", entry(q, 2));
  CHECK(q.full()); // 2 entries
  RuntimeError e = errorOf([&] { io.write("out0", entry(q, 3)); });
  CHECK(e.rule == "queue-full");
  CHECK_THAT(e.what(), Catch::Contains("'out0'") && Catch::Contains("entry 2"));
  // The log holds what was written, in order.
  const auto& log = f.store.writeLog().at("out0");
  REQUIRE(log.size() == 2);
  CHECK(log[0].unpack().data[0] == 1.0f);
  CHECK(log[1].unpack().data[0] == 2.0f);
  // Shape mismatch.
  CHECK(errorOf([&] { io.write("out0", Tensor(1, 1, 64, 32)); }).rule == "entry-shape");
}

TEST_CASE("epoch io: ram writes at wr_ptr_global, strided by global_wrptr_autoinc", "[runtime][queues]") {
  Fixture f;
  const QueueState& acc = f.store.get("acc");
  std::map<std::string, QueueSettingsValues> settings;
  settings["acc"].wrPtrGlobal = 1;
  SECTION("autoinc 2: slots 1, 3, then 5%4 = 1 again") {
    settings["acc"].globalWrptrAutoinc = 2;
    EpochIo io(f.store, f.g0(), 2, settings, {});
    io.begin();
    CHECK(&io.current("acc") == &acc.slot(1));
    io.write("acc", entry(acc, 1));
    io.write("acc", entry(acc, 2));
    io.write("acc", entry(acc, 3));
    CHECK(acc.slot(1).data[0] == 3.0f);
    CHECK(acc.slot(3).data[0] == 2.0f);
    CHECK(acc.wrGlobal() == 7);
  }
  SECTION("no autoinc: every write lands in slot 1") {
    EpochIo io(f.store, f.g0(), 2, settings, {});
    io.begin();
    io.write("acc", entry(acc, 1));
    io.write("acc", entry(acc, 2));
    CHECK(acc.slot(1).data[0] == 2.0f);
    CHECK(acc.slot(2).data[0] == 0.0f);
    CHECK(acc.wrGlobal() == 1);
    CHECK(f.store.writeLog().at("acc").size() == 2);
  }
}

TEST_CASE("epoch io: ram reads at rd_ptr_global, strided by global_rdptr_autoinc", "[runtime][queues]") {
  Fixture f;
  f.push("ram0", 5); // slot 0
  f.push("ram0", 6); // slot 1
  std::map<std::string, QueueSettingsValues> settings;
  settings["ram0"].rdPtrGlobal = 1;
  SECTION("default stride 0") {
    EpochIo io(f.store, f.g0(), 2, settings, {});
    io.begin();
    CHECK(io.read("ram0", 0).data[0] == 6.0f);
    CHECK(io.read("ram0", 1).data[0] == 6.0f);
    io.end();
    CHECK(f.store.get("ram0").rdGlobal() == 1);
  }
  SECTION("global_rdptr_autoinc 1") {
    settings["ram0"].globalRdptrAutoinc = 1;
    EpochIo io(f.store, f.g0(), 2, settings, {});
    io.begin();
    CHECK(io.read("ram0", 0).data[0] == 6.0f);
    CHECK(io.read("ram0", 1).data[0] == 5.0f); // pointer 2 -> slot 0
    io.end();
    CHECK(f.store.get("ram0").rdGlobal() == 3); // 1 + 1*2
  }
}

TEST_CASE("epoch io: zero clears every slot before the epoch", "[runtime][queues]") {
  Fixture f;
  f.push("ram0", 5);
  f.push("ram0", 6);
  std::map<std::string, QueueSettingsValues> settings;
  settings["ram0"].zero = true;
  EpochIo io(f.store, f.g0(), 1, settings, {});
  io.begin();
  CHECK(io.read("ram0", 0).data[0] == 0.0f);
  CHECK(f.store.get("ram0").slot(1).data[0] == 0.0f);
}

TEST_CASE("epoch io: settings and reads of unallocated or foreign queues", "[runtime][queues]") {
  Fixture f;
  SourceLoc loc{3, 4};
  std::map<std::string, QueueSettingsValues> settings;
  settings["dyn"].rdPtrGlobal = 0;
  EpochIo io(f.store, f.g0(), 1, settings, loc);
  RuntimeError e = errorOf([&] { io.begin(); });
  CHECK(e.rule == "queue-not-allocated");
  CHECK(e.loc == loc);
  // A target reading a queue no op of the graph reads is a target bug.
  EpochIo plain(f.store, f.g0(), 1, {}, loc);
  plain.begin();
  CHECK(errorOf([&] { plain.read("out0", 0); }).rule == "internal");
  CHECK(errorOf([&] { plain.write("in0", Tensor(1, 1, 32, 32)); }).rule == "internal");
  CHECK(errorOf([&] { plain.read("in0", 1); }).rule == "internal"); // input_count is 1
}

TEST_CASE("queues a graph reads and writes", "[runtime][queues]") {
  Fixture f;
  CHECK(queuesReadBy(f.store, f.g0()) == std::vector<std::string>{"in0", "ram0"});
  CHECK(queuesWrittenBy(f.store, f.g0()) == std::vector<std::string>{"acc", "out0"});
}

TEST_CASE("dual-view rams share the base's memory", "[runtime][queues]") {
  // writer: 4 entries of t 1, written by opw. reader: 2 entries of t 2 over
  // the same memory (k = 4 / 2 = 2: reader entry p = writer entries 2p, 2p+1
  // stacked along t). view2: a same-shape view (k = 1).
  const std::string text =
      "devices:\n  arch: grayskull\nqueues:\n" + queue("src", "HOST", "queue", 4) + queue("writer", "opw", "ram", 4) +
      "  reader: {input: HOST, type: ram, alias: writer, entries: 2, grid_size: [1, 1], t: 2, mblock: [1, 1], "
      "ublock: [1, 1], df: Float32, target_device: 0, loc: dram, dram: [[0, 0x1000]]}\n"
      "  view2: {input: HOST, type: ram, alias: writer, entries: 4, grid_size: [1, 1], t: 1, mblock: [1, 1], "
      "ublock: [1, 1], df: Float32, target_device: 0, loc: dram, dram: [[0, 0x1000]]}\n"
      "graphs:\n  gw:\n    target_device: 0\n    input_count: 4\n" +
      op("opw", "src") + op("opr", "reader, view2") + "programs:\n  - p0:\n    - endprogram\n";
  netlist::Netlist nl = parse(text);
  QueueStore store(nl);
  const QueueState& writer = store.get("writer");

  std::map<std::string, QueueSettingsValues> settings;
  settings["writer"].wrPtrGlobal = 0;
  settings["writer"].globalWrptrAutoinc = 1;
  settings["reader"].rdPtrGlobal = 1;
  EpochIo io(store, nl.graphs.at(0), 4, settings, {});
  io.begin();
  for (float v : {1.f, 2.f, 3.f, 4.f}) io.write("writer", entry(writer, v)); // writer slots 0..3, inputs 0..3
  // reader entry 1 = writer slots 2 (t 0) and 3 (t 1). Input i sees the
  // writes of inputs before i only (the test below): input 3 sees slot 2's
  // write (input 2) but not slot 3's (its own).
  const Tensor& r = io.read("reader", 3);
  CHECK(r.at(0, 0, 0, 0) == 3.0f);
  CHECK(r.at(0, 1, 31, 31) == 0.0f);
  CHECK(io.read("view2", 1).data[0] == 1.0f); // view2 slot 0 = writer slot 0, written by input 0
  CHECK(io.read("view2", 0).data[0] == 0.0f); // input 0 reads before any write
  io.end();
  CHECK(writer.slot(3).data[0] == 4.0f); // the base holds every write

  // A host push into a view lands in the base: view2's write pointer is 0.
  store.push("view2", entry(store.get("view2"), 9));
  CHECK(writer.slot(0).data[0] == 9.0f);

  // zero on a view clears the shared memory.
  std::map<std::string, QueueSettingsValues> zero;
  zero["reader"].zero = true;
  EpochIo io2(store, nl.graphs.at(0), 4, zero, {});
  io2.begin();
  CHECK(writer.slot(2).data[0] == 0.0f);
  CHECK(io2.read("view2", 0).data[0] == 0.0f);
}

TEST_CASE("dual views in one epoch: input i reads before the writes of inputs i and later", "[runtime][queues]") {
  // BUDA's golden model runs a graph once per input, its input queues read
  // before its ops: input i of `reader` sees what inputs 0..i-1 wrote through
  // `writer`, not what inputs i.. write, whatever order the target reads in.
  // writer: 8 entries of t 1; reader: 4 entries of t 2 (reader p = writer 2p, 2p+1).
  const std::string text =
      "devices:\n  arch: grayskull\nqueues:\n" + queue("src", "HOST", "queue", 4) + queue("writer", "opw", "ram", 8) +
      "  reader: {input: HOST, type: ram, alias: writer, entries: 4, grid_size: [1, 1], t: 2, mblock: [1, 1], "
      "ublock: [1, 1], df: Float32, target_device: 0, loc: dram, dram: [[0, 0x1000]]}\n"
      "  other: {input: HOST, type: ram, entries: 4, grid_size: [1, 1], t: 1, mblock: [1, 1], "
      "ublock: [1, 1], df: Float32, target_device: 0, loc: dram, dram: [[0, 0x9000]]}\n"
      "graphs:\n  gw:\n    target_device: 0\n    input_count: 3\n" +
      op("opw", "src") + op("opr", "reader, other") + "programs:\n  - p0:\n    - endprogram\n";
  netlist::Netlist nl = parse(text);
  QueueStore store(nl);
  const QueueState& writer = store.get("writer");
  for (float v : {10.f, 11.f, 12.f, 13.f}) store.push("reader", entry(store.get("reader"), v)); // writer 0..7: 10 10 11 11 12 12 13 13

  std::map<std::string, QueueSettingsValues> settings;
  settings["writer"].wrPtrGlobal = 1; // inputs 0, 1, 2 write writer 1, 3, 5
  settings["writer"].globalWrptrAutoinc = 2;
  settings["reader"].rdPtrGlobal = 0; // inputs 0, 1, 2 read reader 0, 1, 2 (writer 0-1, 2-3, 4-5)
  settings["reader"].globalRdptrAutoinc = 1;
  EpochIo io(store, nl.graphs.at(0), 3, settings, {});
  io.begin();
  // Read before any write: the writes are not there yet for any input.
  CHECK(io.read("reader", 1).at(0, 1, 0, 0) == 11.0f);
  for (float v : {1.f, 2.f, 3.f}) io.write("writer", entry(writer, v));
  // Input 0 reads reader 0 = writer 0, 1: writer 1 is input 0's own write: old.
  const Tensor& r0 = io.read("reader", 0);
  CHECK(r0.at(0, 0, 0, 0) == 10.0f);
  CHECK(r0.at(0, 1, 0, 0) == 10.0f);
  // Input 1 reads writer 2, 3: writer 3 is input 1's write: old (11).
  CHECK(io.read("reader", 1).at(0, 1, 0, 0) == 11.0f);
  // Input 2 reads writer 4, 5: 5 is its own write: old.
  CHECK(io.read("reader", 2).at(0, 1, 0, 0) == 12.0f);
  // A second epoch sees everything the first wrote.
  io.end();
  settings["writer"].wrPtrGlobal = 7; // 7, 9%16=9 -> slot 1, ... : input 0 writes writer 7
  settings["reader"].rdPtrGlobal = 0;
  EpochIo io2(store, nl.graphs.at(0), 3, settings, {});
  io2.begin();
  io2.write("writer", entry(writer, 20)); // input 0: writer 7
  io2.write("writer", entry(writer, 21)); // input 1: writer 9 -> slot 1
  io2.write("writer", entry(writer, 22)); // input 2: writer 11 -> slot 3
  const Tensor& a = io2.read("reader", 0);  // writer 0, 1: slot 1 holds 1 from the first epoch, 21 after input 1
  CHECK(a.at(0, 1, 0, 0) == 1.0f);
  const Tensor& b = io2.read("reader", 2);  // writer 4, 5: first epoch's 3 at slot 5
  CHECK(b.at(0, 1, 0, 0) == 3.0f);
  const Tensor& c = io2.read("reader", 1);  // writer 2, 3: slot 3 = 2 (first epoch), input 2's 22 not yet
  CHECK(c.at(0, 1, 0, 0) == 2.0f);
  io2.end();
  // Reads of a ram no view of which is written keep returning the slot itself.
  EpochIo io3(store, nl.graphs.at(0), 3, {}, {});
  io3.begin();
  CHECK(&io3.read("other", 0) == &store.get("other").slot(0));
}
