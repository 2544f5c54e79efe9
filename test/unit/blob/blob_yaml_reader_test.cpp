// lib/blob reader: Tessera and BUDA blob.yaml into BlobYaml, the BUDA flag
// normalization, multicast rectangles, the dram_blob merge, diagnostics with
// positions, the per-core split, and every anchor blob.yaml of the corpus.
#include "blob/blob_binary.hpp"
#include "blob/blob_yaml_reader.hpp"
#include "device/device_contract.h"
#include "device/soc_descriptor.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tessera;
using namespace tessera::blob;

namespace {

const SocDescriptor& grayskull() {
  static const SocDescriptor d = loadBundledDescriptor("grayskull_10x12");
  return d;
}

struct Read {
  std::optional<BlobYaml> yaml;
  DiagnosticEngine diags;
  BlobYamlSourceMap map;
};

std::unique_ptr<Read> read(const std::string& text, const SocDescriptor* device = &grayskull()) {
  auto r = std::make_unique<Read>();
  SourceBuffer source("blob.yaml", text);
  BlobReadOptions opts;
  opts.device = device;
  r->yaml = readBlobYaml(source, r->diags, opts, &r->map);
  return r;
}

std::string diagText(const DiagnosticEngine& d) {
  std::string s;
  for (const Diagnostic& x : d.diagnostics())
    s += std::to_string(x.loc.line) + ":" + std::to_string(x.loc.col) + ": [" + x.rule + "] " + x.message + "\n";
  return s;
}

const StreamPhase& phaseOf(const BlobYaml& y, StreamName name, size_t k = 0) {
  for (const Stream& s : y.streams)
    if (s.name == name) return s.phases.at(k);
  FAIL("no stream " << streamNameString(name));
  throw 0;
}

std::string extraOf(const StreamPhase& p, const std::string& key) {
  for (const ExtraField& e : p.extra)
    if (e.key == key) return e.value;
  return "<absent>";
}

// Tessera's own spelling: explicit roles, explicit receivers, data_format.
const char* const kTessera = R"(# written by pipegen
dram_blob: {}
phase_0:
  chip_0__y_1__x_1__stream_id_24:   # op0 output
    phase_id: 0
    source_endpoint: true
    remote_receiver: true
    dest: [chip_0__y_1__x_2__stream_id_8, chip_0__y_2__x_1__stream_id_8]
    num_msgs: 4
    msg_size: 2080
    buf_addr: 0x30000
    buf_size: 8320
    num_iters_in_epoch: 2
    pipe_id: 7
    buf_id: 9
    outgoing_data_noc: 1
    vc: 2
    data_format: Float16_b
  chip_0__y_1__x_2__stream_id_8:
    phase_id: 0
    remote_source: true
    local_receiver: true
    src: chip_0__y_1__x_1__stream_id_24
    num_msgs: 4
    msg_size: 2080
    buf_addr: 0x40000
    buf_size: 4160
    data_format: 2
  chip_0__y_2__x_1__stream_id_8:
    remote_source: true
    local_receiver: true
    src: [chip_0__y_1__x_1__stream_id_24]
    num_msgs: 4
    msg_size: 2080
    buf_addr: 0x40000
    buf_size: 4160
phase_1:
  chip_0__y_1__x_1__stream_id_24:
    phase_id: 1
    source_endpoint: true
    dram_output: true
    dram_buf_noc_addr: 0x100000020
    dram_buf_size_q_slots: 2
    dram_buf_size_tiles: 4
    dram_buf_write_chunk_size_tiles: 1
    num_msgs: 4
    msg_size: 2080
    buf_addr: 0x30000
    buf_size: 8320
    src_period_tiles: 8
    src_tile_offset: 4
    src_period_done: true
    intermediate: false
)";

