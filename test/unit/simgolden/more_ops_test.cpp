// The special op types net2hlks generates beyond the first families
// (docs/net2hlks.md): depthwise, the quantization family, ... Each case is
// one op with random inputs, run on the simulated core and compared with
// lib/golden (docs/golden-special-ops.md is the spec of the values).
#include "matrix_cases.hpp"

#include "support/file_io.hpp"

#include <filesystem>

using namespace simgolden;

#ifndef TESSERA_SIMGOLDEN_CORPUS
#define TESSERA_SIMGOLDEN_CORPUS "../shared/corpus"
#endif

namespace {

// depthwise: output [2 x C] tiles (mblock [2, mbC] x ublock [1, ubC]),
// input 0 [2 x m_k*C], input 1 [m_k x C]; bias: input 2 shaped like the output.
OneOp depthwise(int mK, const std::string& df, const std::string& acc, const std::string& fidelity, bool bias,
                const std::string& order = "r", int mbC = 2, int ubC = 2) {
  OneOp o;
  o.type = "depthwise";
  const int c = mbC * ubC;
  o.inDf = {df, df};
  o.inBlock = {"t: 2, mblock: [2, " + std::to_string(mK * c) + "], ublock: [1, 1]",
               "t: 2, mblock: [" + std::to_string(mK) + ", " + std::to_string(c) + "], ublock: [1, 1]"};
  if (bias) {
    o.inDf.push_back(df);
    o.inBlock.push_back("");
  }
  o.accDf = acc;
  o.outDf = df;
  o.intermedDf = df;
  o.fidelity = fidelity;
  o.block = "t: 2, mblock: [2, " + std::to_string(mbC) + "], ublock: [1, " + std::to_string(ubC) + "]";
  o.ublockOrder = order;
  o.attrs = "m_k: " + std::to_string(mK) + ", u_kt: 1" + std::string(bias ? ", bias: true" : "");
  return o;
}

OneOp quant(const std::string& type, const std::string& inDf, const std::string& outDf, const std::string& zp) {
  OneOp o;
  o.type = type;
  o.inDf = {inDf, "Float32"};
  o.accDf = "Int32";
  o.outDf = outDf;
  o.intermedDf = "Int32";
  o.block = "t: 2, mblock: [2, 1], ublock: [2, 2]";
  o.attrs = "zero_point: " + zp;
  return o;
}

} // namespace

TEST_CASE("sim vs golden: depthwise", "[simgolden][depthwise]") {
  std::vector<Case> cases;
  cases.push_back({"depthwise m_k 3 Float16_b", depthwise(3, "Float16_b", "Float16_b", "HiFi4", false), Expect::Close, {-1, 1}});
  cases.push_back({"depthwise m_k 2 bias Float16 HiFi2 order c", depthwise(2, "Float16", "Float16", "HiFi2", true, "c"),
                   Expect::Close, {-1, 1}});
  cases.push_back({"depthwise m_k 1 bias Bfp8_b LoFi", depthwise(1, "Bfp8_b", "Float16_b", "LoFi", true, "r", 1, 4),
                   Expect::Close, {-1, 1}});
  cases.push_back({"depthwise m_k 2 Float32 dest", depthwise(2, "Float32", "Float32", "HiFi4", true, "c", 4, 1),
                   Expect::Close, {-2, 2}});
  OneOp i = depthwise(2, "Int8", "Int32", "HiFi4", false);
  i.outDf = "Int32";
  i.intermedDf = "Int32";
  cases.push_back({"depthwise m_k 2 Int8 -> Int32", i, Expect::Exact, {-127, 127}});
  runCases(cases);
}

TEST_CASE("sim vs golden: quantization family ops", "[simgolden][quant]") {
  std::vector<Case> cases;
  // Scales stay positive and small enough that some values saturate at +-127.
  cases.push_back({"quantization Float32 -> Int8", quant("quantization", "Float32", "Int8", "3.7"), Expect::Exact, {},
                   {{-10, 10}, {0.5f, 20}}});
  cases.push_back({"quantization Float16_b -> Float16_b (no Int8 rounding)",
                   quant("quantization", "Float16_b", "Float16_b", "-1.25"), Expect::Exact, {}, {{-10, 10}, {0.5f, 20}}});
  cases.push_back({"requantization Int32 -> Int8", quant("requantization", "Int32", "Int8", "-2"), Expect::Exact, {},
                   {{-5000, 5000}, {0.001f, 0.05f}}});
  cases.push_back({"dequantization Int32 -> Float32", quant("dequantization", "Int32", "Float32", "5"), Expect::Exact, {},
                   {{-1000, 1000}, {0.001f, 0.5f}}});
  cases.push_back({"dequantization Int8 -> Float32", quant("dequantization", "Int8", "Float32", "-0.5"), Expect::Exact, {},
                   {{-127, 127}, {0.01f, 2}}});
  runCases(cases);
}

