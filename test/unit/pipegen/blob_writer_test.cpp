// blob.yaml writer: the exact text of small models (BUDA shape, sorted
// fields, comments, dram_blob entries).
#include "pipegen/blob_yaml_writer.hpp"

#include <catch2/catch.hpp>

using namespace tessera;
using namespace tessera::pipegen;

TEST_CASE("blob.yaml writer: one receiving phase", "[pipegen][writer]") {
  blob::BlobYaml b;
  blob::Stream s;
  s.name = {0, 1, 1, 8};
  blob::StreamPhase ph;
  ph.numMsgs = 2;
  ph.msgSize = 2080;
  ph.bufAddr = 0xfdf80;
  ph.bufSize = 8320;
  ph.numItersInEpoch = 4;
  ph.pipeId = 300;
  ph.bufId = 200;
  ph.remoteSource = true;
  ph.localReceiver = true;
  ph.src = {{0, 1, 1, 24}};
  ph.dataFormat = 1;
  s.phases.push_back(ph);
  b.streams.push_back(s);
  std::string text = writeBlobYaml(b, {{s.name, "op 'x' input 0"}});
  CHECK(text == "dram_blob: {}\n"
                "phase_0:\n"
                "  chip_0__y_1__x_1__stream_id_8:  # op 'x' input 0\n"
                "    phase_id: 0\n"
                "    buf_addr: 0xfdf80\n"
                "    buf_id: 200\n"
                "    buf_size: 8320\n"
                "    data_format: 1\n"
                "    dram_input: false\n"
                "    dram_output: false\n"
                "    incoming_data_noc: 0\n"
                "    local_receiver: true\n"
                "    msg_size: 2080\n"
                "    num_iters_in_epoch: 4\n"
                "    num_msgs: 2\n"
                "    outgoing_data_noc: 0\n"
                "    pipe_id: 300\n"
                "    remote_receiver: false\n"
                "    remote_source: true\n"
                "    source_endpoint: false\n"
                "    src: [chip_0__y_1__x_1__stream_id_24]\n"
                "    vc: 0\n");
}

TEST_CASE("blob.yaml writer: phases by ordinal, DRAM entries, windows", "[pipegen][writer]") {
  blob::BlobYaml b;
  blob::Stream a;
  a.name = {0, 2, 1, 9};
  blob::StreamPhase p0;
  p0.dramInput = true;
  p0.localReceiver = true;
  p0.dramBufNocAddr = 0x100001000ull;
  p0.srcPeriodTiles = 4;
  p0.srcTileOffset = 2;
  p0.srcPeriodDone = true;
  blob::StreamPhase p1 = p0;
  p1.phaseId = 1;
  a.phases = {p0, p1};
  blob::Stream c;
  c.name = {0, 1, 1, 40};
  blob::StreamPhase q;
  q.intermediate = true;
  q.sourceEndpoint = true;
  q.localReceiver = true;
  c.phases = {q};
  b.streams = {a, c};
  blob::DramIo io;
  io.name = a.name;
  io.dramBufNocAddr = 0x100001000ull;
  io.dramBufSizeBytes = 16640;
  io.dramBufSizeQSlots = 2;
  io.dramBufSizeTiles = 4;
  io.chunkTiles = 4;
  io.input = true;
  io.msgSize = 2080;
  io.numMsgs = 8;
  b.dramBlob = {io};
  std::string text = writeBlobYaml(b);
  CHECK(text.find("dram_blob:\n"
                  "  chip_0__y_2__x_1__stream_id_9:\n"
                  "    0:\n"
                  "      dram_buf_noc_addr: 0x100001000\n"
                  "      dram_buf_read_chunk_size_tiles: 4\n"
                  "      dram_buf_size_bytes: 16640\n"
                  "      dram_buf_size_q_slots: 2\n"
                  "      dram_buf_size_tiles: 4\n"
                  "      dram_input: true\n"
                  "      dram_output: false\n"
                  "      dram_ram: false\n"
                  "      msg_size: 2080\n"
                  "      num_msgs: 8\n"
                  "      reader_index: 0\n"
                  "      total_readers: 1\n"
                  "phase_0:\n"
                  "  chip_0__y_1__x_1__stream_id_40:\n") == 0);
  // phase_0 holds both streams (name order: y 1 before y 2), phase_1 only the first.
  size_t ph0 = text.find("phase_0:\n"), ph1 = text.find("phase_1:\n");
  REQUIRE(ph1 != std::string::npos);
  CHECK(text.find("  chip_0__y_2__x_1__stream_id_9:\n    phase_id: 0\n", ph0) < ph1);
  CHECK(text.find("  chip_0__y_2__x_1__stream_id_9:\n    phase_id: 1\n", ph1) != std::string::npos);
  CHECK(text.find("stream_id_40", ph1) == std::string::npos);
  CHECK(text.find("    intermediate: true\n") != std::string::npos);
  CHECK(text.find("    src_period_done: true\n    src_period_tiles: 4\n    src_tile_offset: 2\n") !=
        std::string::npos);
}

TEST_CASE("blob.yaml writer: stream keys", "[pipegen][writer]") {
  CHECK(streamKey({1, 11, 12, 63}) == "chip_1__y_11__x_12__stream_id_63");
}
