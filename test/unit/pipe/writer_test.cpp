// The pipegen.yaml writer (lib/pipe/pipegen_yaml_writer.cpp): the exact text
// of a small model, BUDA's field order per buffer kind, extra fields.
#include "pipe/pipegen_yaml_writer.hpp"

#include <catch2/catch.hpp>

using namespace tessera::pipe;

namespace {

// The field names of one document, in order.
std::vector<std::string> keysOf(const std::string& text, const std::string& doc) {
  std::vector<std::string> keys;
  size_t at = text.find(doc + ":");
  REQUIRE(at != std::string::npos);
  at = text.find('\n', at) + 1;
  while (at < text.size() && text.compare(at, 2, "  ") == 0) {
    size_t colon = text.find(':', at);
    keys.push_back(text.substr(at + 2, colon - at - 2));
    at = text.find('\n', at) + 1;
  }
  return keys;
}

} // namespace

TEST_CASE("a queue buffer and a pipe, field by field", "[pipe][writer]") {
  PipegenYaml y;
  y.graphName = "g";
  Buffer q;
  q.uniqid = 101000000000ull;
  q.comment = "Queue in0: r = 0, c = 0";
  q.mdOpName = "in0";
  q.bufferType = BufferType::DramIo;
  q.epochTiles = 4;
  q.tilesPerInput = 2;
  q.core = {255, 255};
  q.sizeTiles = 2;
  q.scatterGatherNumTiles = 1;
  q.isScatter = true;
  q.replicate = 2;
  q.tileSize = 2080;
  q.dramChan = 3;
  q.dramAddr = 0x10000000;
  q.qSlots = 4;
  q.dramIoFlag = true;
  q.dataFormat = "Float16_b";
  y.buffers.push_back(q);
  Pipe p;
  p.id = 102000000000ull;
  p.comment = "Op: d0, input 0";
  p.inputList = {101000000000ull, 101000000001ull};
  p.pipePeriodicRepeat = 3;
  p.outputList = {{103000000000ull, 104000000000ull}};
  p.outgoingNocId = 1;
  p.mcastCoreRc = {{0, 1, 2}};
  p.dramPipeTotalReaders = {1, 1};
  p.dramPipeReaderIndex = {0, 0};
  y.pipes.push_back(p);
  const std::string want = R"(graph_name: g
---
buffer_101000000000:  # Queue in0: r = 0, c = 0
  md_op_name: in0
  buffer_type: dram_io
  id: 0
  uniqid: 101000000000
  epoch_tiles: 4
  chip_id: [0]
  core_coordinates: [255, 255]
  size_tiles: 2
  scatter_gather_num_tiles: 1
  tiles_per_input: 2
  is_scatter: 1
  replicate: 2
  tile_size: 2080
  dram_io_flag_is_remote: 0
  dram_buf_flag: 0
  prefetch_type: 0
  dram_buf_streaming: 0
  write_dram_buf_flag: 0
  dram_prefetch_incoming_noc_id: 0
  dram_chan: 3
  dram_sub_chan: 0
  dram_addr: 0x10000000
  q_slots: 4
  dram_io_flag: 1
  dram_io_allow_overwrite: 0
  dram_io_skip_flow_ctrl: 0
  dram_ram_flag: 0
  use_shadow_rd_ptr: 0
  ublock_rt: 0
  ublock_ct: 0
  mblock_m: 0
  mblock_n: 0
  mblock_k: 0
  untilized_output: 0
  untilized_output_full_r_dim: 0
  untilized_output_full_c_dim: 0
  untilized_output_r_dim: 0
  untilized_output_z_dim: 0
  untilized_output_type_0_zdim: 0
  untilized_output_type_1_zdim: 0
  data_format: Float16_b
---
pipe_102000000000:  # Op: d0, input 0
  id: 102000000000
  input_list: [101000000000, 101000000001]
  pipe_periodic_repeat: 3
  pipe_consumer_repeat: 1
  output_list: [103000000000, 104000000000]
  incoming_noc_id: 0
  outgoing_noc_id: 1
  outgoing_vc: 0
  incoming_vc: 0
  mcast_core_rc: [0, 1, 2]
  dram_pipe_total_readers: [1, 1]
  dram_pipe_reader_index: [0, 0]
  dram_pipe_num_forks: 1
  dram_pipe_fork_index: 0
)";
  CHECK(writePipegenYaml(y) == want);
}

