// Unit tests of netlistToJson (docs/netlist-json.md) and formatStats. The
// expected values are derived by hand from the inline netlists below.
#include "netlist/json_export.hpp"
#include "netlist/parser.hpp"
#include "netlist/stats.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace tessera;
using namespace tessera::netlist;
using Json = nlohmann::ordered_json;

namespace {

Netlist mustParse(const std::string& text) {
  SourceBuffer source("t.yaml", text);
  DiagnosticEngine diags;
  std::optional<Netlist> nl = parseNetlist(source, diags);
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::Error) FAIL_CHECK(d.message);
  REQUIRE(diags.errorCount() == 0);
  REQUIRE(nl.has_value());
  return std::move(*nl);
}

Json loc(int line, int col) { return Json{{"line", line}, {"col", col}}; }

// Line numbers matter: the loc checks below count from the first line.
const std::string kNetlist = R"(devices:
  arch: [grayskull, wormhole_b]
queues:
  in0: {input: HOST, type: queue, entries: 2, grid_size: [1, 1], t: 1, mblock: [2, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[1, 0x30000000]]}
  big: {input: HOST, type: ram, entries: 1, grid_size: [1, 2], t: 2, mblock: [1, 1], ublock: [2, 2], ublock_order: c, df: Bfp8_b, target_device: 0, loc: dram, dram: [[0, 0xFFFFFFFF00000000], [1, 0x40000000]], layout: flat, tile_dim: [16, 32], alias: in0, my_field: {a: 1}}
  hq: {input: mm, type: queue, entries: 4, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float32, target_device: 0, loc: host, host: [[0, 0x1000]]}
graphs:
  g:
    target_device: 0
    input_count: 2
    mm:
      type: matmul
      grid_loc: [1, 2]
      grid_size: [2, 3]
      inputs: [in0, big]
      in_df: [Float16, Bfp8_b]
      out_df: Float32
      intermed_df: Float16_b
      acc_df: Float16
      math_fidelity: HiFi3
      t: 1
      mblock: [1, 1]
      ublock: [1, 1]
      input_0_tms: [broadcast: {r: 2}, hslice: 3, transpose, tile_broadcast: c]
      input_1_pad: {rt: 1, ct: 2, pad_value: 0.5}
      attributes: {m_k: 2, u_kt: 1, relu_en: true, custom: [1, x]}
    a1: {type: add, grid_loc: [0, 0], grid_size: [1, 2], grid_transpose: true, inputs: [mm, in0], in_df: [Float32, Float16], out_df: Float32, intermed_df: Float32, acc_df: Float32, math_fidelity: LoFi, t: 1, mblock: [1, 1], ublock: [1, 1], buf_size_mb: 2, untilize_output: true}
    a2: {type: add, grid_loc: [3, 0], grid_size: [1, 1], inputs: [a1, in0], in_df: [Float32, Float16], out_df: Float32, intermed_df: Float32, acc_df: Float32, math_fidelity: LoFi, t: 1, mblock: [1, 1], ublock: [1, 1]}
  g2:
    target_device: 0
    input_count: 1
    d0: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], in_df: [Float16], out_df: Float16, intermed_df: Float16, acc_df: Float16, math_fidelity: HiFi4, t: 1, mblock: [1, 1], ublock: [1, 1]}
programs:
  - main:
      - param: [$p]
      - var: [$v]
      - staticvar: {$s: 4}
      - loop: $p
      - execute: {graph_name: g, queue_settings: {in0: {prologue: true, rd_ptr_global: $s, global_rdptr_autoinc: 1}}}
      - varinst: [$s, incwrap, 1, 8]
      - endloop
      - loop: 3
      - allocate_queue: [in0]
      - deallocate_queue: [in0, hq]
      - endloop
      - endprogram
