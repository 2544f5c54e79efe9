// Unit tests of parseNetlist (lib/netlist/parser). Values and positions are
// derived by hand from the inline YAML: line 1 is the line after `R"(`.
#include "netlist/parser.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace tessera;
using namespace tessera::netlist;

namespace {

struct Parsed {
  std::optional<Netlist> nl;
  DiagnosticEngine diags;
};

Parsed parse(const std::string& text) {
  Parsed p;
  SourceBuffer source("t.yaml", text);
  p.nl = parseNetlist(source, p.diags);
  return p;
}

void checkLoc(SourceLoc loc, uint32_t line, uint32_t col) {
  INFO("expected " << line << ":" << col << ", got " << loc.line << ":" << loc.col);
  CHECK(loc.line == line);
  CHECK(loc.col == col);
}

const Diagnostic* findRule(const DiagnosticEngine& d, const std::string& rule) {
  for (const Diagnostic& x : d.diagnostics())
    if (x.rule == rule) return &x;
  return nullptr;
}

// Line numbers matter: see the comment at the top of the file.
const std::string kNetlist = R"(devices:
  arch: [grayskull, wormhole_b]
queues:
  in0: {input: HOST, type: queue, entries: 2, grid_size: [1, 1], t: 1, mblock: [2, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[3, 0xffffffffffff0000]]}
  h0: {input: op0, type: ram, entries: 1, grid_size: [1, 2], t: 1, mblock: [1, 1], ublock: [1, 1], ublock_order: c, df: Bfp8_b, target_device: 0, loc: host, host: [[1, 4096], 0x20]}
graphs:
  g0:
    target_device: 0
    input_count: 2
    op0:
      type: matmul
      grid_loc: [1, 2]
      grid_size: [2, 3]
      inputs: [in0, h0]
      in_df: [Float16, Bfp8_b]
      out_df: Float16_b
      intermed_df: Float16_b
      acc_df: Float32
      math_fidelity: HiFi2_A
      t: 4
      t: 2
      mblock: [1, 1]
      ublock: [1, 1]
      input_0_tms: [broadcast: {z: 3}, hslice: 2, tile_broadcast: c, transpose, pad: [1, 2, 0.5], vstack: 4]
      input_1_unpad: {rt: 1, ct: 0}
      attributes: {m_k: 2, u_kt: 0x3, relu_en: True, relu_threshold: 0.25, type: max, custom_thing: [1, x], input0: [0, 1, 2], kernel_broadcast: {input_1: 4}, m_k: 5}
programs:
  - main:
      - var: [$a, $b]
      - var: {$c: 7}
      - staticvar: {$s: -1}
      - param: [$p]
      - varinst: [$a, incwrap, $p, 16]
      - loop: $a
      - execute: {graph_name: g0, queue_settings: {in0: {prologue: true, epilogue: false, zero: 0, rd_ptr_global: $s, global_rdptr_autoinc: 2}}}
      - endloop
      - allocate_queue: [in0, h0]
      - deallocate_queue: [h0]
      - end_loop:
      - end_program
)";

} // namespace

TEST_CASE("parser: a netlist parses with only the duplicate-key warnings", "[parser]") {
  Parsed p = parse(kNetlist);
  REQUIRE(p.nl.has_value());
  CHECK(p.diags.errorCount() == 0);
  // `t` twice in op0 (line 21, the later key) and `m_k` twice in its attributes.
  CHECK(p.diags.warningCount() == 2);
  REQUIRE(p.diags.diagnostics().size() == 2);
  const Diagnostic& t = p.diags.diagnostics()[0];
  CHECK(t.rule == "duplicate-key");
  CHECK(t.message == "op 'op0': key 't' appears more than once; the later value is used");
  checkLoc(t.loc, 21, 7);
  const Diagnostic& mk = p.diags.diagnostics()[1];
  CHECK(mk.rule == "duplicate-key");
  CHECK(mk.message == "op 'op0': attributes: key 'm_k' appears more than once; the later value is used");
  // "      attributes: {m_k: 2, u_kt: 0x3, relu_en: True, relu_threshold: 0.25,
  //  type: max, custom_thing: [1, x], input0: [0, 1, 2], kernel_broadcast:
  //  {input_1: 4}, m_k: 5}": the second m_k follows "{input_1: 4}, ".
  const std::string line26 = "      attributes: {m_k: 2, u_kt: 0x3, relu_en: True, relu_threshold: 0.25, type: max, "
                             "custom_thing: [1, x], input0: [0, 1, 2], kernel_broadcast: {input_1: 4}, ";
  checkLoc(mk.loc, 26, static_cast<uint32_t>(line26.size()) + 1);
}

