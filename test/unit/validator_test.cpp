// Unit tests of validateNetlist (lib/netlist/validator) against the bundled
// grayskull_10x12 descriptor (10 worker rows x 12 columns, DRAM channels
// 0..7 of 1 GiB). Each rule is shown to fire on a bad variant and to stay
// quiet on the corresponding good one.
#include "device/soc_descriptor.hpp"
#include "netlist/parser.hpp"
#include "netlist/validator.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace tessera;
using namespace tessera::netlist;

namespace {

// One input queue in0 -> op0 (nop) -> out0, every shape [t=1, 4x4 tiles].
// ${...} placeholders are replaced by the test; defaults make it valid.
const std::string kTemplate = R"(devices:
  arch: [grayskull, wormhole_b0]
queues:
  in0:  {input: HOST, type: ${IN_TYPE}, entries: 1, grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [2, 2], df: ${IN_DF}, target_device: 0, loc: dram, dram: [[${IN_CH}, ${IN_ADDR}]]}
  out0: {input: op0, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [2, 2], df: ${OUT_DF}, target_device: 0, loc: dram, dram: [[1, 0x10000000]]}
graphs:
  g0:
    target_device: 0
    input_count: 1
    op0: {type: nop, grid_loc: ${GRID_LOC}, grid_size: ${GRID_SIZE}, grid_transpose: ${TRANSPOSE}, inputs: [in0], in_df: [${IN_DF}], out_df: ${OP_DF}, intermed_df: ${OP_DF}, acc_df: ${ACC_DF}, math_fidelity: HiFi4, t: 1, mblock: ${MBLOCK}, ublock: ${UBLOCK}}
programs:
  - main:
${PARAMS}      - var: {$c0: 0}
${PROGRAM}      - execute: {graph_name: g0, queue_settings: {in0: {prologue: false, epilogue: false, zero: false, rd_ptr_global: $c0${LOCAL_PTR}${EXTRA_SETTINGS}}}}
${PROGRAM_END})";

std::string makeNetlist(std::map<std::string, std::string> subs) {
  std::map<std::string, std::string> all = {
      {"IN_TYPE", "queue"},    {"IN_DF", "Float16"},   {"IN_CH", "0"},          {"IN_ADDR", "0x10000000"},
      {"OUT_DF", "Float16"},   {"OP_DF", "Float16"},   {"ACC_DF", "Float16"},   {"GRID_LOC", "[0, 0]"},
      {"GRID_SIZE", "[1, 1]"}, {"TRANSPOSE", "false"}, {"MBLOCK", "[2, 2]"},    {"UBLOCK", "[2, 2]"},
      {"PROGRAM", ""},         {"PROGRAM_END", ""},    {"EXTRA_SETTINGS", ""},  {"PARAMS", ""},
      {"LOCAL_PTR", ", rd_ptr_local: $c0"},
  };
  for (auto& [k, v] : subs) all[k] = v;
  std::string text = kTemplate;
  for (auto& [k, v] : all) {
    const std::string key = "${" + k + "}";
    for (size_t pos; (pos = text.find(key)) != std::string::npos;) text.replace(pos, key.size(), v);
  }
  REQUIRE(text.find("${") == std::string::npos);
  return text;
}

struct Checked {
  DiagnosticEngine diags;
  std::string dump() const {
    std::string s;
    for (const Diagnostic& d : diags.diagnostics())
      s += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + " " + d.message + " [" + d.rule + "]\n";
    return s;
  }
};

const SocDescriptor& grayskull() {
  static const SocDescriptor soc = loadBundledDescriptor("grayskull_10x12");
  return soc;
}

const SocDescriptor& wormholeB0() {
  static const SocDescriptor soc = loadBundledDescriptor("wormhole_b0_8x10");
  return soc;
}

Checked validate(const std::string& text, Arch arch = Arch::Grayskull, const SocDescriptor* device = nullptr) {
  Checked c;
  SourceBuffer source("v.yaml", text);
  std::optional<Netlist> nl = parseNetlist(source, c.diags);
  INFO(c.dump());
  REQUIRE(nl.has_value());
  REQUIRE(c.diags.errorCount() == 0); // the parser is not under test here
  ValidationTarget target{arch, device ? device : &grayskull()};
  validateNetlist(*nl, target, c.diags);
  return c;
}

void expectClean(const Checked& c) {
  INFO(c.dump());
  CHECK(c.diags.errorCount() == 0);
  CHECK(c.diags.warningCount() == 0);
}

void expectOnly(const Checked& c, const std::string& rule, size_t count = 1) {
  INFO(c.dump());
  CHECK(c.diags.hasRule(rule));
  CHECK(c.diags.errorCount() == count);
  for (const Diagnostic& d : c.diags.diagnostics()) CHECK(d.rule == rule);
}

} // namespace

TEST_CASE("validator: the descriptor is the expected one", "[validator]") {
  const SocDescriptor& soc = grayskull();
  CHECK(soc.workerRows == 10);
  CHECK(soc.workerCols == 12);
  CHECK(soc.dramChannelCount() == 8);
  CHECK(soc.dramBankSize == 1073741824);
}

