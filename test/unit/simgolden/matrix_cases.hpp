// Shared by the matrix tests (matrix_test.cpp, the default set, and
// extended_test.cpp, the hidden [.extended] set): the case type, one-op
// netlist builders per family, and the loop that compiles a family's kernels
// in one batch and checks each case against the reference.
#pragma once
#include "simgolden.hpp"

#include <catch2/catch.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace simgolden {

struct Case {
  std::string label;
  OneOp op;
  Expect expect = Expect::Exact;
  Range range{};
  std::vector<Range> inputRanges{};
  int entries = 0;
};

// Runs every case of a family: one batch compile, then each case.
inline void runCases(const std::vector<Case>& cases) {
  Session s;
  for (const Case& c : cases) {
    Request r;
    r.label = c.label;
    r.netlistText = netlistOf(c.op);
    r.sourceName = c.label + ".yaml";
    r.expect = c.expect;
    r.range = c.range;
    r.inputRanges = c.inputRanges;
    r.entries = c.entries;
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

// A unary op on a [2, 2] x [1, 2] block; out_df defaults to in_df.
inline OneOp unary(const std::string& type, const std::string& df, const std::string& acc, const std::string& out = "") {
  OneOp o;
  o.type = type;
  o.inDf = {df};
  o.accDf = acc;
  o.outDf = out.empty() ? df : out;
  o.block = "t: 1, mblock: [2, 2], ublock: [1, 2]";
  return o;
}

// A binary op on a [2, 1] x [2, 2] block, in_df = out_df.
inline OneOp binary(const std::string& type, const std::string& df, const std::string& acc,
                    const std::string& fidelity = "HiFi4") {
  OneOp o;
  o.type = type;
  o.inDf = {df, df};
  o.accDf = acc;
  o.outDf = df;
  o.fidelity = fidelity;
  o.block = "t: 1, mblock: [2, 1], ublock: [2, 2]";
  return o;
}

// Output 4x4 tiles (mblock [2, 2] x ublock [2, 2]) of in0 [4 x K] x in1 [K x 4], K = m_k * u_kt.
inline OneOp matmul(int mK, int uKt, const std::string& df, const std::string& acc, const std::string& fidelity,
                    const std::string& extraAttrs = "") {
  OneOp o;
  o.type = "matmul";
  const std::string k = std::to_string(mK * uKt);
  o.inDf = {df, df};
  o.inBlock = {"t: 1, mblock: [4, " + k + "], ublock: [1, 1]", "t: 1, mblock: [" + k + ", 4], ublock: [1, 1]"};
  o.accDf = acc;
  o.outDf = df;
  o.intermedDf = df;
  o.fidelity = fidelity;
  o.block = "t: 1, mblock: [2, 2], ublock: [2, 2]";
  o.attrs = "m_k: " + std::to_string(mK) + ", u_kt: " + std::to_string(uKt) + extraAttrs;
  return o;
}

// Reduce over r (input [K x 4] tiles, output one tile row) or c (input
// [4 x K], one tile column), K = m_k * u_kt.
inline OneOp reduceRc(const std::string& dim, const std::string& type, const std::string& df, const std::string& acc,
                      int mK, int uKt) {
  OneOp o;
  o.type = "reduce";
  o.inDf = {df};
  o.accDf = acc;
  o.outDf = df;
  const std::string k = std::to_string(mK * uKt);
  if (dim == "r") {
    o.inBlock = {"t: 1, mblock: [" + k + ", 4], ublock: [1, 1]"};
    o.block = "t: 1, mblock: [1, 2], ublock: [1, 2]";
  } else {
    o.inBlock = {"t: 1, mblock: [4, " + k + "], ublock: [1, 1]"};
    o.block = "t: 1, mblock: [2, 1], ublock: [2, 1]";
  }
  o.attrs = "dim: " + dim + ", type: " + type + ", m_k: " + std::to_string(mK) + ", u_kt: " + std::to_string(uKt);
  return o;
}

// Reduce over z: input t 4, output t 2.
inline OneOp reduceZ(const std::string& type, const std::string& df, const std::string& acc) {
  OneOp o;
  o.type = "reduce";
  o.inDf = {df};
  o.accDf = acc;
  o.outDf = df;
  o.inBlock = {"t: 4, mblock: [2, 2], ublock: [1, 2]"};
  o.block = "t: 2, mblock: [2, 2], ublock: [1, 2]";
  o.attrs = "dim: z, type: " + type + ", z: 2";
  return o;
}

} // namespace simgolden