TEST_CASE("parser: devices, arch list and spellings", "[parser]") {
  Parsed p = parse(kNetlist);
  REQUIRE(p.nl.has_value());
  const Devices& dev = p.nl->devices;
  CHECK(dev.archWasList);
  REQUIRE(dev.arch.size() == 2);
  CHECK(dev.arch[0].value == Arch::Grayskull);
  CHECK(dev.arch[1].value == Arch::WormholeB0); // `wormhole_b`
  checkLoc(dev.arch[0].loc, 2, 10);
  checkLoc(dev.arch[1].loc, 2, 21);
  checkLoc(dev.loc, 1, 1);
}

TEST_CASE("parser: queues, typed fields and 64-bit addresses", "[parser]") {
  Parsed p = parse(kNetlist);
  REQUIRE(p.nl.has_value());
  REQUIRE(p.nl->queues.size() == 2);
  const Queue& in0 = p.nl->queues[0];
  CHECK(in0.name == "in0");
  checkLoc(in0.loc, 4, 3);
  CHECK(in0.input.value == "HOST");
  CHECK(in0.isHostFed());
  CHECK(in0.type.value == IoType::Queue);
  CHECK(in0.entries.value == 2);
  CHECK(in0.gridSize.value == Dim2{1, 1});
  CHECK(in0.mblock.value == Dim2{2, 1});
  CHECK(in0.df.value == DataFormat::Float16);
  CHECK(in0.location.value == IoLocation::Dram);
  CHECK(in0.order() == UblockOrder::R); // default
  REQUIRE(in0.dram.size() == 1);
  CHECK(in0.dram[0].channel == 3);
  CHECK(in0.dram[0].address == 0xffffffffffff0000ULL);
  // "  in0: {input: HOST, ..." -> `entries: 2`: the value 2 follows
  // "  in0: {input: HOST, type: queue, entries: " (43 characters).
  checkLoc(in0.entries.loc, 4, 44);
  CHECK_FALSE(in0.alias.present());
  CHECK_FALSE(in0.tileDim.present());

  const Queue& h0 = p.nl->queues[1];
  CHECK(h0.name == "h0");
  CHECK(h0.type.value == IoType::Ram);
  CHECK(h0.df.value == DataFormat::Bfp8_b);
  CHECK(h0.location.value == IoLocation::Host);
  CHECK(h0.order() == UblockOrder::C);
  CHECK_FALSE(h0.isHostFed());
  CHECK(h0.input.value == "op0");
  REQUIRE(h0.host.size() == 2);
  CHECK(h0.host[0].channel == 1);
  CHECK(h0.host[0].address == 4096);
  CHECK(h0.host[1].channel == 0); // a bare address: memory 0
  CHECK(h0.host[1].address == 0x20);
  CHECK(h0.dram.empty());
  CHECK_FALSE(h0.dramLoc.valid());
}

TEST_CASE("parser: graph and op fields, later duplicate wins", "[parser]") {
  Parsed p = parse(kNetlist);
  REQUIRE(p.nl.has_value());
  REQUIRE(p.nl->graphs.size() == 1);
  const Graph& g = p.nl->graphs[0];
  CHECK(g.name == "g0");
  checkLoc(g.loc, 7, 3);
  CHECK(g.targetDevice.value == 0);
  CHECK(g.inputCount.value == 2);
  REQUIRE(g.ops.size() == 1);
  const Op& op = g.ops[0];
  CHECK(op.name == "op0");
  CHECK(op.graph == "g0");
  checkLoc(op.loc, 10, 5);
  CHECK(op.type.value == "matmul");
  checkLoc(op.type.loc, 11, 13);
  CHECK(op.gridLoc.value == Dim2{1, 2});
  checkLoc(op.gridLoc.loc, 12, 17);
  CHECK(op.gridSize.value == Dim2{2, 3});
  CHECK(op.outDf.value == DataFormat::Float16_b);
  CHECK(op.accDf.value == DataFormat::Float32);
  CHECK(op.mathFidelity.value == MathFidelity::HiFi2_A);
  CHECK(op.t.value == 2);
  checkLoc(op.t.loc, 21, 10);
  REQUIRE(op.inDf.size() == 2);
  CHECK(op.inDf[0].value == DataFormat::Float16);
  CHECK(op.inDf[1].value == DataFormat::Bfp8_b);
  checkLoc(op.inDf[1].loc, 15, 24);
  REQUIRE(op.inputs.size() == 2);
  CHECK(op.inputs[0].name == "in0");
  CHECK(op.inputs[1].name == "h0");
  checkLoc(op.inputs[0].loc, 14, 16);
  checkLoc(op.inputs[1].loc, 14, 21);
  checkLoc(op.inputsLoc, 14, 15);
  CHECK_FALSE(op.untilizeOutput.value);
  CHECK_FALSE(op.bufSizeMb.present());
  CHECK(op.order() == UblockOrder::R);
}