TEST_CASE("validator: the template netlist is valid", "[validator]") {
  expectClean(validate(makeNetlist({})));
}

TEST_CASE("validator: grid-bounds", "[validator]") {
  // The bottom-right worker (row 9, column 11) is inside; one past is not.
  expectClean(validate(makeNetlist({{"GRID_LOC", "[9, 11]"}})));
  expectOnly(validate(makeNetlist({{"GRID_LOC", "[10, 0]"}})), "grid-bounds");
  expectOnly(validate(makeNetlist({{"GRID_LOC", "[0, 12]"}})), "grid-bounds");
  expectOnly(validate(makeNetlist({{"GRID_LOC", "[0, -1]"}})), "grid-bounds");
  // grid_size [2, 1] with mblock [1, 2] keeps the 4x4 shape. At row 8 it fits;
  // transposed to [1, 2] it needs columns 11..12 at column 11.
  expectClean(validate(makeNetlist({{"GRID_LOC", "[8, 11]"}, {"GRID_SIZE", "[2, 1]"}, {"MBLOCK", "[1, 2]"}})));
  Checked t = validate(
      makeNetlist({{"GRID_LOC", "[8, 11]"}, {"GRID_SIZE", "[2, 1]"}, {"MBLOCK", "[1, 2]"}, {"TRANSPOSE", "true"}}));
  expectOnly(t, "grid-bounds");
  REQUIRE(!t.diags.diagnostics().empty());
  const Diagnostic& d = t.diags.diagnostics()[0];
  CHECK(d.message == "op 'op0': grid_loc [8, 11] with grid_size [2, 1] (transposed) extends past the 10x12 worker "
                     "grid of grayskull_10x12");
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].message == "the op occupies rows 8..8, columns 11..12");
  CHECK_FALSE(d.notes[0].loc.valid());
  // Line 10 is op0; "    op0: {type: nop, grid_loc: " is 31 characters.
  CHECK(d.loc.line == 10);
  CHECK(d.loc.col == 32);
}

TEST_CASE("validator: ublock-fits-dest", "[validator]") {
  // mblock x ublock must stay 4x4 tiles for the shapes to match.
  expectClean(validate(makeNetlist({{"MBLOCK", "[1, 2]"}, {"UBLOCK", "[4, 2]"}}))); // 8 tiles, 16-bit
  expectOnly(validate(makeNetlist({{"MBLOCK", "[1, 1]"}, {"UBLOCK", "[4, 4]"}})), "ublock-fits-dest"); // 16
  // Float32 accumulation halves it to 4 (wormhole_b0: no acc-df-arch warning).
  expectClean(validate(makeNetlist({{"ACC_DF", "Float32"}}), Arch::WormholeB0, &wormholeB0())); // [2, 2] = 4
  Checked c = validate(makeNetlist({{"ACC_DF", "Float32"}, {"MBLOCK", "[1, 2]"}, {"UBLOCK", "[4, 2]"}}), Arch::WormholeB0,
                       &wormholeB0());
  expectOnly(c, "ublock-fits-dest");
  REQUIRE(!c.diags.diagnostics().empty());
  CHECK(c.diags.diagnostics()[0].message ==
        "op 'op0': ublock [4, 2] holds 8 tiles but dest holds 4 with Float32 accumulation (half of dest: math and "
        "pack double-buffer it)");
}

TEST_CASE("validator: dram-channel and dram-address", "[validator]") {
  expectClean(validate(makeNetlist({{"IN_CH", "7"}})));
  expectOnly(validate(makeNetlist({{"IN_CH", "8"}})), "dram-channel");
  // 1 entry x 16 tiles x 2080 bytes + 32 = 33312 bytes; 1 GiB - 33312 = 0x3fff7de0.
  expectClean(validate(makeNetlist({{"IN_ADDR", "0x3fff7de0"}})));
  Checked c = validate(makeNetlist({{"IN_ADDR", "0x3fff7de1"}}));
  expectOnly(c, "dram-address");
  REQUIRE(!c.diags.diagnostics().empty());
  CHECK(c.diags.diagnostics()[0].message ==
        "queue 'in0': buffer 0 at 0x3fff7de1 (33312 bytes) does not fit DRAM channel 0 of 1073741824 bytes");
}

TEST_CASE("validator: df-mismatch and in-df-mismatch", "[validator]") {
  expectOnly(validate(makeNetlist({{"OUT_DF", "Float16_b"}})), "df-mismatch");
  // The op reads in0 as Float16_b while in0 holds Float16.
  Checked c = validate(makeNetlist({{"IN_DF", "Float16"}, {"OP_DF", "Float16"}}));
  expectClean(c);
  std::string text = makeNetlist({});
  text.replace(text.find("in_df: [Float16]"), 16, "in_df: [Float16_b]");
  expectOnly(validate(text), "in-df-mismatch");
}

