// pipegen.yaml writer. The key order of each document kind is BUDA's (taken
// from the files its net2pipe writes, ../shared/corpus/anchor-artifacts):
// a reader that knows BUDA's files sees the same shape in ours.
#include "pipe/pipegen_yaml_writer.hpp"
#include "support/text_format.hpp"

#include <cstdio>
#include <cstdlib>
#include <set>

namespace tessera::pipe {

namespace {

std::string flag(bool b) { return b ? "1" : "0"; }

template <class T> std::string list(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// A double as YAML: integral values without a fraction, else the shortest
// text that reads back to the same double.
std::string real(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0"; // n: nan/inf stay as written
  if (s == "inf") return ".inf";
  if (s == "-inf") return "-.inf";
  if (s == "nan" || s == "-nan") return ".nan";
  return s;
}

std::string commentSuffix(const std::string& comment) {
  size_t b = comment.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  std::string text = comment.substr(b);
  for (char& ch : text)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return "  # " + text;
}

// One document's fields: known keys in BUDA order (each either typed or
// taken from `extra`), then the extras nobody claimed.
class FieldWriter {
public:
  FieldWriter(std::string& out, const std::vector<ExtraField>& extra) : out_(out), extra_(extra) {}

  void put(const char* key, const std::string& value) {
    out_ += "  ";
    out_ += key;
    out_ += ": ";
    out_ += value;
    out_ += '\n';
    if (!extra_.empty()) written_.insert(key);
  }
  // A BUDA field Tessera does not model: the extra of that name, else the
  // default BUDA writes (nothing when `fallback` is empty).
  void passthrough(const char* key, const std::string& fallback = "") {
    for (const ExtraField& e : extra_)
      if (e.key == key) {
        put(key, e.value);
        return;
      }
    if (!fallback.empty()) put(key, fallback);
  }
  void rest() {
    for (const ExtraField& e : extra_)
      if (!written_.count(e.key)) {
        out_ += "  " + e.key + ": " + e.value + "\n";
        written_.insert(e.key);
      }
  }

private:
  std::string& out_;
  const std::vector<ExtraField>& extra_;
  std::set<std::string> written_;
};

enum class Family { Unpacker, Packer, Dram, Intermediate };

Family familyOf(const Buffer& b) {
  switch (b.bufferType) {
  case BufferType::Unpacker: return Family::Unpacker;
  case BufferType::Packer: return Family::Packer;
  case BufferType::DramIo:
  case BufferType::DramProlog: return Family::Dram;
  default: break;
  }
  if (b.isPadding || b.bufferTypeText == "unknown") return Family::Dram;
  return Family::Intermediate;
}

void writeBuffer(std::string& s, const Buffer& b) {
  s += "---\nbuffer_" + std::to_string(b.uniqid) + ":" + commentSuffix(b.comment) + "\n";
  FieldWriter w(s, b.extra);
  const Family fam = familyOf(b);
  w.put("md_op_name", support::yamlScalar(b.mdOpName));
  w.put("buffer_type", support::yamlScalar(bufferTypeName(b)));
  w.put("id", std::to_string(b.id));
  w.put("uniqid", std::to_string(b.uniqid));
  w.put("epoch_tiles", std::to_string(b.epochTiles));
  if (fam == Family::Unpacker || fam == Family::Packer) w.put("tiles_per_input", std::to_string(b.tilesPerInput));
  w.put("chip_id", "[" + std::to_string(b.chipId) + "]");
  w.put("core_coordinates", "[" + std::to_string(b.core.r) + ", " + std::to_string(b.core.c) + "]");
  w.put("size_tiles", std::to_string(b.sizeTiles));
  w.put("scatter_gather_num_tiles", std::to_string(b.scatterGatherNumTiles));
  if (fam == Family::Dram) w.put("tiles_per_input", std::to_string(b.tilesPerInput));
  else if (fam == Family::Intermediate && b.tilesPerInput != 0) w.put("tiles_per_input", std::to_string(b.tilesPerInput));
  w.put("is_scatter", flag(b.isScatter));
  w.put("replicate", std::to_string(b.replicate));
  if (b.isPadding) w.put("is_padding", "1");
  else w.passthrough("is_padding");
  w.put("tile_size", std::to_string(b.tileSize));
  if (fam == Family::Unpacker) {
    w.put("tile_clear_granularity", std::to_string(b.tileClearGranularity));
    for (const char* k : {"embedding_op_data_input", "embedding_op_index_input", "tilize_row_col_offset"}) w.passthrough(k);
  }
  w.put("dram_io_flag_is_remote", flag(b.dramIoFlagIsRemote));
  if (fam == Family::Unpacker) w.put("overlay_blob_size", std::to_string(b.overlayBlobSize));
  w.put("dram_buf_flag", flag(b.dramBufFlag));
  if (fam == Family::Dram) w.put("prefetch_type", std::to_string(b.prefetchType));
  w.put("dram_buf_streaming", flag(b.dramBufStreaming));
  w.put("write_dram_buf_flag", flag(b.writeDramBufFlag));
  if (fam == Family::Dram || fam == Family::Intermediate) w.passthrough("dram_prefetch_incoming_noc_id", "0");
  w.put("dram_chan", std::to_string(b.dramChan));
  w.put("dram_sub_chan", std::to_string(b.dramSubChan));
  w.put("dram_addr", b.dramAddr == 0 ? "0" : support::hexLiteral(b.dramAddr));
  w.put("q_slots", std::to_string(b.qSlots));
  w.put("dram_io_flag", flag(b.dramIoFlag));
  w.put("dram_io_allow_overwrite", flag(b.dramIoAllowOverwrite));
  w.put("dram_io_skip_flow_ctrl", flag(b.dramIoSkipFlowCtrl));
  if (fam != Family::Packer) w.put("dram_ram_flag", flag(b.dramRamFlag));
  w.put("use_shadow_rd_ptr", flag(b.useShadowRdPtr));
  if (fam == Family::Packer) w.passthrough("buffer_space_shared");
  w.put("ublock_rt", std::to_string(b.ublockRt));
  w.put("ublock_ct", std::to_string(b.ublockCt));
  w.put("mblock_m", std::to_string(b.mblockM));
  w.put("mblock_n", std::to_string(b.mblockN));
  w.put("mblock_k", std::to_string(b.mblockK));
  if (fam == Family::Dram)
    for (const char* k : {"embedding_index", "embedding_indices_per_tile", "embedding_indices_per_input", "embedding_table",
                          "embedding_table_row_size", "embedding_table_row_size_per_core", "embedding_table_core_c_div",
                          "hw_tilize"})
      w.passthrough(k);
  if (b.untilizedOutput) {
    w.passthrough("untilized_output_tile_dim_r", "32");
    w.passthrough("untilized_output_tile_dim_c", "32");
    w.put("untilized_output_c_dim", std::to_string(b.untilizedOutputCDim));
    w.passthrough("tilize_mblock_n_loop_num_rows");
  }
  w.put("untilized_output", flag(b.untilizedOutput));
  w.put("untilized_output_full_r_dim", std::to_string(b.untilizedOutputFullRDim));
  w.put("untilized_output_full_c_dim", std::to_string(b.untilizedOutputFullCDim));
  w.put("untilized_output_r_dim", std::to_string(b.untilizedOutputRDim));
  if (!b.untilizedOutput && b.untilizedOutputCDim != 0) w.put("untilized_output_c_dim", std::to_string(b.untilizedOutputCDim));
  w.put("untilized_output_z_dim", std::to_string(b.untilizedOutputZDim));
  w.passthrough("untilized_output_type_0_zdim", "0");
  w.passthrough("untilized_output_type_1_zdim", "0");
  w.passthrough("is_post_tm_relay_buf");
  // Tessera additions last.
  if (b.paddingValue) w.put("padding_value", real(*b.paddingValue));
  if (b.dataFormat) w.put("data_format", support::yamlScalar(*b.dataFormat));
  if (b.ethernetChan) w.put("ethernet_chan", std::to_string(*b.ethernetChan));
  if (b.pcieRelay) w.put("pcie_relay", "1");
  w.rest();
}

void writePipe(std::string& s, const Pipe& p) {
  s += "---\npipe_" + std::to_string(p.id) + ":" + commentSuffix(p.comment) + "\n";
  FieldWriter w(s, p.extra);
  w.put("id", std::to_string(p.id));
  w.put("input_list", list(p.inputList));
  w.put("pipe_periodic_repeat", std::to_string(p.pipePeriodicRepeat));
  w.put("pipe_consumer_repeat", std::to_string(p.pipeConsumerRepeat));
  std::string outputs;
  if (p.outputListNested || p.outputList.size() > 1) {
    outputs = "[";
    for (size_t i = 0; i < p.outputList.size(); ++i) outputs += (i ? ", " : "") + list(p.outputList[i]);
    outputs += "]";
  } else {
    outputs = list(p.outputList.empty() ? std::vector<BufferId>{} : p.outputList.front());
  }
  w.put("output_list", outputs);
  w.put("incoming_noc_id", std::to_string(p.incomingNocId));
  w.put("outgoing_noc_id", std::to_string(p.outgoingNocId));
  w.put("outgoing_vc", std::to_string(p.outgoingVc));
  w.put("incoming_vc", std::to_string(p.incomingVc));
  w.passthrough("op_input_dram_io_buf_size_tiles");
  if (p.mcastCoreRc.size() == 1) {
    w.put("mcast_core_rc", list(p.mcastCoreRc.front()));
  } else if (!p.mcastCoreRc.empty()) {
    std::string rc = "[";
    for (size_t i = 0; i < p.mcastCoreRc.size(); ++i) rc += (i ? ", " : "") + list(p.mcastCoreRc[i]);
    w.put("mcast_core_rc", rc + "]");
  }
  if (!p.dramPipeTotalReaders.empty() || !p.dramPipeReaderIndex.empty()) {
    w.put("dram_pipe_total_readers", list(p.dramPipeTotalReaders));
    w.put("dram_pipe_reader_index", list(p.dramPipeReaderIndex));
    w.passthrough("dram_pipe_num_forks", "1");
    w.passthrough("dram_pipe_fork_index", "0");
  }
  if (!p.outputPaddingList.empty()) w.put("output_padding_list", list(p.outputPaddingList));
  if (p.mmioPipe) w.put("mmio_pipe", "1");
  w.rest();
}

} // namespace

std::string bufferTypeName(const Buffer& b) {
  switch (b.bufferType) {
  case BufferType::Unpacker: return "unpacker";
  case BufferType::Packer: return "packer";
  case BufferType::Intermediate: return "intermediate";
  case BufferType::DramIo: return "dram_io";
  case BufferType::DramProlog: return "dram_prolog";
  case BufferType::Relay: return "relay";
  case BufferType::Ethernet: return "ethernet";
  case BufferType::Other: break;
  }
  return b.bufferTypeText.empty() ? "unknown" : b.bufferTypeText;
}

std::string writePipegenYaml(const PipegenYaml& doc) {
  std::string s = "graph_name: " + support::yamlScalar(doc.graphName) + "\n";
  if (doc.clusterChips) s += "cluster_chips: " + std::to_string(doc.clusterChips) + "\n";
  // Only a BUDA file that carries data formats needs saying so (the reader's default).
  if (doc.dialect == Dialect::Buda) s += "dialect: buda\n";
  s.reserve(doc.buffers.size() * 1400 + doc.pipes.size() * 600);
  for (const Buffer& b : doc.buffers) writeBuffer(s, b);
  for (const Pipe& p : doc.pipes) writePipe(s, p);
  return s;
}

} // namespace tessera::pipe