test-config:
  comparison-config:
    type: AllCloseHw
    atol: .inf
    rtol: 0.15
    overrides:
      "hq.*": {type: Exact}
  stimulus-config: {type: Normal, normal_mean: 0.0}
  test-args: {program_loop_count: 2}
performance-check:
  host: {backend-samples-per-second: {expected: 0}}
my-section: [1, 2]
)";

} // namespace

TEST_CASE("netlistToJson: top level", "[netlist][json]") {
  Json j = netlistToJson(mustParse(kNetlist));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"format", "version", "devices", "queues", "graphs", "fused_ops", "programs",
                                         "test_config", "performance_check", "extra_sections"});
  CHECK(j["format"] == "tessera-netlist");
  CHECK(j["version"] == 1);
  CHECK(j["devices"] == Json::parse(R"({"arch": ["grayskull", "wormhole_b0"]})"));
  CHECK(j["fused_ops"] == Json::array());
  CHECK(j["performance_check"] == Json::parse(R"({"host": {"backend-samples-per-second": {"expected": 0}}})"));
  CHECK(j["extra_sections"] == Json::parse(R"({"my-section": [1, 2]})"));
}

TEST_CASE("netlistToJson: queues", "[netlist][json]") {
  Json j = netlistToJson(mustParse(kNetlist));
  REQUIRE(j["queues"].size() == 3);
  const Json& in0 = j["queues"][0];
  CHECK(in0["name"] == "in0");
  CHECK(in0["loc"] == loc(4, 3));
  CHECK(in0["input"] == "HOST");
  CHECK(in0["type"] == "queue");
  CHECK(in0["entries"] == 2);
  CHECK(in0["grid_size"] == Json::array({1, 1}));
  CHECK(in0["mblock"] == Json::array({2, 1}));
  CHECK(in0["df"] == "Float16");
  CHECK(in0["location"] == "dram");
  CHECK(in0["dram"] == Json::parse(R"([{"channel": 1, "address": "0x30000000"}])"));
  CHECK(in0["host"] == Json::array());
  // Defaults filled in.
  CHECK(in0["ublock_order"] == "r");
  CHECK(in0["layout"] == "tilized");
  CHECK(in0["tile_dim"] == Json::array({32, 32}));
  CHECK(in0["alias"] == nullptr);
  CHECK(in0["input_tms"] == Json::array());
  CHECK(in0["extra"] == Json::object());

  const Json& big = j["queues"][1];
  CHECK(big["type"] == "ram");
  CHECK(big["ublock_order"] == "c");
  CHECK(big["df"] == "Bfp8_b");
  // Past 2^53: the exact value survives as a hex string.
  CHECK(big["dram"][0] == Json::parse(R"({"channel": 0, "address": "0xffffffff00000000"})"));
  CHECK(big["dram"][1]["address"] == "0x40000000");
  CHECK(big["layout"] == "flat");
  CHECK(big["tile_dim"] == Json::array({16, 32}));
  CHECK(big["alias"] == "in0");
  CHECK(big["extra"] == Json::parse(R"({"my_field": {"a": 1}})"));

  const Json& hq = j["queues"][2];
  CHECK(hq["location"] == "host");
  CHECK(hq["dram"] == Json::array());
  CHECK(hq["host"] == Json::parse(R"([{"channel": 0, "address": "0x1000"}])"));
}