TEST_CASE("parser: TM kinds, dimensions and factors", "[parser]") {
  Parsed p = parse(kNetlist);
  REQUIRE(p.nl.has_value());
  const Op& op = p.nl->graphs.at(0).ops.at(0);
  const auto& tms = op.inputs.at(0).tms;
  REQUIRE(tms.size() == 6);
  CHECK(tms[0].kind == TmKind::Broadcast);
  CHECK(tms[0].dim == 'z');
  CHECK(tms[0].factor == 3);
  CHECK(tms[1].kind == TmKind::Hslice);
  CHECK(tms[1].factor == 2);
  CHECK(tms[2].kind == TmKind::TileBroadcast);
  CHECK(tms[2].dim == 'c');
  CHECK(tms[3].kind == TmKind::Transpose);
  CHECK(tms[4].kind == TmKind::Pad);
  CHECK(tms[4].pad.rt == 1);
  CHECK(tms[4].pad.ct == 2);
  CHECK(tms[4].pad.padValue == Approx(0.5));
  CHECK(tms[5].kind == TmKind::Vstack);
  CHECK(tms[5].factor == 4);
  // "      input_0_tms: [" is 20 characters: the first TM is at column 21, the
  // second after "broadcast: {z: 3}, " (19 more) at column 40.
  checkLoc(tms[0].loc, 24, 21);
  checkLoc(tms[1].loc, 24, 40);
  checkLoc(op.inputs[0].tmsLoc, 24, 20);
  CHECK(op.inputs.at(1).tms.empty());
  CHECK_FALSE(op.inputs[1].tmsLoc.valid());
  REQUIRE(op.inputs[1].unpad.has_value());
  CHECK(op.inputs[1].unpad->rt == 1);
  CHECK(op.inputs[1].unpad->ct == 0);
  CHECK_FALSE(op.inputs[1].pad.has_value());
  CHECK_FALSE(op.inputs[0].unpad.has_value());
}

TEST_CASE("parser: attributes typed where known, kept as data otherwise", "[parser]") {
  Parsed p = parse(kNetlist);
  REQUIRE(p.nl.has_value());
  const OpAttributes& a = p.nl->graphs.at(0).ops.at(0).attributes;
  checkLoc(a.loc, 26, 19);
  CHECK(a.mK.value == 5); // the later m_k
  CHECK(a.uKt.value == 3);
  CHECK(a.relu.value);
  CHECK(a.reluThreshold.value == Approx(0.25));
  CHECK(a.reduceType.value == "max");
  CHECK_FALSE(a.z.present());
  CHECK_FALSE(a.accumulate.present());
  // Every attribute in source order, duplicates included.
  REQUIRE(a.all.size() == 9);
  CHECK(a.all[0].key == "m_k");
  CHECK(a.all[0].value == 2);
  CHECK(a.all[8].key == "m_k");
  CHECK(a.all[8].value == 5);
  const Attribute* mk = a.find("m_k");
  REQUIRE(mk != nullptr);
  CHECK(mk->value == 5);
  const Attribute* relu = a.find("relu_en");
  REQUIRE(relu != nullptr);
  CHECK(relu->known);
  CHECK(relu->value == true);
  const Attribute* custom = a.find("custom_thing");
  REQUIRE(custom != nullptr);
  CHECK_FALSE(custom->known);
  CHECK(custom->value == nlohmann::ordered_json::array({1, "x"}));
  CHECK(a.find("missing") == nullptr);
  REQUIRE(a.spliceInputs.count(0) == 1);
  CHECK(a.spliceInputs.at(0) == std::vector<int64_t>{0, 1, 2});
  REQUIRE(a.kernelBroadcast.count(1) == 1);
  CHECK(a.kernelBroadcast.at(1).value == 4);
}