// A BUDA pipegen2 excerpt (anchors: netlist_matmul_min_buffer_input and
// netlist_softmax_single_tile_exp_recip), trimmed.
const char* const kBuda = R"(dram_blob:
  chip_0__y_8__x_1__stream_id_0:
    0:
      dram_buf_noc_addr: 0x4102caa80
      dram_buf_read_chunk_size_tiles: 4
      dram_buf_size_bytes: 53760
      dram_buf_size_q_slots: 2
      dram_buf_size_tiles: 48
      dram_input: true
      dram_io: true
      msg_size: 1120
      num_msgs: 96
      reader_index: 1
      total_readers: 3
    1:
      dram_buf_noc_addr: 0x4102cb000
      dram_buf_read_chunk_size_tiles: 8
      dram_buf_size_q_slots: 5
      dram_buf_size_tiles: 48
      dram_input: true
      reader_index: 2
      total_readers: 3
global_info_blob:
phase_0:
  chip_0__y_8__x_1__stream_id_0:
    phase_id: 0
    buf_addr: 0xd88c0
    buf_size: 26880
    data_auto_send: true
    dest_data_buf_no_flow_ctrl: false
    dest: [chip_0__y_1__x_1__stream_id_9,chip_0__y_8__x_1__stream_id_9]
    dram_buf_noc_addr: 0x4102cb000
    dram_input: true
    dram_io: true
    incoming_data_noc: 1
    linked: true
    msg_info_buf_addr: 0x1b000
    msg_size: 1120
    num_mcast_dests: 7
    num_iters_in_epoch: 1
    num_msgs: 96
    outgoing_data_noc: 1
    pipe_id: 410000000000
    remote_receiver: true
    source_endpoint: true
    vc: 4
  chip_0__y_1__x_3__stream_id_8:
    phase_id: 0
    buf_addr: 0xf7dc0
    buf_id: 106000000000
    buf_size: 33280
    local_receiver: true
    msg_size: 2080
    num_iters_in_epoch: 1
    num_msgs: 1
    remote_source: true
    src: chip_0__y_1__x_1__stream_id_24
    fork_stream_ids: [24, 40]
  chip_0__y_1__x_5__stream_id_0:
    phase_id: 0
    arb_group_size: 1
    buf_addr: 0x0
    buf_size: 0
    dest: [chip_0__y_1__x_5__stream_id_8]
    local_sources_connected: true
    msg_size: 2080
    num_msgs: 2
    num_iters_in_epoch: 1
    remote_receiver: true
    src: chip_0__y_1__x_5__stream_id_40
  chip_0__y_1__x_3__stream_id_24:
    phase_id: 0
    buf_addr: 0xf6d80
    buf_size: 4160
    dram_buf_noc_addr: 0x122000000
    dram_output: true
    receiver_endpoint: true
    source_endpoint: true
    msg_size: 2080
    num_msgs: 1
  chip_0__y_1__x_1__stream_id_8:
    phase_id: 0
    buf_addr: 0xefbc0
    buf_size: 66560
    dram_buf_noc_addr: 0x120000000
    dram_input: true
    receiver_endpoint: true
    source_endpoint: true
    msg_size: 2080
    num_msgs: 1
# the other ends of the pipes above (BUDA writes them all; trimmed here)
phase_9:
  chip_0__y_1__x_1__stream_id_9: {source_endpoint: true, local_receiver: true}
  chip_0__y_2__x_1__stream_id_9: {source_endpoint: true, local_receiver: true}
  chip_0__y_3__x_1__stream_id_9: {source_endpoint: true, local_receiver: true}
  chip_0__y_4__x_1__stream_id_9: {source_endpoint: true, local_receiver: true}
  chip_0__y_5__x_1__stream_id_9: {source_endpoint: true, local_receiver: true}
  chip_0__y_7__x_1__stream_id_9: {source_endpoint: true, local_receiver: true}
  chip_0__y_8__x_1__stream_id_9: {source_endpoint: true, local_receiver: true}
  chip_0__y_1__x_1__stream_id_24: {source_endpoint: true, local_receiver: true}
  chip_0__y_1__x_5__stream_id_40: {source_endpoint: true, local_receiver: true}
  chip_0__y_1__x_5__stream_id_8: {source_endpoint: true, local_receiver: true}
)";

}  // namespace

