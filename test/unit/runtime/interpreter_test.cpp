// Unit tests of the program interpreter (lib/runtime/interpreter) with a fake
// target: each op reads every entry of its queue inputs (recording the first
// value of each) and writes input_count entries into each queue it feeds,
// filled with a running counter 1, 2, 3... A host hook tops up host-fed
// queues (type queue) before each execute with values 100, 101, ... like the
// loader's host. Expected values are traced by hand in the comments.
#include "runtime/interpreter.hpp"

#include "netlist/parser.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::runtime;

namespace {

std::string queue(const std::string& name, const std::string& input, const std::string& type, int entries) {
  return "  " + name + ": {input: " + input + ", type: " + type + ", entries: " + std::to_string(entries) +
         ", grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float32, target_device: 0, loc: dram, "
         "dram: [[0, 0x1000]]}\n";
}

std::string op(const std::string& name, const std::string& inputs) {
  return "    " + name + ": {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [" + inputs +
         "], in_df: [Float32], out_df: Float32, intermed_df: Float32, acc_df: Float32, math_fidelity: HiFi4, t: 1, "
         "mblock: [1, 1], ublock: [1, 1]}\n";
}

std::string graph(const std::string& name, int inputCount, const std::string& ops) {
  return "  " + name + ":\n    target_device: 0\n    input_count: " + std::to_string(inputCount) + "\n" + ops;
}

std::string netlistText(const std::string& queues, const std::string& graphs, const std::string& programs) {
  return "devices:\n  arch: grayskull\nqueues:\n" + queues + "graphs:\n" + graphs + "programs:\n" + programs;
}

// 1-based line and column of the first occurrence of `marker` in `text`.
SourceLoc locOf(const std::string& text, const std::string& marker) {
  size_t at = text.find(marker);
  REQUIRE(at != std::string::npos);
  uint32_t line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return {line, static_cast<uint32_t>(at - lineStart + 1)};
}

class CountingTarget : public Target {
public:
  CountingTarget(const netlist::Netlist& nl, QueueStore& store) : nl_(&nl), store_(&store) {}
  std::string name() const override { return "counting"; }
  void execute(EpochIo& io) override {
    calls.push_back("target " + io.graph().name);
    if (onExecute) onExecute(io);
    const int64_t n = io.inputCount();
    for (const auto& op : io.graph().ops) {
      for (const auto& in : op.inputs) {
        if (!store_->find(in.name)) continue; // fed by another op
        for (int64_t i = 0; i < n; ++i) reads[in.name].push_back(io.read(in.name, i).data.at(0));
      }
      for (const auto& q : nl_->queues) {
        if (q.input.value != op.name) continue;
        for (int64_t i = 0; i < n; ++i) {
          Tensor e = store_->get(q.name).zeroEntry();
          std::fill(e.data.begin(), e.data.end(), ++counter);
          io.write(q.name, std::move(e));
        }
      }
    }
  }

  std::map<std::string, std::vector<float>> reads;
  std::vector<std::string> calls;
  std::function<void(EpochIo&)> onExecute;
  float counter = 0;

private:
  const netlist::Netlist* nl_;
  QueueStore* store_;
};

class FeedingHooks : public HostHooks {
public:
  explicit FeedingHooks(std::vector<std::string>& calls) : calls_(&calls) {}
  void beforeExecute(const netlist::Graph& graph, QueueStore& store) override {
    calls_->push_back("before " + graph.name);
    if (!feed) return;
    for (const auto& name : queuesReadBy(store, graph)) {
      QueueState& q = store.get(name);
      if (!q.queue().isHostFed() || q.isRam() || !q.allocated()) continue;
      while (!q.full()) {
        Tensor e = q.zeroEntry();
        std::fill(e.data.begin(), e.data.end(), next++);
        store.push(name, std::move(e));
      }
    }
  }
  void afterExecute(const netlist::Graph& graph, QueueStore& store) override { calls_->push_back("after " + graph.name); }

