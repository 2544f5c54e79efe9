// pipegen.yaml reader: fields, BUDA shapes, positions, every error class.
#include "pipegen_test_util.hpp"

#include "pipe/pipegen_yaml_writer.hpp"

using namespace tessera;
using namespace tessera::pipegen;

namespace {

struct Parsed {
  DiagnosticEngine diags;
  std::optional<pipe::PipegenYaml> doc;
};

Parsed parse(const std::string& text) {
  Parsed p;
  SourceBuffer src("t.yaml", text);
  p.doc = readPipegenYaml(src, p.diags, 3);
  return p;
}

const Diagnostic* first(const Parsed& p, const std::string& rule) {
  for (const auto& d : p.diags.diagnostics())
    if (d.rule == rule) return &d;
  return nullptr;
}

// A BUDA-shaped file (abridged from the anchors' netlist_unary_single_tile).
const char* kBuda = R"(graph_name: test_unary
---
buffer_104000000000:  # Op unary0: [r=0, c=0], kernel input buf 0
  md_op_name: unary0
  buffer_type: unpacker
  id: 0
  uniqid: 104000000000
  epoch_tiles: 1
  tiles_per_input: 1
  chip_id: [0]
  core_coordinates: [0, 0]
  size_tiles: 2
  scatter_gather_num_tiles: 1
  is_scatter: 0
  replicate: 0
  tile_size: 2080
  tile_clear_granularity: 1
  dram_addr: 0
  untilized_output_type_0_zdim: 0
---
buffer_103000000000:  # Queue q0: r = 0, c = 0
  md_op_name: q0
  buffer_type: dram_io
  id: 0
  uniqid: 103000000000
  epoch_tiles: 1
  chip_id: [0]
  core_coordinates: [255, 255]
  size_tiles: 4
  scatter_gather_num_tiles: 2
  tiles_per_input: 4
  is_scatter: 1
  replicate: 2
  tile_size: 2080
  prefetch_type: -1
  dram_chan: 3
  dram_addr: 0x11000000
  q_slots: 7
  dram_io_flag: 1
---
pipe_106000000000:  # Op: unary0, input 0
  id: 106000000000
  input_list: [103000000000, 103000000002]
  pipe_periodic_repeat: 2
  pipe_consumer_repeat: 1
  output_list: [[104000000000], [104000000000]]
  incoming_noc_id: 0
  outgoing_noc_id: 1
  outgoing_vc: 2
  incoming_vc: 3
  mcast_core_rc: [[0, 0, 0], [0, 0, 0]]
  dram_pipe_total_readers: [1, 1]
  dram_pipe_reader_index: [0, 0]
  dram_pipe_num_forks: 1
)";

} // namespace

TEST_CASE("reader: BUDA-shaped documents", "[pipegen][reader]") {
  Parsed p = parse(kBuda);
  INFO(p.diags.diagnostics().size());
  REQUIRE(p.doc);
  CHECK(p.diags.warningCount() == 0); // every field is Tessera's or BUDA's
  const pipe::PipegenYaml& d = *p.doc;
  CHECK(d.graphName == "test_unary");
  CHECK(d.epoch == 3);
  REQUIRE(d.buffers.size() == 2);
  REQUIRE(d.pipes.size() == 1);

  const pipe::Buffer& u = d.buffers[0];
  CHECK(u.uniqid == 104000000000ull);
  CHECK(u.comment == "Op unary0: [r=0, c=0], kernel input buf 0");
  CHECK(u.pos.line == 3);
  CHECK(u.pos.column == 1);
  CHECK(u.bufferType == pipe::BufferType::Unpacker);
  CHECK(u.sizeTiles == 2);
  CHECK(u.tileClearGranularity == 1);
  REQUIRE(u.extra.size() == 1); // untilized_output_type_0_zdim: BUDA-only, kept
  CHECK(u.extra[0].key == "untilized_output_type_0_zdim");
  CHECK(u.extra[0].pos.line == 19);

  const pipe::Buffer& q = d.buffers[1];
  CHECK(q.bufferType == pipe::BufferType::DramIo);
  CHECK(q.core.r == 255);
  CHECK(q.isScatter);
  CHECK(q.replicate == 2);
  CHECK(q.dramChan == 3);
  CHECK(q.dramAddr == 0x11000000ull);
  CHECK(q.qSlots == 7);
  CHECK(q.prefetchType == 0); // -1 does not fit: kept verbatim in extra
  REQUIRE(q.extra.size() == 1);
  CHECK(q.extra[0].key == "prefetch_type");
  CHECK(q.extra[0].value == "-1");
  CHECK(d.dialect == pipe::Dialect::Buda); // no data_format anywhere
  CHECK(periodTiles(q, d.dialect) == 4);
  CHECK(periodTiles(u, d.dialect) == 1);
  CHECK(entryTiles(q, d.dialect) == 2);
  CHECK(epochTotalTiles(q, pipe::Dialect::Buda) == 2);    // one chunk's share x replicate 2
  CHECK(epochTotalTiles(q, pipe::Dialect::Tessera) == 1);

  const pipe::Pipe& pp = d.pipes[0];
  CHECK(pp.id == 106000000000ull);
  CHECK(pp.inputList == std::vector<uint64_t>{103000000000ull, 103000000002ull});
  CHECK(pp.outputListNested);
  REQUIRE(pp.outputList.size() == 2);
  CHECK(pp.outputList[1] == std::vector<uint64_t>{104000000000ull});
  CHECK(pp.pipePeriodicRepeat == 2);
  CHECK(pp.outgoingNocId == 1);
  CHECK(pp.incomingVc == 3);
  REQUIRE(pp.mcastCoreRc.size() == 2);
  CHECK(pp.mcastCoreRc[0] == std::vector<uint32_t>{0, 0, 0});
  CHECK(pp.dramPipeTotalReaders == std::vector<uint32_t>{1, 1});
  REQUIRE(pp.extra.size() == 1);
  CHECK(pp.extra[0].key == "dram_pipe_num_forks");
}