TEST_CASE("stream names", "[blob][yaml]") {
  CHECK(parseStreamName("chip_0__y_1__x_12__stream_id_24") == StreamName{0, 1, 12, 24});
  CHECK(parseStreamName("chip_3__y_0__x_0__stream_id_0") == StreamName{3, 0, 0, 0});
  CHECK_FALSE(parseStreamName("chip_0__y_1__x_12__stream_id_"));
  CHECK_FALSE(parseStreamName("chip_0__y_1__x_12"));
  CHECK_FALSE(parseStreamName("chip_0__y_1__x_12__stream_id_24x"));
  CHECK_FALSE(parseStreamName("chip_0__y_-1__x_12__stream_id_24"));
  CHECK_FALSE(parseStreamName("chip_0__y_99999999999__x_1__stream_id_2"));
  CHECK_FALSE(parseStreamName("chip_0_y_1_x_1_stream_id_2"));
  CHECK(streamNameString(StreamName{0, 1, 12, 24}) == "chip_0__y_1__x_12__stream_id_24");
}

TEST_CASE("Tessera blob.yaml: every modelled field", "[blob][yaml]") {
  auto r = read(kTessera);
  INFO(diagText(r->diags));
  REQUIRE(r->yaml);
  CHECK(r->diags.errorCount() == 0);
  CHECK(r->diags.warningCount() == 0);
  const BlobYaml& y = *r->yaml;
  REQUIRE(y.streams.size() == 3);
  // sorted by name: (chip, y, x, stream)
  CHECK(y.streams[0].name == StreamName{0, 1, 1, 24});
  CHECK(y.streams[1].name == StreamName{0, 1, 2, 8});
  CHECK(y.streams[2].name == StreamName{0, 2, 1, 8});
  REQUIRE(y.streams[0].phases.size() == 2);

  const StreamPhase& p = y.streams[0].phases[0];
  CHECK(p.phaseId == 0);
  CHECK(p.sourceEndpoint);
  CHECK(p.remoteReceiver);
  CHECK_FALSE(p.localReceiver);
  CHECK(p.dest == std::vector<StreamName>{{0, 1, 2, 8}, {0, 2, 1, 8}});
  CHECK(p.numMsgs == 4);
  CHECK(p.msgSize == 2080);
  CHECK(p.bufAddr == 0x30000);
  CHECK(p.bufSize == 8320);
  CHECK(p.numItersInEpoch == 2);
  CHECK(p.pipeId == 7);
  CHECK(p.bufId == 9);
  CHECK(p.outgoingDataNoc == 1);
  CHECK(p.vc == 2);
  CHECK(p.dataFormat == contract::kFloat16_b);
  CHECK(p.extra.empty());

  const StreamPhase& q = y.streams[0].phases[1];
  CHECK(q.phaseId == 1);
  CHECK(q.dramOutput);
  CHECK(q.dramBufNocAddr == 0x100000020ull);
  CHECK(q.dramBufSizeQSlots == 2);
  CHECK(q.dramBufSizeTiles == 4);
  CHECK(q.dramChunkTiles == 1);
  CHECK(q.numItersInEpoch == 1);  // default
  CHECK(q.srcPeriodTiles == 8);
  CHECK(q.srcTileOffset == 4);
  CHECK(q.srcPeriodDone);
  CHECK_FALSE(q.intermediate);
  CHECK(q.extra.empty());
  CHECK(p.srcPeriodTiles == 0);
  CHECK_FALSE(p.srcPeriodDone);

  CHECK(y.streams[1].phases[0].src == std::vector<StreamName>{{0, 1, 1, 24}});
  CHECK(y.streams[1].phases[0].dataFormat == 2);
  CHECK(y.streams[2].phases[0].src == std::vector<StreamName>{{0, 1, 1, 24}});
  CHECK(y.streams[2].phases[0].phaseId == 0);  // from phase_0 when phase_id is absent

  // The source map points at each stream's first key.
  CHECK(r->map.streams.at(StreamName{0, 1, 1, 24}) == SourceLoc{4, 3});
  CHECK(r->map.streams.at(StreamName{0, 1, 2, 8}) == SourceLoc{19, 3});
}