  bool feed = true;
  float next = 100;

private:
  std::vector<std::string>* calls_;
};

struct Harness {
  explicit Harness(std::string text_) : text(std::move(text_)) {
    SourceBuffer source("t.yaml", text);
    DiagnosticEngine diags;
    auto parsed = netlist::parseNetlist(source, diags);
    INFO(text);
    REQUIRE(parsed);
    REQUIRE(diags.errorCount() == 0);
    nl = std::move(*parsed);
    store = std::make_unique<QueueStore>(nl);
    target = std::make_unique<CountingTarget>(nl, *store);
    hooks = std::make_unique<FeedingHooks>(target->calls);
    interp = std::make_unique<Interpreter>(nl, *store, *target, *hooks);
  }
  void run(const std::string& program, const std::map<std::string, int64_t>& params = {}) {
    for (const auto& p : nl.programs)
      if (p.name == program) return interp->run(p, params);
    FAIL("no program " << program);
  }
  RuntimeError error(const std::string& program, const std::map<std::string, int64_t>& params = {}) {
    try {
      run(program, params);
    } catch (const RuntimeError& e) {
      return e;
    }
    FAIL("expected a RuntimeError from " << program);
    return RuntimeError("", {}, "");
  }
  std::vector<float> written(const std::string& q) const {
    std::vector<float> out;
    if (auto it = store->writeLog().find(q); it != store->writeLog().end())
      for (const auto& t : it->second) out.push_back(t.unpack().data.at(0));
    return out;
  }

  std::string text;
  netlist::Netlist nl;
  std::unique_ptr<QueueStore> store;
  std::unique_ptr<CountingTarget> target;
  std::unique_ptr<FeedingHooks> hooks;
  std::unique_ptr<Interpreter> interp;
};

using Floats = std::vector<float>;

// in0 (host queue, 4 entries) -> op0 -> out0 (queue, 16 entries), input_count 2.
const std::string kStreamQueues = queue("in0", "HOST", "queue", 4) + queue("out0", "op0", "queue", 16);
const std::string kStreamGraph = graph("g0", 2, op("op0", "in0"));
const std::string kStreamSettings =
    "{graph_name: g0, queue_settings: {in0: {prologue: false, epilogue: false, zero: false, rd_ptr_local: $lptr, "
    "rd_ptr_global: $gptr}}}";

// A graph that cannot block: a host ram in, a ram out (no empty/full checks).
const std::string kFreeQueues = queue("w", "HOST", "ram", 1) + queue("acc", "op9", "ram", 64);
const std::string kFreeGraph = graph("g9", 1, op("op9", "w"));

} // namespace