TEST_CASE("netlistToJson: graphs, ops, TMs, attributes", "[netlist][json]") {
  Json j = netlistToJson(mustParse(kNetlist));
  REQUIRE(j["graphs"].size() == 2);
  const Json& g = j["graphs"][0];
  CHECK(g["name"] == "g");
  CHECK(g["loc"] == loc(8, 3));
  CHECK(g["target_device"] == 0);
  CHECK(g["input_count"] == 2);
  REQUIRE(g["ops"].size() == 3);
  CHECK(g["ops"][0]["name"] == "mm");
  CHECK(g["ops"][1]["name"] == "a1");
  CHECK(g["ops"][2]["name"] == "a2");

  const Json& mm = g["ops"][0];
  CHECK(mm["loc"] == loc(11, 5));
  CHECK(mm["type"] == "matmul");
  CHECK(mm["grid_loc"] == Json::array({1, 2}));
  CHECK(mm["grid_size"] == Json::array({2, 3}));
  CHECK(mm["in_df"] == Json::array({"Float16", "Bfp8_b"}));
  CHECK(mm["out_df"] == "Float32");
  CHECK(mm["intermed_df"] == "Float16_b");
  CHECK(mm["math_fidelity"] == "HiFi3");
  // Defaults filled in.
  CHECK(mm["ublock_order"] == "r");
  CHECK(mm["buf_size_mb"] == 1);
  CHECK(mm["untilize_output"] == false);
  CHECK(mm["grid_transpose"] == false);
  CHECK(mm["gradient_op"] == false);
  CHECK(mm["tile_dim"] == Json::array({32, 32}));
  CHECK(mm["input_buf_min_size_tiles"] == nullptr);
  CHECK(mm["overlay_size"] == nullptr);

  REQUIRE(mm["inputs"].size() == 2);
  const Json& in0 = mm["inputs"][0];
  CHECK(in0["name"] == "in0");
  CHECK(in0["loc"] == loc(15, 16));
  CHECK(in0["tms"] == Json::parse(R"([{"tm": "broadcast", "dim": "r", "factor": 2}, {"tm": "hslice", "factor": 3},
                                      {"tm": "transpose"}, {"tm": "tile_broadcast", "dim": "c"}])"));
  CHECK(in0["pad"] == nullptr);
  CHECK(in0["unpad"] == nullptr);
  const Json& in1 = mm["inputs"][1];
  CHECK(in1["name"] == "big");
  CHECK(in1["tms"] == Json::array());
  CHECK(in1["pad"] == Json::parse(R"({"rt": 1, "ct": 2, "pad_value": 0.5})"));

  CHECK(mm["attributes"] == Json::parse(R"({"m_k": 2, "u_kt": 1, "relu_en": true, "custom": [1, "x"]})"));
  CHECK(mm["unknown_attributes"] == Json::array({"custom"}));

  const Json& a1 = g["ops"][1];
  CHECK(a1["buf_size_mb"] == 2);
  CHECK(a1["untilize_output"] == true);
  CHECK(a1["grid_transpose"] == true);
  CHECK(a1["attributes"] == Json::object());
  CHECK(a1["unknown_attributes"] == Json::array());
}