TEST_CASE("reader: Tessera additions and unknown fields", "[pipegen][reader]") {
  std::string text = "graph_name: g\n" +
                     pgtest::buffer(5, "dram_io", 0, "[255, 255]", 1, 1, 1,
                                    "  data_format: Float16_b\n  is_padding: 1\n  padding_value: -0.5\n  tile_sz: 3\n");
  Parsed p = parse(text);
  REQUIRE(p.doc);
  const pipe::Buffer& b = p.doc->buffers[0];
  CHECK(b.dataFormat == std::optional<std::string>("Float16_b"));
  CHECK(p.doc->dialect == pipe::Dialect::Tessera);
  CHECK(b.isPadding);
  CHECK(b.paddingValue == std::optional<double>(-0.5));
  REQUIRE(b.extra.size() == 1);
  CHECK(b.extra[0].key == "tile_sz");
  const Diagnostic* w = first(p, "unknown-field");
  REQUIRE(w);
  CHECK(w->severity == Severity::Warning);
  CHECK(w->loc.line == 17);
  CHECK(w->loc.col == 3);
}

TEST_CASE("reader: separators, comments and CRLF", "[pipegen][reader]") {
  Parsed p = parse("graph_name: g\r\n--- # first\r\n" + pgtest::buffer(7, "packer", 16, "[0, 1]", 2, 1, 4) + "...\n");
  REQUIRE(p.doc);
  CHECK(p.doc->buffers.size() == 1);
  CHECK(p.doc->buffers[0].core.c == 1);
}