TEST_CASE("parser: every instruction kind", "[parser]") {
  Parsed p = parse(kNetlist);
  REQUIRE(p.nl.has_value());
  REQUIRE(p.nl->programs.size() == 1);
  const Program& prog = p.nl->programs[0];
  CHECK(prog.name == "main");
  checkLoc(prog.loc, 28, 5);
  const auto& ins = prog.instructions;
  REQUIRE(ins.size() == 12);
  const InstrKind kinds[] = {InstrKind::Var,        InstrKind::Var,           InstrKind::StaticVar,
                             InstrKind::Param,      InstrKind::VarInst,       InstrKind::Loop,
                             InstrKind::Execute,    InstrKind::EndLoop,       InstrKind::AllocateQueue,
                             InstrKind::DeallocateQueue, InstrKind::EndLoop,  InstrKind::EndProgram};
  for (size_t i = 0; i < 12; ++i) {
    INFO("instruction " << i);
    CHECK(ins[i].kind == kinds[i]);
    checkLoc(ins[i].loc, static_cast<uint32_t>(29 + i), 9);
  }

  // var: [$a, $b] — no initial values; "      - var: [" is 14 characters.
  REQUIRE(ins[0].vars.size() == 2);
  CHECK(ins[0].vars[0].name == "$a");
  CHECK(ins[0].vars[1].name == "$b");
  CHECK_FALSE(ins[0].vars[0].init.has_value());
  checkLoc(ins[0].vars[0].loc, 29, 15);
  checkLoc(ins[0].vars[1].loc, 29, 19);
  // var: {$c: 7}
  REQUIRE(ins[1].vars.size() == 1);
  CHECK(ins[1].vars[0].name == "$c");
  CHECK(ins[1].vars[0].init == 7);
  // staticvar: {$s: -1}
  REQUIRE(ins[2].vars.size() == 1);
  CHECK(ins[2].vars[0].init == -1);
  // param: [$p]
  REQUIRE(ins[3].vars.size() == 1);
  CHECK(ins[3].vars[0].name == "$p");
  CHECK_FALSE(ins[3].vars[0].init.has_value());
  // varinst: [$a, incwrap, $p, 16]
  CHECK(ins[4].out == "$a");
  CHECK(ins[4].opcode == VarOpcode::IncWrap);
  REQUIRE(ins[4].args.size() == 2);
  CHECK(ins[4].args[0].isVar);
  CHECK(ins[4].args[0].var == "$p");
  CHECK_FALSE(ins[4].args[1].isVar);
  CHECK(ins[4].args[1].value == 16);
  checkLoc(ins[4].outLoc, 33, 19);
  // loop: $a
  CHECK(ins[5].loopCount.isVar);
  CHECK(ins[5].loopCount.var == "$a");
  checkLoc(ins[5].loopCount.loc, 34, 15);
  // execute
  CHECK(ins[6].graphName.value == "g0");
  REQUIRE(ins[6].queueSettings.size() == 1);
  const QueueSetting& qs = ins[6].queueSettings[0];
  CHECK(qs.queue == "in0");
  // "      - execute: {graph_name: g0, queue_settings: {" is 51 characters.
  checkLoc(qs.loc, 35, 52);
  REQUIRE(qs.prologue.has_value());
  CHECK_FALSE(qs.prologue->isVar);
  CHECK(qs.prologue->value == 1);
  REQUIRE(qs.epilogue.has_value());
  CHECK(qs.epilogue->value == 0);
  REQUIRE(qs.zero.has_value());
  CHECK(qs.zero->value == 0);
  REQUIRE(qs.rdPtrGlobal.has_value());
  CHECK(qs.rdPtrGlobal->isVar);
  CHECK(qs.rdPtrGlobal->var == "$s");
  REQUIRE(qs.globalRdptrAutoinc.has_value());
  CHECK(qs.globalRdptrAutoinc->value == 2);
  CHECK_FALSE(qs.readOnly.has_value());
  CHECK_FALSE(qs.wrPtrGlobal.has_value());
  CHECK_FALSE(qs.rdPtrLocal.has_value());
  CHECK_FALSE(qs.rdPtrAutoinc.has_value());
  CHECK_FALSE(qs.globalWrptrAutoinc.has_value());
  // allocate_queue / deallocate_queue
  REQUIRE(ins[8].queues.size() == 2);
  CHECK(ins[8].queues[0].value == "in0");
  CHECK(ins[8].queues[1].value == "h0");
  checkLoc(ins[8].queues[1].loc, 37, 31);
  REQUIRE(ins[9].queues.size() == 1);
  CHECK(ins[9].queues[0].value == "h0");
}