TEST_CASE("BUDA blob.yaml: normalization, multicast rectangle, dram_blob merge, extra", "[blob][yaml]") {
  auto r = read(kBuda);
  INFO(diagText(r->diags));
  REQUIRE(r->yaml);
  CHECK(r->diags.warningCount() == 0);
  const BlobYaml& y = *r->yaml;
  REQUIRE(y.dramBlob.size() == 2);
  CHECK(y.dramBlob[0].index == 0);
  CHECK(y.dramBlob[0].dramBufSizeBytes == 53760);
  CHECK(y.dramBlob[0].input);
  CHECK(y.dramBlob[1].index == 1);

  // DRAM reader that multicasts: [y1 x1 .. y8 x1] holds 7 grayskull workers
  // (y 6 is not a worker row); source_endpoint dropped beside dram_input.
  const StreamPhase& m = phaseOf(y, {0, 8, 1, 0});
  CHECK(m.dramInput);
  CHECK_FALSE(m.sourceEndpoint);
  CHECK(m.remoteReceiver);
  CHECK(m.dest == std::vector<StreamName>{{0, 1, 1, 9}, {0, 2, 1, 9}, {0, 3, 1, 9}, {0, 4, 1, 9},
                                          {0, 5, 1, 9}, {0, 7, 1, 9}, {0, 8, 1, 9}});
  // Merged from dram_blob entry 1 (same dram_buf_noc_addr), not entry 0.
  CHECK(m.dramBufSizeQSlots == 5);
  CHECK(m.dramChunkTiles == 8);
  CHECK(m.dramReaderIndex == 2);
  CHECK(m.dramTotalReaders == 3);
  CHECK(m.dramBufSizeTiles == 48);
  CHECK(m.pipeId == 410000000000ull);
  CHECK(extraOf(m, "linked") == "true");
  CHECK(extraOf(m, "msg_info_buf_addr") == "0x1b000");
  CHECK(extraOf(m, "num_mcast_dests") == "<absent>");

  const StreamPhase& g = phaseOf(y, {0, 1, 3, 8});
  CHECK(g.remoteSource);
  CHECK(g.localReceiver);
  CHECK(g.src == std::vector<StreamName>{{0, 1, 1, 24}});
  CHECK(extraOf(g, "fork_stream_ids") == "[24, 40]");

  // BUDA's local-source gather: src without remote_source -> remote_source.
  const StreamPhase& l = phaseOf(y, {0, 1, 5, 0});
  CHECK(l.remoteSource);
  CHECK(l.remoteReceiver);
  CHECK(extraOf(l, "local_sources_connected") == "true");

  const StreamPhase& w = phaseOf(y, {0, 1, 3, 24});
  CHECK(w.sourceEndpoint);
  CHECK(w.dramOutput);
  CHECK_FALSE(w.localReceiver);

  // dram_input + receiver_endpoint -> local_receiver
  const StreamPhase& i = phaseOf(y, {0, 1, 1, 8});
  CHECK(i.dramInput);
  CHECK(i.localReceiver);
  CHECK_FALSE(i.sourceEndpoint);
  CHECK(i.dramTotalReaders == 1);  // no dram_blob entry: the model default
}

TEST_CASE("without a device, a multicast rectangle is every coordinate", "[blob][yaml]") {
  auto r = read(kBuda, nullptr);
  REQUIRE_FALSE(r->yaml);
  CHECK_THAT(diagText(r->diags),
             Catch::Contains("[blob-mcast] chip_0__y_8__x_1__stream_id_0 phase_0: num_mcast_dests is 7 but the "
                             "rectangle chip_0__y_1__x_1__stream_id_9 .. chip_0__y_8__x_1__stream_id_9 holds 8 worker cores"));
}

TEST_CASE("split per core, then encode and decode every core", "[blob][yaml]") {
  auto r = read(kTessera);
  REQUIRE(r->yaml);
  std::vector<CoreBlob> cores = splitByCore(*r->yaml, 3);
  REQUIRE(cores.size() == 3);
  CHECK(cores[0].y == 1);
  CHECK(cores[0].x == 1);
  CHECK(cores[1].y == 1);
  CHECK(cores[1].x == 2);
  CHECK(cores[2].y == 2);
  CHECK(cores[2].x == 1);
  for (const CoreBlob& c : cores) {
    CHECK(c.epoch == 3);
    REQUIRE(checkEncodable(c).empty());
    std::vector<uint8_t> bytes = wordsToBytes(encodeCoreBlob(c));
    auto d = decodeCoreBlob(bytes);
    INFO((d ? "" : d.error()));
    REQUIRE(d);
    REQUIRE(d->streams.size() == c.streams.size());
    CHECK(d->streams[0].phases.size() == c.streams[0].phases.size());
    CHECK(d->streams[0].phases[0].dest == c.streams[0].phases[0].dest);
  }
}

