// lib/blob reader: the chunk list fields pipegen writes with --chunk-lists
// (src_chunk_offsets, src_chunk_tiles) are typed phase fields, not extra,
// and bad values are blob-field errors at the value.
#include "blob/blob_yaml_reader.hpp"

#include <catch2/catch.hpp>

using namespace tessera;
using namespace tessera::blob;

namespace {

std::string diagText(const DiagnosticEngine& d) {
  std::string s;
  for (const Diagnostic& x : d.diagnostics())
    s += std::to_string(x.loc.line) + ":" + std::to_string(x.loc.col) + ": [" + x.rule + "] " + x.message + "\n";
  return s;
}

// A windowed packer stream sending to a receiver; `chunkFields` are the
// packer phase's chunk fields, spelled as pipegen writes them.
std::string blobYaml(const std::string& chunkFields) {
  return "dram_blob: {}\n"
         "phase_0:\n"
         "  chip_0__y_1__x_1__stream_id_8:\n"
         "    phase_id: 0\n"
         "    local_receiver: true\n"
         "    num_msgs: 6\n"
         "    remote_source: true\n"
         "    src: [chip_0__y_1__x_1__stream_id_24]\n"
         "  chip_0__y_1__x_1__stream_id_24:\n"
         "    phase_id: 0\n"
         "    dest: [chip_0__y_1__x_1__stream_id_8]\n"
         "    num_msgs: 6\n"
         "    remote_receiver: true\n"
         "    source_endpoint: true\n" +
         chunkFields +
         "    src_period_done: true\n"
         "    src_period_tiles: 12\n"
         "    src_tile_offset: 0\n";
}

struct Read {
  std::optional<BlobYaml> yaml;
  DiagnosticEngine diags;
};

std::unique_ptr<Read> read(const std::string& text) {
  auto r = std::make_unique<Read>();
  r->yaml = readBlobYaml(SourceBuffer("blob.yaml", text), r->diags);
  return r;
}

} // namespace

TEST_CASE("chunk lists: src_chunk_offsets and src_chunk_tiles are read", "[blob][yaml]") {
  auto r = read(blobYaml("    src_chunk_offsets: [0, 4, 8]\n"
                         "    src_chunk_tiles: 2\n"));
  INFO(diagText(r->diags));
  REQUIRE(r->yaml);
  REQUIRE(r->yaml->streams.size() == 2);
  const Stream& packer = r->yaml->streams[1];
  REQUIRE(packer.name == StreamName{0, 1, 1, 24});
  const StreamPhase& p = packer.phases.at(0);
  CHECK(p.srcChunkOffsets == std::vector<uint32_t>{0, 4, 8});
  CHECK(p.srcChunkTiles == 2);
  CHECK(p.extra.empty());
  // A phase without them has no chunk list.
  const StreamPhase& receiver = r->yaml->streams[0].phases.at(0);
  CHECK(receiver.srcChunkOffsets.empty());
  CHECK(receiver.srcChunkTiles == 0);
}

TEST_CASE("chunk lists: a list over several lines, an empty list", "[blob][yaml]") {
  auto r = read(blobYaml("    src_chunk_offsets: [0,\n"
                         "      4294967295]\n"
                         "    src_chunk_tiles: 3\n"));
  INFO(diagText(r->diags));
  REQUIRE(r->yaml);
  CHECK(r->yaml->streams[1].phases.at(0).srcChunkOffsets == std::vector<uint32_t>{0, 4294967295u});
  auto e = read(blobYaml("    src_chunk_offsets: []\n"));
  REQUIRE(e->yaml);
  CHECK(e->yaml->streams[1].phases.at(0).srcChunkOffsets.empty());
}

TEST_CASE("chunk lists: bad values are blob-field errors at the value", "[blob][yaml]") {
  const std::string el = "chip_0__y_1__x_1__stream_id_24 phase_0: ";
  SECTION("entries that are not u32") {
    auto r = read(blobYaml("    src_chunk_offsets: [0, -4, 4294967296, x]\n"
                           "    src_chunk_tiles: 2\n"));
    CHECK_FALSE(r->yaml);
    const std::string d = diagText(r->diags);
    CHECK_THAT(d, Catch::Contains("15:28: [blob-field] " + el +
                                  "src_chunk_offsets: expected an unsigned 32-bit integer, got '-4'"));
    CHECK_THAT(d, Catch::Contains("15:32: [blob-field] " + el +
                                  "src_chunk_offsets: expected an unsigned 32-bit integer, got '4294967296'"));
    CHECK_THAT(d, Catch::Contains("15:44: [blob-field] " + el +
                                  "src_chunk_offsets: expected an unsigned 32-bit integer, got 'x'"));
    CHECK(r->diags.errorCount() == 3);
  }
  SECTION("not a list") {
    auto r = read(blobYaml("    src_chunk_offsets: 4\n"));
    CHECK_FALSE(r->yaml);
    CHECK(diagText(r->diags) ==
          "15:24: [blob-field] " + el + "src_chunk_offsets: expected a list of unsigned 32-bit integers\n");
  }
  SECTION("src_chunk_tiles") {
    auto r = read(blobYaml("    src_chunk_offsets: [0]\n"
                           "    src_chunk_tiles: two\n"));
    CHECK_FALSE(r->yaml);
    CHECK(diagText(r->diags) ==
          "16:22: [blob-field] " + el + "src_chunk_tiles: expected an unsigned 32-bit integer, got 'two'\n");
  }
  SECTION("a nested list") {
    auto r = read(blobYaml("    src_chunk_offsets: [[0]]\n"));
    CHECK_FALSE(r->yaml);
    CHECK(diagText(r->diags) == "15:25: [blob-field] " + el + "src_chunk_offsets: expected a scalar value\n");
  }
}