TEST_CASE("netlistToJson: program instructions", "[netlist][json]") {
  Json j = netlistToJson(mustParse(kNetlist));
  REQUIRE(j["programs"].size() == 1);
  const Json& p = j["programs"][0];
  CHECK(p["name"] == "main");
  CHECK(p["loc"] == loc(34, 5));
  const Json& ins = p["instructions"];
  REQUIRE(ins.size() == 12);
  CHECK(ins[0] == Json::parse(R"({"op": "param", "loc": {"line": 35, "col": 9},
                                  "vars": [{"name": "$p", "loc": {"line": 35, "col": 17}, "init": null}]})"));
  CHECK(ins[1]["op"] == "var");
  CHECK(ins[1]["vars"][0]["init"] == nullptr);
  CHECK(ins[2]["op"] == "staticvar");
  CHECK(ins[2]["vars"][0]["name"] == "$s");
  CHECK(ins[2]["vars"][0]["init"] == 4);
  CHECK(ins[3] == Json::parse(R"({"op": "loop", "loc": {"line": 38, "col": 9}, "count": {"var": "$p"}})"));

  const Json& exec = ins[4];
  CHECK(exec["op"] == "execute");
  CHECK(exec["graph_name"] == "g");
  REQUIRE(exec["queue_settings"].size() == 1);
  const Json& qs = exec["queue_settings"][0];
  CHECK(qs["name"] == "in0");
  CHECK(qs["prologue"] == Json::parse(R"({"value": true})"));
  CHECK(qs["epilogue"] == Json::parse(R"({"value": false})")); // default
  CHECK(qs["zero"] == Json::parse(R"({"value": false})"));
  CHECK(qs["read_only"] == Json::parse(R"({"value": false})"));
  CHECK(qs["rd_ptr_global"] == Json::parse(R"({"var": "$s"})"));
  CHECK(qs["global_rdptr_autoinc"] == Json::parse(R"({"value": 1})"));
  CHECK(qs["rd_ptr_local"] == nullptr);
  CHECK(qs["wr_ptr_global"] == nullptr);
  CHECK(qs["extra"] == Json::object());

  CHECK(ins[5] == Json::parse(R"({"op": "varinst", "loc": {"line": 40, "col": 9}, "out": "$s", "opcode": "incwrap",
                                  "args": [{"value": 1}, {"value": 8}]})"));
  CHECK(ins[6] == Json::parse(R"({"op": "endloop", "loc": {"line": 41, "col": 9}})"));
  CHECK(ins[7]["count"] == Json::parse(R"({"value": 3})"));
  CHECK(ins[8] == Json::parse(R"({"op": "allocate_queue", "loc": {"line": 43, "col": 9}, "queues": ["in0"]})"));
  CHECK(ins[9]["op"] == "deallocate_queue");
  CHECK(ins[9]["queues"] == Json::array({"in0", "hq"}));
  CHECK(ins[11] == Json::parse(R"({"op": "endprogram", "loc": {"line": 46, "col": 9}})"));
}

TEST_CASE("netlistToJson: test-config", "[netlist][json]") {
  Json j = netlistToJson(mustParse(kNetlist));
  const Json& tc = j["test_config"];
  CHECK(tc["loc"] == loc(47, 1));
  const Json& cmp = tc["comparison_config"];
  CHECK(cmp["type"] == "AllCloseHw");
  CHECK(cmp["atol"] == "inf"); // JSON has no infinity; spelled out rather than null
  CHECK(cmp["rtol"] == 0.15);
  CHECK(cmp["check_pct"] == nullptr);
  REQUIRE(cmp["overrides"].size() == 1);
  CHECK(cmp["overrides"][0]["name"] == "hq.*");
  CHECK(cmp["overrides"][0]["type"] == "Exact");
  CHECK(cmp["overrides"][0]["atol"] == nullptr);
  CHECK_FALSE(cmp["overrides"][0].contains("overrides"));
  CHECK(tc["stimulus_config"]["type"] == "Normal");
  CHECK(tc["stimulus_config"]["normal_mean"] == 0.0);
  CHECK(tc["stimulus_config"]["overrides"] == Json::array());
  CHECK(tc["extra"] == Json::parse(R"({"test-args": {"program_loop_count": 2}})"));

  CHECK(netlistToJson(mustParse("devices: {arch: grayskull}\nqueues:\ngraphs:\nprograms:\n"))["test_config"] == nullptr);
}

TEST_CASE("netlistToJson: repeated keys and names", "[netlist][json]") {
  const std::string text = R"(devices: {arch: grayskull}
queues:
  q: {input: HOST, type: queue, entries: 1, entries: 3, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x100]]}
  q: {input: HOST, type: ram, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x200]], x: 1, x: 2}
graphs:
  g:
    target_device: 0
    input_count: 1
    op: {type: matmul, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q], in_df: [Float16], out_df: Float16, intermed_df: Float16, acc_df: Float16, math_fidelity: LoFi, t: 1, mblock: [1, 1], ublock: [1, 1], attributes: {m_k: 1, foo: a, m_k: 2, foo: b}}