TEST_CASE("validator: format-arch depends on the target", "[validator]") {
  std::map<std::string, std::string> ints = {
      {"IN_DF", "Int8"}, {"OUT_DF", "Int8"}, {"OP_DF", "Int8"}, {"ACC_DF", "Int32"}};
  // in0 df, out0 df, op0 in_df, out_df, intermed_df, acc_df: six uses.
  expectOnly(validate(makeNetlist(ints)), "format-arch", 6);
  expectClean(validate(makeNetlist(ints), Arch::WormholeB0, &wormholeB0()));
}

TEST_CASE("validator: acc-df-arch: grayskull has no 32-bit dest", "[validator]") {
  expectOnly(validate(makeNetlist({{"ACC_DF", "Float32"}})), "acc-df-arch");
  expectClean(validate(makeNetlist({{"ACC_DF", "Float32"}}), Arch::WormholeB0, &wormholeB0()));
}

TEST_CASE("validator: shape-mismatch between a queue and its producer", "[validator]") {
  std::string text = makeNetlist({});
  // out0 becomes [t=1, 4x2 tiles].
  text.replace(text.find("mblock: [2, 2], ublock: [2, 2], df: Float16, target_device: 0, loc: dram, dram: [[1,"), 14,
               "mblock: [2, 1]");
  Checked c = validate(text);
  expectOnly(c, "shape-mismatch");
  REQUIRE(!c.diags.diagnostics().empty());
  const Diagnostic& d = c.diags.diagnostics()[0];
  CHECK(d.message == "queue 'out0' holds [t=1, 4x2 tiles] but its producer op 'op0' writes [t=1, 4x4 tiles]");
  CHECK(d.loc.line == 5);
  CHECK(d.loc.col == 3);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].loc.line == 10);
  CHECK(d.notes[0].loc.col == 5);
}

TEST_CASE("validator: program rules", "[validator]") {
  SECTION("loop-balance") {
    expectClean(validate(makeNetlist({{"PROGRAM", "      - loop: 2\n"}, {"PROGRAM_END", "      - endloop\n"}})));
    expectOnly(validate(makeNetlist({{"PROGRAM", "      - loop: 2\n"}})), "loop-balance");
    expectOnly(validate(makeNetlist({{"PROGRAM_END", "      - endloop\n"}})), "loop-balance");
  }
  SECTION("loop-count") {
    expectClean(validate(makeNetlist({{"PROGRAM", "      - loop: 0\n"}, {"PROGRAM_END", "      - endloop\n"}})));
    expectOnly(validate(makeNetlist({{"PROGRAM", "      - loop: -1\n"}, {"PROGRAM_END", "      - endloop\n"}})),
               "loop-count");
  }
  SECTION("undeclared-variable") {
    expectOnly(validate(makeNetlist({{"PROGRAM", "      - loop: $n\n"}, {"PROGRAM_END", "      - endloop\n"}})),
               "undeclared-variable");
    expectClean(validate(makeNetlist(
        {{"PARAMS", "      - param: [$n]\n"}, {"PROGRAM", "      - loop: $n\n"}, {"PROGRAM_END", "      - endloop\n"}})));
    // A param after other instructions is a program-syntax error.
    expectOnly(validate(makeNetlist(
                   {{"PROGRAM", "      - param: [$n]\n      - loop: $n\n"}, {"PROGRAM_END", "      - endloop\n"}})),
               "program-syntax");
  }
  SECTION("queue-settings-field") {
    // A ram needs wr_ptr_global and has no rd_ptr_local; a queue needs rd_ptr_local and has no wr_ptr_global.
    expectOnly(validate(makeNetlist({{"IN_TYPE", "ram"}, {"LOCAL_PTR", ""}})), "queue-settings-field");
    expectClean(validate(makeNetlist({{"IN_TYPE", "ram"}, {"LOCAL_PTR", ""}, {"EXTRA_SETTINGS", ", wr_ptr_global: $c0"}})));
    expectOnly(validate(makeNetlist({{"IN_TYPE", "ram"}, {"EXTRA_SETTINGS", ", wr_ptr_global: $c0"}})),
               "queue-settings-field");
    expectOnly(validate(makeNetlist({{"EXTRA_SETTINGS", ", wr_ptr_global: $c0"}})), "queue-settings-field");
    expectOnly(validate(makeNetlist({{"LOCAL_PTR", ""}})), "queue-settings-field");
  }
  SECTION("static-property-variable") {
    std::string text = makeNetlist({});
    text.replace(text.find("prologue: false"), 15, "prologue: $c0");
    expectOnly(validate(text), "static-property-variable");
  }
}

TEST_CASE("validator: arch of the target is not what the netlist lists", "[validator]") {
  // validateNetlist itself does not check devices.arch (the driver does):
  // a wormhole_b0 target on this grayskull+wormhole_b0 netlist is fine.
  expectClean(validate(makeNetlist({}), Arch::WormholeB0, &wormholeB0()));
}