TEST_CASE("each buffer kind has BUDA's field order", "[pipe][writer]") {
  PipegenYaml y;
  y.graphName = "0"; // a name YAML would read as a number is quoted
  Buffer u;
  u.uniqid = 1;
  u.bufferType = BufferType::Unpacker;
  u.mdOpName = "op.a";
  Buffer p = u;
  p.uniqid = 2;
  p.bufferType = BufferType::Packer;
  p.extra.push_back({"buffer_space_shared", "3", {}});
  p.extra.push_back({"my_field", "[1, 2]", {}});
  Buffer i = u;
  i.uniqid = 3;
  i.bufferType = BufferType::Intermediate;
  Buffer t = u;
  t.uniqid = 4;
  t.bufferType = BufferType::Packer;
  t.untilizedOutput = true;
  t.untilizedOutputCDim = 2;
  y.buffers = {u, p, i, t};
  const std::string text = writePipegenYaml(y);
  CHECK(text.rfind("graph_name: \"0\"\n", 0) == 0);
  using V = std::vector<std::string>;
  // BUDA's unpacker (from its files): tiles_per_input after epoch_tiles,
  // tile_clear_granularity and overlay_blob_size, no prefetch_type.
  CHECK(keysOf(text, "buffer_1") ==
        V{"md_op_name", "buffer_type", "id", "uniqid", "epoch_tiles", "tiles_per_input", "chip_id", "core_coordinates",
          "size_tiles", "scatter_gather_num_tiles", "is_scatter", "replicate", "tile_size", "tile_clear_granularity",
          "dram_io_flag_is_remote", "overlay_blob_size", "dram_buf_flag", "dram_buf_streaming", "write_dram_buf_flag",
          "dram_chan", "dram_sub_chan", "dram_addr", "q_slots", "dram_io_flag", "dram_io_allow_overwrite",
          "dram_io_skip_flow_ctrl", "dram_ram_flag", "use_shadow_rd_ptr", "ublock_rt", "ublock_ct", "mblock_m", "mblock_n",
          "mblock_k", "untilized_output", "untilized_output_full_r_dim", "untilized_output_full_c_dim",
          "untilized_output_r_dim", "untilized_output_z_dim", "untilized_output_type_0_zdim", "untilized_output_type_1_zdim"});
  // Packer: no dram_ram_flag; buffer_space_shared (an extra) where BUDA puts
  // it; an unknown extra at the end.
  CHECK(keysOf(text, "buffer_2") ==
        V{"md_op_name", "buffer_type", "id", "uniqid", "epoch_tiles", "tiles_per_input", "chip_id", "core_coordinates",
          "size_tiles", "scatter_gather_num_tiles", "is_scatter", "replicate", "tile_size", "dram_io_flag_is_remote",
          "dram_buf_flag", "dram_buf_streaming", "write_dram_buf_flag", "dram_chan", "dram_sub_chan", "dram_addr", "q_slots",
          "dram_io_flag", "dram_io_allow_overwrite", "dram_io_skip_flow_ctrl", "use_shadow_rd_ptr", "buffer_space_shared",
          "ublock_rt", "ublock_ct", "mblock_m", "mblock_n", "mblock_k", "untilized_output", "untilized_output_full_r_dim",
          "untilized_output_full_c_dim", "untilized_output_r_dim", "untilized_output_z_dim", "untilized_output_type_0_zdim",
          "untilized_output_type_1_zdim", "my_field"});
  CHECK(text.find("  my_field: [1, 2]\n") != std::string::npos);
  // Intermediate: no tiles_per_input (0), dram_prefetch_incoming_noc_id.
  CHECK(keysOf(text, "buffer_3") ==
        V{"md_op_name", "buffer_type", "id", "uniqid", "epoch_tiles", "chip_id", "core_coordinates", "size_tiles",
          "scatter_gather_num_tiles", "is_scatter", "replicate", "tile_size", "dram_io_flag_is_remote", "dram_buf_flag",
          "dram_buf_streaming", "write_dram_buf_flag", "dram_prefetch_incoming_noc_id", "dram_chan", "dram_sub_chan",
          "dram_addr", "q_slots", "dram_io_flag", "dram_io_allow_overwrite", "dram_io_skip_flow_ctrl", "dram_ram_flag",
          "use_shadow_rd_ptr", "ublock_rt", "ublock_ct", "mblock_m", "mblock_n", "mblock_k", "untilized_output",
          "untilized_output_full_r_dim", "untilized_output_full_c_dim", "untilized_output_r_dim", "untilized_output_z_dim",
          "untilized_output_type_0_zdim", "untilized_output_type_1_zdim"});
  // Untilized packer: the tile dims and c_dim come before untilized_output.
  const V ut = keysOf(text, "buffer_4");
  const V tail(ut.end() - 10, ut.end());
  CHECK(tail == V{"untilized_output_tile_dim_r", "untilized_output_tile_dim_c", "untilized_output_c_dim", "untilized_output",
                  "untilized_output_full_r_dim", "untilized_output_full_c_dim", "untilized_output_r_dim",
                  "untilized_output_z_dim", "untilized_output_type_0_zdim", "untilized_output_type_1_zdim"});
  CHECK(text.find("  untilized_output_c_dim: 2\n") != std::string::npos);
}

TEST_CASE("padding buffers and nested output lists", "[pipe][writer]") {
  PipegenYaml y;
  y.graphName = "g";
  Buffer pad;
  pad.uniqid = 7;
  pad.bufferType = BufferType::Other;
  pad.bufferTypeText = "unknown";
  pad.isPadding = true;
  pad.paddingValue = -0.25;
  pad.dataFormat = "Bfp8_b";
  y.buffers.push_back(pad);
  Pipe p;
  p.id = 8;
  p.inputList = {7, 7};
  p.outputList = {{1}, {2, 3}};
  p.outputListNested = true;
  p.mcastCoreRc = {{0, 1, 1}, {0, 2, 2}};
  y.pipes.push_back(p);
  const std::string text = writePipegenYaml(y);
  CHECK(text.find("  buffer_type: unknown\n") != std::string::npos);
  CHECK(text.find("  replicate: 0\n  is_padding: 1\n  tile_size: 0\n") != std::string::npos);
  CHECK(text.find("  prefetch_type: 0\n") != std::string::npos); // padding is DRAM-shaped
  CHECK(text.find("  padding_value: -0.25\n  data_format: Bfp8_b\n") != std::string::npos);
  CHECK(text.find("  output_list: [[1], [2, 3]]\n") != std::string::npos);
  CHECK(text.find("  mcast_core_rc: [[0, 1, 1], [0, 2, 2]]\n") != std::string::npos);
  CHECK(text.find("dram_pipe") == std::string::npos);
}