programs: []
)";
  Json j = netlistToJson(mustParse(text));
  // Both definitions of `q`, in source order: the duplicate stays visible.
  REQUIRE(j["queues"].size() == 2);
  CHECK(j["queues"][0]["name"] == "q");
  CHECK(j["queues"][0]["loc"] == loc(3, 3));
  CHECK(j["queues"][0]["entries"] == 3); // a repeated field: the later value
  CHECK(j["queues"][1]["name"] == "q");
  CHECK(j["queues"][1]["loc"] == loc(4, 3));
  CHECK(j["queues"][1]["type"] == "ram");
  CHECK(j["queues"][1]["extra"] == Json::parse(R"({"x": 2})"));
  // Attributes: first position, last value; the unknown key is listed once.
  const Json& op = j["graphs"][0]["ops"][0];
  CHECK(op["attributes"].dump() == R"({"m_k":2,"foo":"b"})");
  CHECK(op["unknown_attributes"] == Json::array({"foo"}));
}

TEST_CASE("netlistToJson: fused ops", "[netlist][json]") {
  const std::string text = R"(devices: {arch: grayskull}
queues: {}
graphs: {}
fused_ops:
  0:
    inputs: 2
    intermediates: 1
    schedules:
      -
        - r0: {type: reciprocal, inputs: [input0], mblock: [1, 1], ublock: [2, 1], output: intermed0}
      -
        - m0: {type: multiply, inputs: [input1, intermed0], input_1_tms: [broadcast: {c: 4}], pop_last: [intermed0], mblock: [1, 1], ublock: [2, 4], output: output, t: 2, attributes: {relu_en: false}}
programs: []
)";
  Json j = netlistToJson(mustParse(text));
  REQUIRE(j["fused_ops"].size() == 1);
  const Json& f = j["fused_ops"][0];
  CHECK(f["name"] == "0");
  CHECK(f["loc"] == loc(5, 3));
  CHECK(f["inputs"] == 2);
  CHECK(f["intermediates"] == 1);
  REQUIRE(f["schedules"].size() == 2);
  const Json& r0 = f["schedules"][0][0];
  CHECK(r0["name"] == "r0");
  CHECK(r0["loc"] == loc(10, 11));
  CHECK(r0["output"] == "intermed0");
  CHECK(r0["pop"] == Json::array());
  CHECK(r0["t"] == nullptr);
  const Json& m0 = f["schedules"][1][0];
  CHECK(m0["inputs"][1]["name"] == "intermed0");
  CHECK(m0["inputs"][1]["tms"] == Json::parse(R"([{"tm": "broadcast", "dim": "c", "factor": 4}])"));
  CHECK(m0["pop_last"] == Json::array({"intermed0"}));
  CHECK(m0["ublock"] == Json::array({2, 4}));
  CHECK(m0["t"] == 2);
  CHECK(m0["attributes"] == Json::parse(R"({"relu_en": false})"));
}

TEST_CASE("netlistToJson is deterministic", "[netlist][json]") {
  std::string a = netlistToJson(mustParse(kNetlist)).dump(2);
  std::string b = netlistToJson(mustParse(kNetlist)).dump(2);
  CHECK(a == b);
}

TEST_CASE("netlistToJson survives an empty model", "[netlist][json]") {
  Json j = netlistToJson(Netlist{});
  CHECK(j["queues"] == Json::array());
  CHECK(j["devices"]["arch"] == Json::array());
  CHECK(j["test_config"] == nullptr);
  CHECK(j["performance_check"] == nullptr);
}