TEST_CASE("reader diagnostics carry line:col and a rule", "[blob][yaml]") {
  struct Case {
    std::string text;
    std::string expect;
  };
  const std::string head = "phase_0:\n  chip_0__y_1__x_1__stream_id_24:\n";
  const std::string ok = "    source_endpoint: true\n    local_receiver: true\n";
  const Case cases[] = {
      {"", "1:1: [blob-yaml] empty blob.yaml"},
      {"[1, 2]\n", "1:1: [blob-yaml] expected a map with dram_blob and phase_<n> sections"},
      {"phase_0: [a]\n", "1:10: [blob-yaml] phase_0: expected a map of streams"},
      {"phase_x:\n", "1:1: [blob-yaml] 'phase_x' is not a phase section"},
      {"phase_0:\n  core_1:\n    a: 1\n", "2:3: [blob-stream-name] 'core_1' is not a stream name"},
      {"phase_0:\n  chip_0__y_1__x_1__stream_id_64:\n" + ok,
       "2:3: [blob-stream-name] chip_0__y_1__x_1__stream_id_64: stream id 64 is out of range"},
      {head + ok + "    num_msgs: -1\n",
       "5:15: [blob-field] chip_0__y_1__x_1__stream_id_24 phase_0: num_msgs: expected an unsigned 32-bit integer, got '-1'"},
      {head + ok + "    buf_addr: 0x100000000\n", "5:15: [blob-field] chip_0__y_1__x_1__stream_id_24 phase_0: buf_addr: expected an unsigned 32-bit"},
      {head + ok + "    vc: [1]\n", "5:9: [blob-field] chip_0__y_1__x_1__stream_id_24 phase_0: vc: expected a scalar value"},
      {head + ok + "    dram_ram: maybe\n", "5:15: [blob-field] chip_0__y_1__x_1__stream_id_24 phase_0: dram_ram: expected true or false, got 'maybe'"},
      {head + ok + "    data_format: Float17\n", "5:18: [blob-field] chip_0__y_1__x_1__stream_id_24 phase_0: data_format: 'Float17' is not a data format"},
      {head + "    source_endpoint: true\n    remote_receiver: true\n    dest: [chip_0__y_1__x_2__stream_id_8, bogus]\n",
       "5:43: [blob-field] chip_0__y_1__x_1__stream_id_24 phase_0: dest: 'bogus' is not a stream name"},
      {head + ok + "    phase_id: 3\n", "5:15: [blob-phase-id] chip_0__y_1__x_1__stream_id_24 phase_0: phase_id 3 differs from the enclosing phase_0"},
      {head + ok + "    num_msgs: 1\n    num_msgs: 2\n", "6:5: [blob-duplicate] chip_0__y_1__x_1__stream_id_24 phase_0: field 'num_msgs' appears twice"},
      {head + ok + head.substr(9), "5:3: [blob-duplicate] chip_0__y_1__x_1__stream_id_24 phase_0: the stream appears twice in this phase"},
      {head + "    local_receiver: true\n", "2:3: [blob-phase-role] chip_0__y_1__x_1__stream_id_24 phase_0: no source"},
      {head + "    source_endpoint: true\n", "2:3: [blob-phase-role] chip_0__y_1__x_1__stream_id_24 phase_0: no destination"},
      {head + "    source_endpoint: true\n    remote_receiver: true\n",
       "2:3: [blob-phase-role] chip_0__y_1__x_1__stream_id_24 phase_0: remote_receiver phase without dest"},
      {head + "    remote_source: true\n    local_receiver: true\n",
       "2:3: [blob-phase-role] chip_0__y_1__x_1__stream_id_24 phase_0: remote_source phase without src"},
      {head + "    dram_input: true\n    local_receiver: true\n",
       "2:3: [blob-dram] chip_0__y_1__x_1__stream_id_24 phase_0: dram_input phase without dram_buf_noc_addr"},
      {head + "    source_endpoint: true\n    remote_receiver: true\n    dest: [chip_0__y_1__x_2__stream_id_8]\n",
       "5:11: [blob-dangling] chip_0__y_1__x_1__stream_id_24 phase_0: dest chip_0__y_1__x_2__stream_id_8 is not a stream of this blob.yaml"},
      {"phase_0:\n  chip_0__y_0__x_0__stream_id_8:\n" + ok,
       "2:3: [blob-core] stream chip_0__y_0__x_0__stream_id_8: core (y 0, x 0) is not a worker core of grayskull_10x12"},
      {head + "    source_endpoint: true\n    remote_receiver: true\n    dest: [chip_0__y_6__x_2__stream_id_8]\n",
       "5:11: [blob-core] chip_0__y_1__x_1__stream_id_24 phase_0: dest chip_0__y_6__x_2__stream_id_8: core (y 6, x 2) is not a worker"},
      {head + "    source_endpoint: true\n    remote_receiver: true\n    num_mcast_dests: 3\n"
              "    dest: [chip_0__y_1__x_2__stream_id_8]\n",
       "6:11: [blob-mcast] chip_0__y_1__x_1__stream_id_24 phase_0: with num_mcast_dests, dest must be [start, end]"},
      {head + "    source_endpoint: true\n    remote_receiver: true\n    num_mcast_dests: 3\n"
              "    dest: [chip_0__y_1__x_2__stream_id_8, chip_0__y_1__x_3__stream_id_9]\n",
       "differ in chip or stream id"},
      {"dram_blob:\n  chip_0__y_1__x_1__stream_id_8:\n    x:\n      a: 1\n", "3:5: [blob-yaml] dram_blob: chip_0__y_1__x_1__stream_id_8: expected a buffer index"},
      {"dram_blob:\n  chip_0__y_1__x_1__stream_id_8:\n    0:\n      msg_size: big\n", "4:17: [blob-field] dram_blob: chip_0__y_1__x_1__stream_id_8 0: msg_size: expected an unsigned 32-bit integer"},
      {"phase_0:\n  chip_0__y_1__x_1__stream_id_8: {a: [\n", "[yaml-syntax]"},
  };
  for (const Case& c : cases) {
    auto r = read(c.text);
    INFO(c.text);
    std::string got = diagText(r->diags);
    INFO(got);
    CHECK_FALSE(r->yaml);
    CHECK_THAT(got, Catch::Contains(c.expect));
  }
}