TEST_CASE("sim vs golden: requant/dequant matmul", "[simgolden][quant][matmul]") {
  std::vector<Case> cases;
  for (const char* kind : {"requant", "dequant"}) {
    // Int8 x Int8, m_k 2 (partial sums through the Int32 spill), scale input last.
    OneOp m = matmul(2, 2, "Int8", "Int32", "HiFi4", std::string(", ") + kind + ": true, zero_point: 3");
    m.inDf.push_back("Float32");
    m.inBlock.push_back("");
    m.intermedDf = "Int32";
    m.outDf = std::string(kind) == "requant" ? "Int8" : "Float32";
    cases.push_back({std::string(kind) + " matmul Int8", m, Expect::Exact, {}, {{-127, 127}, {-127, 127}, {0.0005f, 0.02f}}});
  }
  // With bias (Int32, element-wise) before the requant step.
  OneOp b = matmul(1, 3, "Int8", "Int32", "HiFi4", ", bias: true, requant: true, zero_point: -7");
  b.inDf.push_back("Int32");
  b.inBlock.push_back("");
  b.inDf.push_back("Float32");
  b.inBlock.push_back("");
  b.intermedDf = "Int32";
  b.outDf = "Int8";
  cases.push_back({"requant matmul Int8 with bias", b, Expect::Exact, {}, {{-127, 127}, {-127, 127}, {-20000, 20000}, {0.0005f, 0.02f}}});
  runCases(cases);
}

TEST_CASE("sim vs golden: binary op with a transposed input 0", "[simgolden][binary]") {
  std::vector<Case> cases;
  for (const char* type : {"add", "subtract", "multiply", "maximum"}) {
    OneOp o = binary(type, "Float16_b", "Float16_b");
    o.inTms = {"[transpose]", ""};
    o.block = "t: 1, mblock: [2, 2], ublock: [2, 1]";
    o.inBlock = {"t: 1, mblock: [1, 4], ublock: [2, 1]", ""};  // 2 x 4 tiles, transposed to the op's 4 x 2
    cases.push_back({std::string(type) + " transposed input 0", o, Expect::Exact, {-4, 4}});
  }
  OneOp f = binary("subtract", "Float32", "Float32");
  f.inTms = {"[transpose]", "[tile_broadcast: r]"};
  f.block = "t: 2, mblock: [1, 2], ublock: [2, 2]";
  f.inBlock = {"t: 2, mblock: [2, 1], ublock: [2, 2]", ""};
  cases.push_back({"subtract Float32 transposed input 0, tile_broadcast input 1", f, Expect::Exact, {-4, 4}});
  runCases(cases);
}

TEST_CASE("sim vs golden: dropout p = 0 and tilizer (copies)", "[simgolden][unary]") {
  std::vector<Case> cases;
  OneOp d = unary("dropout", "Float16_b", "Float16_b");
  d.attrs = "p: 0";
  cases.push_back({"dropout p 0", d, Expect::Exact, {-3, 3}});
  // A Float16_b dest rounds Float16 values before the packer's Bfp8: close, not exact.
  cases.push_back({"tilizer Float16 -> Bfp8", unary("tilizer", "Float16", "Float16_b", "Bfp8"), Expect::Close, {-3, 3}});
  cases.push_back({"tilizer Float16_b", unary("tilizer", "Float16_b", "Float16_b"), Expect::Exact, {-3, 3}});
  runCases(cases);
}

// The corpus op tests of these op types (one core each), with their own
// comparison-config and stimulus bounds.
TEST_CASE("sim vs golden: corpus special ops", "[simgolden][corpus][quant][depthwise]") {
  const std::string root = std::string(TESSERA_SIMGOLDEN_CORPUS) + "/netlists/verif/op_tests/netlists/";
  if (!std::filesystem::exists(root)) {
    WARN("no corpus at " << root << ": skipped");
    return;
  }
  const std::pair<const char*, const char*> files[] = {
      {"depthwise/netlist_depthwise_op_bias.yaml", "op0"},
      {"depthwise/netlist_depthwise_op_int.yaml", "op"},
      {"depthwise/netlist_depthwise_op_relu.yaml", "op0"},
      {"netlist_int32_dequant.yaml", "op0"},
      {"netlist_int32_quant.yaml", "op0"},
      {"netlist_int32_requant.yaml", "op0"},
      {"kernel_t_bcast/netlist_int32_requant_t_bcast.yaml", "op0"},
      {"netlist_matmul_int32_requant_no_bias.yaml", "op0"},
      {"kernel_t_bcast/netlist_matmul_acc_z_kernel_t_bcast.yaml", "op"},
      {"netlist_pad_tm.yaml", "op0"},
      {"netlist_tilizer_1x1_slow_push.yaml", "tilizer_0"},
      {"fused_op/wormhole_b0/netlist_fused_op_quant_dequant.yaml", ""},
      {"fused_op/wormhole_b0/netlist_fused_op_requantization_int8.yaml", ""},
  };
  Session s;
  for (const auto& [file, op] : files) {
    auto text = tessera::readFile(root + file);
    REQUIRE(text);
    Request r;
    r.label = file;
    r.sourceName = file;
    r.netlistText = *text;
    r.op = op;
    r.entries = 1;
    r.netlistStimulus = true;
    s.add(std::move(r));
  }
  s.compile();
  for (size_t i = 0; i < s.size(); ++i) {
    Outcome o = s.run(i);
    if (verbose()) std::cout << summaryLine(s.request(i), o) << std::endl << (verbose() > 1 ? o.report : "");
    INFO(summaryLine(s.request(i), o) << "\n" << o.report);
    CHECK(o.pass);
  }
}