TEST_CASE("formatStats: counts, ops by type, cores and bounding boxes", "[netlist][stats]") {
  std::string s = formatStats(mustParse(kNetlist));
  INFO(s);
  CHECK(s.find("archs:     grayskull, wormhole_b0\n") != std::string::npos);
  CHECK(s.find("queues:    3 (queue 2, ram 1; dram 2, host 1)\n") != std::string::npos);
  CHECK(s.find("graphs:    2\n") != std::string::npos);
  CHECK(s.find("ops:       4\n") != std::string::npos);
  CHECK(s.find("fused ops: 0\n") != std::string::npos);
  CHECK(s.find("programs:  1\n") != std::string::npos);
  // add 2; then datacopy and matmul tie at 1 and sort by name.
  CHECK(s.find("ops by type:\n"
               "  type      count\n"
               "  add           2\n"
               "  datacopy      1\n"
               "  matmul        1\n") != std::string::npos);
  // g: mm 2x3 at (1,2) -> rows 1-2, cols 2-4; a1 1x2 transposed -> 2x1 at (0,0);
  // a2 1x1 at (3,0). Cores 6 + 2 + 1 = 9, box (0,0)-(3,4).
  CHECK(s.find("  graph  ops  cores  bbox (r,c)   size\n"
               "  g        3      9  (0,0)-(3,4)  4x5\n"
               "  g2       1      1  (0,0)-(0,0)  1x1\n") != std::string::npos);
}

TEST_CASE("formatStats: queue bytes per DRAM channel", "[netlist][stats]") {
  std::string s = formatStats(mustParse(kNetlist));
  INFO(s);
  // in0: 2 entries * t 1 * mblock 2x1 * ublock 1x1 = 4 Float16 tiles of 2080 bytes + 32 = 8352, on channel 1.
  // big: 1 * t 2 * 1x1 * 2x2 = 8 Bfp8_b tiles of 1120 bytes + 32 = 8992 per buffer, channels 0 and 1.
  // Channel 0: 8992. Channel 1: 8352 + 8992 = 17344. Total 26336 in 3 buffers of 2 queues.
  CHECK(s.find("  device  channel  queues  buffers  bytes      size\n"
               "  0             0       1        1   8992   8.8 KiB\n"
               "  0             1       2        2  17344  16.9 KiB\n"
               "  total                 2        3  26336  25.7 KiB\n") != std::string::npos);
  // hq: 4 Float32 tiles of 4128 bytes + 32 = 16544.
  CHECK(s.find("host queues: 1, buffers 1, bytes 16544 (16.2 KiB)\n") != std::string::npos);
}

TEST_CASE("formatStats: the spec's Float16 example", "[netlist][stats]") {
  const std::string text = R"(devices: {arch: grayskull}
queues:
  q: {input: HOST, type: queue, entries: 2, grid_size: [1, 1], t: 1, mblock: [2, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[3, 0x1000]]}
graphs: {}
programs: []
)";
  std::string s = formatStats(mustParse(text));
  INFO(s);
  // 2 * 2 tiles * 2080 + 32 = 8352.
  CHECK(s.find("  0             3       1        1   8352") != std::string::npos);
}

TEST_CASE("formatStats survives absent and absurd fields", "[netlist][stats]") {
  CHECK_NOTHROW(formatStats(Netlist{}));
  Netlist nl;
  Queue q;
  q.name = "huge";
  q.location.set(IoLocation::Dram, {1, 1});
  q.entries.set(INT64_MAX, {1, 1});
  q.t.set(INT64_MAX, {1, 1});
  q.mblock.set({-5, INT64_MAX}, {1, 1});
  q.ublock.set({INT64_MAX, INT64_MAX}, {1, 1});
  q.df.set(DataFormat::Float32, {1, 1});
  q.dram = {{0, 0, {}}, {0, 0, {}}};
  nl.queues.push_back(q);
  q.mblock.set({INT64_MAX, INT64_MAX}, {1, 1}); // saturates instead of wrapping
  nl.queues.push_back(q);
  Graph g;
  g.name = "g";
  Op op;
  op.gridLoc.set({INT64_MAX, INT64_MIN}, {1, 1});
  op.gridSize.set({INT64_MAX, INT64_MAX}, {1, 1});
  g.ops.push_back(op);
  nl.graphs.push_back(g);
  std::string s;
  REQUIRE_NOTHROW(s = formatStats(nl));
  INFO(s);
  CHECK(s.find("18446744073709551615") != std::string::npos);
}