TEST_CASE("warnings: unknown sections, more than one destination", "[blob][yaml]") {
  auto r = read("stuff: 1\nphase_0:\n  chip_0__y_1__x_1__stream_id_32:\n    dram_input: true\n"
                "    local_receiver: true\n    dram_output: true\n    dram_buf_noc_addr: 0x1\n");
  INFO(diagText(r->diags));
  REQUIRE(r->yaml);
  CHECK(r->diags.warningCount() == 2);
  CHECK_THAT(diagText(r->diags), Catch::Contains("1:1: [blob-unknown-key] unknown section 'stuff' (ignored)"));
  CHECK_THAT(diagText(r->diags),
             Catch::Contains("3:3: [blob-phase-role] chip_0__y_1__x_1__stream_id_32 phase_0: more than one destination "
                             "(local_receiver dram_output)"));
}

// Every BUDA pipegen2 blob.yaml of the corpus anchors parses and encodes.
TEST_CASE("every anchor blob.yaml parses and every core encodes within the limit", "[blob][yaml][corpus]") {
  namespace fs = std::filesystem;
  fs::path root = fs::path(__FILE__).parent_path() / "../../../../shared/corpus/anchor-artifacts/grayskull";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    WARN("corpus not found at " << root.string() << ": skipped");
    return;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root, ec))
    if (e.path().filename() == "blob.yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  CHECK(files.size() == 159);
  size_t cores = 0, phases = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = read(ss.str());
    INFO(f.string() << "\n" << diagText(r->diags));
    REQUIRE(r->yaml);
    REQUIRE(r->diags.errorCount() == 0);
    for (const CoreBlob& c : splitByCore(*r->yaml, 0)) {
      ++cores;
      REQUIRE(checkEncodable(c).empty());
      REQUIRE(encodedSizeBytes(c) <= contract::kOverlayBlobSize);
      std::vector<uint8_t> bytes = wordsToBytes(encodeCoreBlob(c));
      auto d = decodeCoreBlob(bytes);
      INFO((d ? "" : d.error()));
      REQUIRE(d);
      for (const Stream& s : d->streams) phases += s.phases.size();
    }
  }
  // python3: sum of phases over every phase_<n> of the 159 files
  CHECK(phases == 8615);
  CHECK(cores > 159);
}