TEST_CASE("interpreter: input queue popped by incwrap pointers across loop iterations", "[runtime][interpreter]") {
  Harness h(netlistText(kStreamQueues, kStreamGraph, R"(  - p0:
    - staticvar: {$lptr: 0, $gptr: 0}
    - var: {$c_n: 2, $c_wrap: 8}
    - loop: 3
    -   execute: )" + kStreamSettings + R"(
    -   varinst: [$lptr, incwrap, $c_n, $c_wrap]
    -   varinst: [$gptr, incwrap, $c_n, $c_wrap]
    - endloop
)"));
  h.run("p0");
  // Iteration 1: the host fills in0 with 100..103 (wr 4). Pointers are first
  // written as 0: inputs read slots 0, 1 -> 100, 101; op0 writes 1, 2. The
  // varinsts move lptr/gptr to 2: rdLocal 2 and a pop of 2 (rd 2) at once.
  // Iteration 2: the host tops up 104, 105 (slots 0, 1; wr 6); reads slots
  // 2, 3 -> 102, 103; writes 3, 4; pointers -> 4 (rd 4).
  // Iteration 3: host 106, 107 (slots 2, 3; wr 8 -> 0); reads slots 0, 1 ->
  // 104, 105; writes 5, 6; pointers -> 6 (rd 6).
  CHECK(h.target->reads["in0"] == Floats{100, 101, 102, 103, 104, 105});
  CHECK(h.written("out0") == Floats{1, 2, 3, 4, 5, 6});
  CHECK(h.interp->executeCount() == 3);
  const QueueState& in0 = h.store->get("in0");
  CHECK(in0.rdGlobal() == 6);
  CHECK(in0.rdLocal() == 6);
  CHECK(in0.wrGlobal() == 0);
  CHECK(in0.occupancy() == 2); // (0 - 6) mod 8

  // Second run: staticvars keep 6 (re-initialising them to 0 would read 108
  // first). The vars are re-initialised, so the program is unchanged.
  // Iteration 1: host 108, 109 (slots 0, 1; wr 2); the pointers still say 6:
  // no change; reads slots 2, 3 -> 106, 107; pointers -> (6+2)%8 = 0, a pop of 2.
  // Iteration 2: host 110, 111 (slots 2, 3; wr 4); reads slots 0, 1 -> 108, 109.
  // Iteration 3: host 112, 113 (slots 0, 1; wr 6); reads slots 2, 3 -> 110, 111.
  h.target->reads.clear();
  h.run("p0");
  CHECK(h.target->reads["in0"] == Floats{106, 107, 108, 109, 110, 111});
  CHECK(h.interp->executeCount() == 6);
}

TEST_CASE("interpreter: a varinst on a bound pointer pops at once, freeing space for the host",
          "[runtime][interpreter]") {
  // in0 holds exactly one epoch (2 entries). Without the immediate pop the host
  // could not refill it before the second execute, and that epoch would read an
  // empty queue.
  Harness h(netlistText(queue("in0", "HOST", "queue", 2) + queue("out0", "op0", "queue", 8), kStreamGraph, R"(  - p0:
    - var: {$lptr: 0, $gptr: 0, $c_n: 2, $c_wrap: 4}
    - loop: 2
    -   execute: )" + kStreamSettings + R"(
    -   varinst: [$lptr, incwrap, $c_n, $c_wrap]
    -   varinst: [$gptr, incwrap, $c_n, $c_wrap]
    - endloop
)"));
  h.run("p0");
  // Iteration 1: host 100, 101; read; pointers -> 2: pop 2 (empty).
  // Iteration 2: host 102, 103 (slots 0, 1); read at pointer 2 -> slots 0, 1.
  CHECK(h.target->reads["in0"] == Floats{100, 101, 102, 103});
  CHECK(h.store->get("in0").occupancy() == 0); // popped after the last varinst too
}

TEST_CASE("interpreter: a backward program re-reads the entries its forward program popped",
          "[runtime][interpreter]") {
  // Each program keeps its own staticvar pointers into the shared in0 (2
  // entries), as pybuda's fwd/bwd programs do.
  const std::string settings = "{in0: {prologue: false, epilogue: false, zero: false, rd_ptr_local: $lptr, rd_ptr_global: $gptr}}";
  auto program = [&](const std::string& name, const std::string& g) {
    return "  - " + name + ":\n    - staticvar: {$gptr: 0, $lptr: 0}\n    - var: {$c_one: 1}\n"
           "    - execute: {graph_name: " + g + ", queue_settings: " + settings + "}\n"
           "    - varinst: [$lptr, incwrap, $c_one, 4]\n    - varinst: [$gptr, incwrap, $c_one, 4]\n";
  };
  Harness h(netlistText(queue("in0", "HOST", "queue", 2) + queue("outF", "opF", "queue", 8) +
                            queue("outB", "opB", "queue", 8),
                        graph("fwd", 1, op("opF", "in0")) + graph("bwd", 1, op("opB", "in0")),
                        program("run_fwd", "fwd") + program("run_bwd", "bwd")));
  h.hooks->feed = false;
  for (float v : {10.f, 11.f}) {
    Tensor e = h.store->get("in0").zeroEntry();
    std::fill(e.data.begin(), e.data.end(), v);
    h.store->push("in0", std::move(e));
  }
  // run_fwd: pointers first written as 0, reads slot 0 (10), then 1: a pop.
  // run_bwd: its own statics say 0: rd goes back 1 -> 0, reads 10 again, then 1.
  // run_fwd again: its statics say 1 = the last value written: no change,
  // reads slot 1 (11), then 2: a pop. run_bwd: 1, back from 2: reads 11.
  h.run("run_fwd");
  h.run("run_bwd");
  h.run("run_fwd");
  h.run("run_bwd");
  CHECK(h.target->reads["in0"] == Floats{10, 10, 11, 11});
  CHECK(h.store->get("in0").occupancy() == 0); // both popped in the end
}

TEST_CASE("interpreter: prologue queue read for every input without popping", "[runtime][interpreter]") {
  Harness h(netlistText(queue("in0", "HOST", "queue", 4) + queue("w0", "HOST", "queue", 1) + queue("out0", "op0", "queue", 8),
                        graph("g0", 2, op("op0", "in0, w0")), R"(  - p0:
    - var: {$c_zero: 0, $c_n: 2, $c_wrap: 8, $lptr: 0, $gptr: 0}
    - loop: 2
    -   execute: {graph_name: g0, queue_settings: {
          in0: {prologue: false, epilogue: false, zero: false, rd_ptr_local: $lptr, rd_ptr_global: $gptr},
          w0: {prologue: true, epilogue: false, zero: false, rd_ptr_local: $c_zero, rd_ptr_global: $c_zero}}}
    -   varinst: [$lptr, incwrap, $c_n, $c_wrap]
    -   varinst: [$gptr, incwrap, $c_n, $c_wrap]
    - endloop
)"));
  h.hooks->feed = false;
  for (float v : {10.f, 11.f, 12.f, 13.f}) {
    Tensor e = h.store->get("in0").zeroEntry();
    std::fill(e.data.begin(), e.data.end(), v);
    h.store->push("in0", std::move(e));
  }
  Tensor w = h.store->get("w0").zeroEntry();
  std::fill(w.data.begin(), w.data.end(), 7.0f);
  h.store->push("w0", std::move(w));
  h.run("p0");
  // w0's single entry serves both inputs of both epochs and is never popped.
  CHECK(h.target->reads["w0"] == Floats{7, 7, 7, 7});
  CHECK(h.target->reads["in0"] == Floats{10, 11, 12, 13});
  CHECK(h.store->get("w0").occupancy() == 1);
}

TEST_CASE("interpreter: relay queue written and read in one epoch, popped by global_rdptr_autoinc",
          "[runtime][interpreter]") {
  // in0 -> opA -> relay (2 entries, allocated per iteration) -> opB -> out0.
  Harness h(netlistText(queue("in0", "HOST", "queue", 4) + queue("relay", "opA", "queue", 2) +
                            queue("out0", "opB", "queue", 4),
                        graph("g0", 2, op("opA", "in0") + op("opB", "relay")), R"(  - p0:
    - var: {$c_zero: 0}
    - loop: 2
    -   allocate_queue: [relay]
    -   execute: {graph_name: g0, queue_settings: {
          in0: {prologue: false, epilogue: false, zero: false, global_rdptr_autoinc: 1},
          relay: {prologue: false, epilogue: false, zero: false, global_rdptr_autoinc: 1, rd_ptr_local: $c_zero, rd_ptr_global: $c_zero}}}
    -   deallocate_queue: [relay]
    - endloop
)"));
  CHECK_FALSE(h.store->get("relay").allocated()); // dynamic: starts unallocated
  h.run("p0");
  // Iteration 1: host 100..103. opA reads 100, 101 and writes 1, 2 into relay
  // (now full); opB reads them back and writes 3, 4. end(): in0 pops 1*2 (rd 2,
  // local follows), relay pops 2.
  // Iteration 2: relay is fresh; host tops in0 up with 104, 105; opA reads
  // slots 2, 3 -> 102, 103, writes 5, 6; opB reads 5, 6, writes 7, 8.
  CHECK(h.target->reads["in0"] == Floats{100, 101, 102, 103});
  CHECK(h.target->reads["relay"] == Floats{1, 2, 5, 6});
  CHECK(h.written("relay") == Floats{1, 2, 5, 6});
  CHECK(h.written("out0") == Floats{3, 4, 7, 8});
  CHECK(h.store->get("in0").rdGlobal() == 4);
  CHECK_FALSE(h.store->get("relay").allocated());
}

TEST_CASE("interpreter: ram written at wr_ptr_global, then zeroed", "[runtime][interpreter]") {
  // in0 -> op0 -> cache (ram, 4 entries), input_count 2.
  Harness h(netlistText(queue("in0", "HOST", "queue", 4) + queue("cache", "op0", "ram", 4), kStreamGraph, R"(  - p0:
    - var: {$c_zero: 0, $c_one: 1, $wr: 1}
    - execute: {graph_name: g0, queue_settings: {
        cache: {prologue: false, epilogue: false, zero: false, wr_ptr_global: $wr, rd_ptr_global: $c_zero, global_wrptr_autoinc: $c_one}}}
    - varinst: [$wr, set, 3]
    - execute: {graph_name: g0, queue_settings: {
        cache: {prologue: false, epilogue: false, zero: false, wr_ptr_global: $wr, rd_ptr_global: $c_zero}}}
  - p1:
    - var: {$c_zero: 0}
    - execute: {graph_name: g0, queue_settings: {
        cache: {prologue: false, epilogue: false, zero: true, wr_ptr_global: $c_zero, rd_ptr_global: $c_zero}}}
)"));
  auto slots = [&] {
    Floats out;
    for (int s = 0; s < 4; ++s) out.push_back(h.store->get("cache").slot(s).data.at(0));
    return out;
  };
  h.run("p0");
  // Execute 1: wr 1, autoinc 1: writes 1, 2 land in slots 1, 2.
  // Execute 2: wr 3, no autoinc: writes 3, 4 both land in slot 3.
  CHECK(slots() == Floats{0, 1, 2, 4});
  CHECK(h.written("cache") == Floats{1, 2, 3, 4});
  h.run("p1");
  // zero clears all four slots, then writes 5, 6 both land in slot 0.
  CHECK(slots() == Floats{6, 0, 0, 0});
}

TEST_CASE("interpreter: queue allocation errors", "[runtime][interpreter]") {
  const std::string text = netlistText(queue("in0", "HOST", "queue", 4) + queue("out0", "op0", "queue", 8), kStreamGraph,
                                       R"(  - use_unallocated:
    - execute: {graph_name: g0}
  - alloc_twice:
    - allocate_queue: [in0]
  - dealloc_twice:
    - deallocate_queue: [in0]
    - deallocate_queue: [in0]
)");
  Harness h(text);
  SECTION("a graph using an unallocated queue") {
    RuntimeError first = h.error("dealloc_twice"); // in0 is dynamic: it starts unallocated
    CHECK(first.rule == "queue-not-allocated");
    CHECK(first.loc == locOf(text, "in0]\n    - deallocate_queue"));
    RuntimeError e = h.error("use_unallocated");
    CHECK(e.rule == "queue-not-allocated");
    CHECK(e.loc == locOf(text, "execute: {graph_name: g0}"));
    CHECK_THAT(e.what(), Catch::Contains("'in0'") && Catch::Contains("graph 'g0'"));
  }
  SECTION("allocating twice") {
    h.run("alloc_twice");
    RuntimeError e = h.error("alloc_twice");
    CHECK(e.rule == "queue-already-allocated");
    CHECK(e.loc == locOf(text, "in0]\n  - dealloc_twice"));
  }
}

TEST_CASE("interpreter: empty and full queues stop the run", "[runtime][interpreter]") {
  // out0 holds 2 entries: one epoch fills it, nobody pops.
  const std::string text = netlistText(queue("in0", "HOST", "queue", 4) + queue("out0", "op0", "queue", 2), kStreamGraph,
                                       R"(  - p0:
    - var: {$c_zero: 0}
    - loop: 2
    -   execute: {graph_name: g0, queue_settings: {in0: {prologue: false, epilogue: false, zero: false, global_rdptr_autoinc: 1}}}
    - endloop
)");
  Harness h(text);
  SECTION("empty: the host pushes nothing") {
    h.hooks->feed = false;
    RuntimeError e = h.error("p0");
    CHECK(e.rule == "queue-empty");
    CHECK(e.loc == locOf(text, "execute:"));
    CHECK_THAT(e.what(), Catch::Contains("'in0'") && Catch::Contains("graph 'g0'") && Catch::Contains("input 0 of 2") &&
                             Catch::Contains("only 0 entries are available"));
  }
  SECTION("full: the second epoch writes into a full queue") {
    RuntimeError e = h.error("p0");
    CHECK(e.rule == "queue-full");
    CHECK_THAT(e.what(), Catch::Contains("'out0'") && Catch::Contains("entry 0"));
    CHECK(h.interp->executeCount() == 2);
  }
}

TEST_CASE("interpreter: varinst opcodes", "[runtime][interpreter]") {
  // Each execute binds acc's wr_ptr_global (64 entries, so values below 128
  // show unchanged) to one variable; the target records it.
  const std::string exec = "{graph_name: g9, queue_settings: {acc: {wr_ptr_global: $X}}}";
  auto at = [&](const std::string& var) { return std::string(exec).replace(exec.find("$X"), 2, var); };
  Harness h(netlistText(kFreeQueues, kFreeGraph, "  - p0:\n    - var: {$a: 2, $b: 3}\n"
                                                 "    - varinst: [$s, set, $a]\n    - execute: " + at("$s") + "\n"
                                                 "    - varinst: [$t, add, $a, $b]\n    - execute: " + at("$t") + "\n"
                                                 "    - varinst: [$u, mul, $t, $b]\n    - execute: " + at("$u") + "\n"
                                                 "    - varinst: [$u, inc, 4]\n    - execute: " + at("$u") + "\n"
                                                 "    - varinst: [$w, set, 10]\n"
                                                 "    - varinst: [$w, incwrap, $u, 8]\n    - execute: " + at("$w") + "\n"
                                                 "    - varinst: [$v, set, 1]\n"
                                                 "    - varinst: [$v, incwrap, -3, 8]\n    - execute: " + at("$v") + "\n"));
  std::vector<int64_t> seen;
  h.target->onExecute = [&](EpochIo&) { seen.push_back(h.store->get("acc").wrGlobal()); };
  h.run("p0");
  // set 2; add 2+3 = 5; mul 5*3 = 15; inc 15+4 = 19; incwrap (10+19)%8 = 5;
  // incwrap with a negative step: (1-3) wraps to 6.
  CHECK(seen == std::vector<int64_t>{2, 5, 15, 19, 5, 6});
}

TEST_CASE("interpreter: nested loops, params and trace", "[runtime][interpreter]") {
  const std::string text = netlistText(kFreeQueues, kFreeGraph, R"(  - p0:
    - param: [$p_outer]
    - var: {$c_inner: 4}
    - loop: $p_outer
    -   execute: {graph_name: g9}
    -   loop: $c_inner
    -     execute: {graph_name: g9}
    -   endloop
    - endloop
)");
  Harness h(text);
  std::vector<std::string> lines;
  h.interp->trace = [&](const std::string& l) { lines.push_back(l); };
  h.run("p0", {{"$p_outer", 3}});
  // 3 outer iterations, each 1 + 4 executes.
  CHECK(h.interp->executeCount() == 15);
  REQUIRE(lines.size() == 15);
  CHECK(lines[0] == "execute g9 (input_count 1)");
  // Hooks wrap every target call.
  REQUIRE(h.target->calls.size() == 45);
  CHECK(h.target->calls[0] == "before g9");
  CHECK(h.target->calls[1] == "target g9");
  CHECK(h.target->calls[2] == "after g9");

  SECTION("missing param") {
    RuntimeError e = h.error("p0");
    CHECK(e.rule == "param-missing");
    CHECK(e.loc == locOf(text, "$p_outer]"));
    CHECK_THAT(e.what(), Catch::Contains("$p_outer") && Catch::Contains("'p0'"));
  }
  SECTION("unknown param") {
    RuntimeError e = h.error("p0", {{"$p_outer", 1}, {"$p_typo", 2}});
    CHECK(e.rule == "param-unknown");
    CHECK_THAT(e.what(), Catch::Contains("$p_typo") && Catch::Contains("$p_outer"));
  }
}

TEST_CASE("interpreter: staticvar persists across runs, var does not", "[runtime][interpreter]") {
  Harness h(netlistText(kFreeQueues, kFreeGraph, R"(  - p0:
    - staticvar: {$k: 1}
    - var: {$j: 1}
    - varinst: [$k, inc, 1]
    - varinst: [$j, inc, 1]
    - loop: $k
    -   execute: {graph_name: g9}
    - endloop
    - loop: $j
    -   execute: {graph_name: g9}
    - endloop
)"));
  h.run("p0"); // k 2, j 2: 4 executes
  CHECK(h.interp->executeCount() == 4);
  h.run("p0"); // k 3, j 2 again: 5 more
  CHECK(h.interp->executeCount() == 9);
}

TEST_CASE("interpreter: variable errors", "[runtime][interpreter]") {
  const std::string text = netlistText(kFreeQueues, kFreeGraph, R"(  - undefined_loop:
    - loop: $nope
    - endloop
  - undefined_setting:
    - execute: {graph_name: g9, queue_settings: {acc: {wr_ptr_global: $ghost}}}
  - undefined_inc:
    - varinst: [$fresh, inc, 1]
  - redeclared:
    - var: {$a: 1}
    - var: {$a: 2}
  - var_in_loop:
    - loop: 2
    -   var: [$x]
    - endloop
  - wrap_zero:
    - var: {$x: 1}
    - varinst: [$x, incwrap, 1, 0]
)");
  Harness h(text);
  RuntimeError e = h.error("undefined_loop");
  CHECK(e.rule == "undefined-variable");
  CHECK(e.loc == locOf(text, "$nope"));
  e = h.error("undefined_setting");
  CHECK(e.rule == "undefined-variable");
  CHECK(e.loc == locOf(text, "$ghost"));
  CHECK(h.interp->executeCount() == 0);
  e = h.error("undefined_inc");
  CHECK(e.rule == "undefined-variable");
  CHECK(e.loc == locOf(text, "$fresh"));
  e = h.error("redeclared");
  CHECK(e.rule == "variable-redeclared");
  CHECK(e.loc == locOf(text, "$a: 2"));
  // The loop's second iteration declares $x again.
  CHECK(h.error("var_in_loop").rule == "variable-redeclared");
  CHECK(h.error("wrap_zero").rule == "varinst-wrap");
}

TEST_CASE("interpreter: loop counts, endprogram, unknown graph, runaway guards", "[runtime][interpreter]") {
  const std::string text = netlistText(kFreeQueues, kFreeGraph, R"(  - zero_loop:
    - loop: 0
    -   execute: {graph_name: g9}
    - endloop
  - stops:
    - execute: {graph_name: g9}
    - endprogram
    - execute: {graph_name: g9}
  - no_graph:
    - execute: {graph_name: g_missing}
  - deep:
    - loop: 1
    -   loop: 1
    -     loop: 1
    -     endloop
    -   endloop
    - endloop
  - many:
    - loop: 10
    -   execute: {graph_name: g9}
    - endloop
  - spin:
    - var: {$i: 0}
    - loop: 1000
    -   varinst: [$i, inc, 1]
    - endloop
)");
  Harness h(text);
  RuntimeError e = h.error("zero_loop");
  CHECK(e.rule == "loop-count");
  CHECK(e.loc == locOf(text, "0\n    -   execute"));
  h.run("stops");
  CHECK(h.interp->executeCount() == 1); // nothing after endprogram runs
  e = h.error("no_graph");
  CHECK(e.rule == "unknown-graph");
  CHECK(e.loc == locOf(text, "g_missing"));

  h.interp->maxLoopDepth = 2;
  e = h.error("deep");
  CHECK(e.rule == "loop-depth");
  CHECK(e.loc == locOf(text, "loop: 1\n    -     endloop"));

  h.interp->maxExecutes = 5; // 1 done already, 4 more allowed
  e = h.error("many");
  CHECK(e.rule == "runaway-program");
  CHECK(h.interp->executeCount() == 5);

  h.interp->maxSteps = 100; // var + loop + 2 per iteration passes 100 early
  CHECK(h.error("spin").rule == "runaway-program");
}

TEST_CASE("interpreter: a wrong-shaped write from the target is an error", "[runtime][interpreter]") {
  Harness h(netlistText(kFreeQueues, kFreeGraph, "  - p0:\n    - execute: {graph_name: g9}\n"));
  h.target->onExecute = [](EpochIo& io) { io.write("acc", Tensor(1, 1, 64, 64)); };
  CHECK(h.error("p0").rule == "entry-shape");
}