TEST_CASE("parser: empty and malformed documents give no netlist", "[parser]") {
  SECTION("empty") {
    Parsed p = parse("");
    CHECK_FALSE(p.nl.has_value());
    REQUIRE(p.diags.errorCount() == 1);
    CHECK(p.diags.diagnostics()[0].rule == "netlist-structure");
    checkLoc(p.diags.diagnostics()[0].loc, 1, 1);
  }
  SECTION("comments only") {
    Parsed p = parse("# nothing\n# here\n");
    CHECK_FALSE(p.nl.has_value());
    CHECK(p.diags.hasRule("netlist-structure"));
  }
  SECTION("a list") {
    Parsed p = parse("\n- a\n- b\n");
    CHECK_FALSE(p.nl.has_value());
    REQUIRE(p.diags.errorCount() == 1);
    CHECK(p.diags.diagnostics()[0].message == "netlist must be a map of sections, got a list");
    checkLoc(p.diags.diagnostics()[0].loc, 2, 1);
  }
  SECTION("YAML syntax") {
    Parsed p = parse("devices:\n  arch: [grayskull\n");
    CHECK_FALSE(p.nl.has_value());
    REQUIRE(p.diags.errorCount() == 1);
    CHECK(p.diags.diagnostics()[0].rule == "yaml-syntax");
  }
}

TEST_CASE("parser: malformed elements keep a netlist with errors at the right place", "[parser]") {
  // Line 4 col 22 is `x` (after "  q: {entries: 1, t: ", 21 characters); line 5
  // col 7 is the `5` of q2.
  Parsed p = parse(R"(devices: {arch: grayskull}
graphs: {}
queues:
  q: {entries: 1, t: x}
  q2: 5
programs: []
)");
  REQUIRE(p.nl.has_value());
  const Diagnostic* type = findRule(p.diags, "field-type");
  REQUIRE(type != nullptr);
  CHECK(type->message == "queue 'q': field 't' must be an integer, got 'x'");
  checkLoc(type->loc, 4, 22);
  CHECK(p.diags.hasRule("missing-field"));
  // q2 is not a map: reported at its value.
  bool found = false;
  for (const Diagnostic& d : p.diags.diagnostics())
    if (d.message == "queue 'q2': field 'definition' must be a map, got '5'") {
      found = true;
      checkLoc(d.loc, 5, 7);
    }
  CHECK(found);
  // q is kept (with what parsed), q2 is not.
  REQUIRE(p.nl->queues.size() == 1);
  CHECK(p.nl->queues[0].entries.value == 1);
  CHECK_FALSE(p.nl->queues[0].t.present());
}

TEST_CASE("parser: empty TM lists and None mean no TMs", "[parser]") {
  Parsed p = parse(R"(devices: {arch: grayskull}
queues: {}
graphs:
  g:
    target_device: 0
    input_count: 1
    a:
      type: add
      grid_loc: [0, 0]
      grid_size: [1, 1]
      inputs: [x, y]
      in_df: [Float16, Float16]
      out_df: Float16
      intermed_df: Float16
      acc_df: Float16
      math_fidelity: LoFi
      t: 1
      mblock: [1, 1]
      ublock: [1, 1]
      input_0_tms:
      input_1_tms: None
programs: []
)");
  REQUIRE(p.nl.has_value());
  CHECK(p.diags.errorCount() == 0);
  CHECK(p.diags.warningCount() == 0);
  const Op& a = p.nl->graphs.at(0).ops.at(0);
  CHECK(a.inputs.at(0).tms.empty());
  CHECK(a.inputs.at(1).tms.empty());
}

TEST_CASE("parser: a queue named like a YAML 1.1 boolean stays a name", "[parser]") {
  Parsed p = parse("devices: {arch: grayskull}\nqueues:\n  y: {input: n}\n  on: {input: off}\ngraphs: {}\nprograms: []\n");
  REQUIRE(p.nl.has_value());
  REQUIRE(p.nl->queues.size() == 2);
  CHECK(p.nl->queues[0].name == "y");
  CHECK(p.nl->queues[0].input.value == "n");
  CHECK(p.nl->queues[1].name == "on");
  CHECK(p.nl->queues[1].input.value == "off");
}