TEST_CASE("padding, freed tiles and untilize fields are typed, not extra", "[blob][yaml]") {
  auto r = read(
      "phase_0:\n"
      "  chip_0__y_1__x_1__stream_id_8: {dram_input: true, local_receiver: true, dram_buf_noc_addr: 0x100600000,\n"
      "    dram_ram: true, dram_padding: true, padding_value: -0.375, num_msgs: 1, msg_size: 2080}\n"
      "  chip_0__y_1__x_1__stream_id_24: {source_endpoint: true, dram_output: true, dram_buf_noc_addr: 0x700030000000,\n"
      "    src_period_tiles: 4, src_tile_offset: 0, src_period_done: false, src_freed_tiles: 3,\n"
      "    untilize_r_dim: 2, untilize_c_dim: 1, untilize_full_r_dim: 4, untilize_full_c_dim: 3, untilize_z_dim: 5}\n");
  INFO(diagText(r->diags));
  REQUIRE(r->yaml);
  const StreamPhase& pad = phaseOf(*r->yaml, StreamName{0, 1, 1, 8});
  CHECK(pad.dramPadding);
  CHECK(pad.paddingValue == -0.375f);
  CHECK(extraOf(pad, "dram_padding") == "<absent>");
  const StreamPhase& u = phaseOf(*r->yaml, StreamName{0, 1, 1, 24});
  CHECK(u.srcFreedTiles == 3);
  CHECK(u.untilizeRDim == 2);
  CHECK(u.untilizeCDim == 1);
  CHECK(u.untilizeFullRDim == 4);
  CHECK(u.untilizeFullCDim == 3);
  CHECK(u.untilizeZDim == 5);
  CHECK(u.extra.empty());
}

TEST_CASE("padding and untilize diagnostics", "[blob][yaml]") {
  auto r = read(
      "phase_0:\n"
      "  chip_0__y_1__x_1__stream_id_8: {remote_source: true, src: chip_0__y_1__x_1__stream_id_24, local_receiver: true,\n"
      "    dram_padding: true}\n"
      "  chip_0__y_1__x_1__stream_id_9: {dram_input: true, local_receiver: true, dram_buf_noc_addr: 1, padding_value: 1e}\n"
      "  chip_0__y_1__x_1__stream_id_24: {source_endpoint: true, remote_receiver: true, dest: chip_0__y_1__x_1__stream_id_8,\n"
      "    untilize_r_dim: 2, untilize_c_dim: 2, untilize_full_r_dim: 2, untilize_full_c_dim: 3, untilize_z_dim: 1}\n");
  REQUIRE_FALSE(r->yaml);
  const std::string d = diagText(r->diags);
  CHECK_THAT(d, Catch::Contains("2:3: [blob-dram] chip_0__y_1__x_1__stream_id_8 phase_0: dram_padding on a phase that is not dram_input"));
  CHECK_THAT(d, Catch::Contains("[blob-field] chip_0__y_1__x_1__stream_id_9 phase_0: padding_value: expected a number, got '1e'"));
  CHECK_THAT(d, Catch::Contains("5:3: [blob-untilize] chip_0__y_1__x_1__stream_id_24 phase_0: untilize_r_dim 2, untilize_c_dim 2"));
}
