// Helpers for the pipegen unit tests: small pipegen.yaml texts, the
// bundled grayskull 10x12 descriptor, stream lookup.
//
// Grayskull 10x12 (lib/device/descriptors/grayskull_10x12.yaml): worker
// [r, c] sits at NOC x = c + 1, y = r + 1 (r < 5) or r + 2 (r >= 5: NOC row
// 6 holds DRAM); DRAM channel 0 is NOC 1-0 (x 1, y 0), channel 1 is 1-6
// (x 1, y 6). L1 is 1 MiB: buffers are placed downward from 0x100000.
#pragma once
#include "device/soc_descriptor.hpp"
#include "pipegen/pipegen.hpp"
#include "pipegen/pipegen_yaml_reader.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>

namespace pgtest {

inline std::string core(int r, int c) { return "[" + std::to_string(r) + ", " + std::to_string(c) + "]"; }

// One buffer document. `type` is the BUDA buffer_type; `more` extra field lines.
inline std::string buffer(uint64_t id, const std::string& type, uint32_t operand, const std::string& coreRc,
                          uint32_t sizeTiles, uint32_t sg, uint32_t epochTiles, const std::string& more = "") {
  return "---\nbuffer_" + std::to_string(id) + ":\n  md_op_name: op" + std::to_string(id % 1000) +
         "\n  buffer_type: " + type + "\n  id: " + std::to_string(operand) + "\n  uniqid: " + std::to_string(id) +
         "\n  epoch_tiles: " + std::to_string(epochTiles) + "\n  chip_id: [0]\n  core_coordinates: " + coreRc +
         "\n  size_tiles: " + std::to_string(sizeTiles) + "\n  scatter_gather_num_tiles: " + std::to_string(sg) +
         "\n  tile_size: 2080\n" + more;
}

inline std::string packer(uint64_t id, int r, int c, uint32_t size, uint32_t sg, uint32_t epoch,
                          const std::string& more = "") {
  return buffer(id, "packer", 16, core(r, c), size, sg, epoch, more);
}
inline std::string unpacker(uint64_t id, int r, int c, uint32_t operand, uint32_t size, uint32_t epoch,
                            const std::string& more = "") {
  return buffer(id, "unpacker", operand, core(r, c), size, 1, epoch, more);
}
// A DRAM queue buffer on channel `chan` at `addr`.
inline std::string queue(uint64_t id, uint32_t size, uint32_t sg, uint32_t epoch, uint32_t slots, uint32_t chan,
                         uint64_t addr, const std::string& more = "") {
  return buffer(id, "dram_io", 0, "[255, 255]", size, sg, epoch,
                "  dram_chan: " + std::to_string(chan) + "\n  dram_addr: " + std::to_string(addr) +
                    "\n  q_slots: " + std::to_string(slots) + "\n  dram_io_flag: 1\n" + more);
}
inline std::string pipeDoc(uint64_t id, const std::string& inputs, const std::string& outputs,
                        const std::string& more = "") {
  return "---\npipe_" + std::to_string(id) + ":\n  id: " + std::to_string(id) + "\n  input_list: " + inputs +
         "\n  output_list: " + outputs + "\n" + more;
}

inline const tessera::SocDescriptor& grayskull() {
  static const tessera::SocDescriptor soc = tessera::loadBundledDescriptor("grayskull_10x12");
  return soc;
}

struct Run {
  tessera::DiagnosticEngine diags;
  std::optional<tessera::pipe::PipegenYaml> doc;
  std::optional<tessera::pipegen::Generated> gen;

  bool has(const std::string& rule) const { return diags.hasRule(rule); }
  std::string messages() const {
    std::string s;
    for (const auto& d : diags.diagnostics()) s += d.rule + ": " + d.message + "\n";
    return s;
  }
};

inline Run run(const std::string& body, tessera::pipegen::GenerateOptions opts = {}) {
  Run r;
  tessera::SourceBuffer src("test.yaml", "graph_name: g\n" + body);
  r.doc = tessera::pipegen::readPipegenYaml(src, r.diags);
  if (r.doc) r.gen = tessera::pipegen::generateBlob(*r.doc, grayskull(), r.diags, opts);
  return r;
}

// One phase per chunk (pipegen --no-chunk-lists), for the tests of how
// windowed chunks become phases.
inline tessera::pipegen::GenerateOptions chunkPerPhase() {
  tessera::pipegen::GenerateOptions o;
  o.chunkLists = false;
  return o;
}

inline tessera::blob::StreamName sn(uint32_t y, uint32_t x, uint32_t id) { return {0, y, x, id}; }

inline const tessera::blob::Stream* stream(const Run& r, uint32_t y, uint32_t x, uint32_t id) {
  if (!r.gen) return nullptr;
  for (const auto& s : r.gen->blob.streams)
    if (s.name == sn(y, x, id)) return &s;
  return nullptr;
}

inline size_t streamCount(const Run& r) { return r.gen ? r.gen->blob.streams.size() : 0; }

} // namespace pgtest