TEST_CASE("reader: errors carry positions", "[pipegen][reader]") {
  SECTION("YAML syntax, line counted across documents") {
    Parsed p = parse("graph_name: g\n---\nbuffer_1:\n  md_op_name: [unclosed\n");
    CHECK_FALSE(p.doc);
    const Diagnostic* d = first(p, "yaml-syntax");
    REQUIRE(d);
    CHECK(d->loc.line >= 4);
  }
  SECTION("missing field points at the document") {
    Parsed p = parse("graph_name: g\n---\nbuffer_1:\n  md_op_name: x\n  buffer_type: packer\n");
    CHECK_FALSE(p.doc);
    const Diagnostic* d = first(p, "pipegen-yaml");
    REQUIRE(d);
    CHECK(d->loc.line == 3);
    CHECK(d->message.find("missing field 'core_coordinates'") != std::string::npos);
  }
  SECTION("bad value points at the value") {
    std::string t = "graph_name: g\n" + pgtest::packer(9, 0, 0, 2, 1, 4);
    t.replace(t.find("size_tiles: 2"), 13, "size_tiles: two");
    Parsed p = parse(t);
    CHECK_FALSE(p.doc);
    const Diagnostic* d = first(p, "pipegen-yaml");
    REQUIRE(d);
    CHECK(d->loc.line == 11);
    CHECK(d->loc.col == 15);
    CHECK(d->message == "size_tiles must be an unsigned integer, found 'two'");
  }
  SECTION("out of range") {
    std::string t = "graph_name: g\n" + pgtest::packer(9, 0, 0, 2, 1, 4);
    t.replace(t.find("size_tiles: 2"), 13, "size_tiles: 4294967296");
    Parsed p = parse(t);
    REQUIRE(first(p, "pipegen-yaml"));
    CHECK(first(p, "pipegen-yaml")->message.find("out of range") != std::string::npos);
  }
  SECTION("uniqid must match the document name") {
    std::string t = "graph_name: g\n" + pgtest::packer(9, 0, 0, 2, 1, 4);
    t.replace(t.find("uniqid: 9"), 9, "uniqid: 8");
    Parsed p = parse(t);
    REQUIRE(first(p, "pipegen-yaml"));
    CHECK(first(p, "pipegen-yaml")->message == "buffer_9: uniqid 8 does not match the document name");
  }
  SECTION("duplicate buffer") {
    Parsed p = parse("graph_name: g\n" + pgtest::packer(9, 0, 0, 2, 1, 4) + pgtest::packer(9, 0, 1, 2, 1, 4));
    const Diagnostic* d = first(p, "pipegen-yaml");
    REQUIRE(d);
    CHECK(d->message == "buffer 9 is defined twice");
    REQUIRE(d->notes.size() == 1);
    CHECK(d->notes[0].loc.line == 3);
  }
  SECTION("unknown buffer in a pipe points at the list entry") {
    Parsed p = parse("graph_name: g\n" + pgtest::packer(900, 0, 0, 2, 1, 4) + pgtest::pipeDoc(1000, "[900, 7]", "[900]"));
    CHECK_FALSE(p.doc);
    const Diagnostic* d = first(p, "unknown-buffer");
    REQUIRE(d);
    CHECK(d->message == "pipe 1000: input 7 names no buffer");
    CHECK(d->loc.line == 17);
    CHECK(d->loc.col == 21);
  }
  SECTION("offset beyond the period") {
    // Period of a non-scatter buffer = its chunk (1 tile): offset 1 is past it.
    Parsed p = parse("graph_name: g\n" + pgtest::packer(900, 0, 0, 2, 1, 4) + pgtest::pipeDoc(1000, "[901]", "[900]"));
    const Diagnostic* d = first(p, "unknown-buffer");
    REQUIRE(d);
    CHECK(d->message.find("has a period of 1 tiles") != std::string::npos);
  }
  SECTION("unknown output") {
    Parsed p = parse("graph_name: g\n" + pgtest::packer(900, 0, 0, 2, 1, 4) + pgtest::pipeDoc(1000, "[900]", "[[5], [900]]"));
    const Diagnostic* d = first(p, "unknown-buffer");
    REQUIRE(d);
    CHECK(d->message == "pipe 1000: output 5 names no buffer");
  }
  SECTION("documents that are not maps, unknown documents, no graph_name") {
    Parsed p = parse("- 1\n---\nfoo: 2\n");
    CHECK_FALSE(p.doc);
    CHECK(p.diags.errorCount() == 2);
    Parsed q = parse(pgtest::packer(9, 0, 0, 2, 1, 4));
    REQUIRE(first(q, "pipegen-yaml"));
    CHECK(first(q, "pipegen-yaml")->message == "missing graph_name (the first document)");
  }
  SECTION("bad document names and types") {
    Parsed p = parse("graph_name: g\n---\nbuffer_x1: {}\n---\npipe_3: 4\n---\npipe_4: {input_list: 5, output_list: []}\n");
    CHECK_FALSE(p.doc);
    CHECK(p.diags.errorCount() == 4);
  }
}

TEST_CASE("reader: dialect says how a file with data formats counts tiles", "[pipegen][reader]") {
  const std::string body = pgtest::buffer(5, "dram_io", 0, "[255, 255]", 1, 1, 1, "  data_format: Float16_b\n");
  // A BUDA file with formats added (loader --pipes-from) keeps BUDA's counting.
  Parsed buda = parse("graph_name: g\ndialect: buda\n" + body);
  REQUIRE(buda.doc);
  CHECK(buda.doc->dialect == pipe::Dialect::Buda);
  CHECK(buda.doc->buffers[0].dataFormat == std::optional<std::string>("Float16_b"));
  Parsed ours = parse("graph_name: g\ndialect: tessera\n" + pgtest::buffer(5, "dram_io", 0, "[255, 255]", 1, 1, 1));
  REQUIRE(ours.doc);
  CHECK(ours.doc->dialect == pipe::Dialect::Tessera);
  Parsed bad = parse("graph_name: g\ndialect: yaml\n" + body);
  CHECK_FALSE(bad.doc);
  const Diagnostic* e = first(bad, "pipegen-yaml");
  REQUIRE(e);
  CHECK(e->message.find("dialect must be buda or tessera, found 'yaml'") != std::string::npos);
  CHECK(e->loc.line == 2);
  // The writer says `dialect: buda` only for a BUDA document, so our own files do not change.
  CHECK(pipe::writePipegenYaml(*buda.doc).find("\ndialect: buda\n") != std::string::npos);
  CHECK(pipe::writePipegenYaml(*ours.doc).find("dialect") == std::string::npos);
}
