// blob.yaml writer. Field order within a phase: phase_id first, then the
// fields alphabetically, as the BUDA backend's pipegen2 writes them.
#include "pipegen/blob_yaml_writer.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tessera::pipegen {

std::string streamKey(const blob::StreamName& n) {
  return "chip_" + std::to_string(n.chip) + "__y_" + std::to_string(n.y) + "__x_" + std::to_string(n.x) +
         "__stream_id_" + std::to_string(n.streamId);
}

namespace {

const char* boolText(bool b) { return b ? "true" : "false"; }

// A float as YAML: the shortest text that reads back to the same float.
std::string real(float v) {
  if (v != v) return ".nan";
  if (v == std::numeric_limits<float>::infinity()) return ".inf";
  if (v == -std::numeric_limits<float>::infinity()) return "-.inf";
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string nameList(const std::vector<blob::StreamName>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + streamKey(names[i]);
  return s + "]";
}

std::string commentText(const std::map<blob::StreamName, std::string>& comments, const blob::StreamName& n) {
  auto it = comments.find(n);
  if (it == comments.end() || it->second.empty()) return "";
  std::string c = it->second;
  std::replace(c.begin(), c.end(), '\n', ' ');
  return "  # " + c;
}

// Fields of one map, sorted by key when written.
class Fields {
public:
  void add(std::string key, std::string value) { f_.emplace_back(std::move(key), std::move(value)); }
  void write(std::string& out, const std::string& indent) {
    std::stable_sort(f_.begin(), f_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [k, v] : f_) out += indent + k + ": " + v + "\n";
  }

private:
  std::vector<std::pair<std::string, std::string>> f_;
};

void writePhase(std::string& out, const blob::StreamPhase& ph) {
  out += "    phase_id: " + std::to_string(ph.phaseId) + "\n";
  Fields f;
  f.add("buf_addr", support::hexLiteral(ph.bufAddr));
  if (ph.bufId) f.add("buf_id", std::to_string(ph.bufId));
  f.add("buf_size", std::to_string(ph.bufSize));
  f.add("msg_size", std::to_string(ph.msgSize));
  f.add("num_msgs", std::to_string(ph.numMsgs));
  f.add("num_iters_in_epoch", std::to_string(ph.numItersInEpoch));
  if (ph.pipeId) f.add("pipe_id", std::to_string(ph.pipeId));
  f.add("data_format", std::to_string(ph.dataFormat));
  f.add("source_endpoint", boolText(ph.sourceEndpoint));
  f.add("remote_source", boolText(ph.remoteSource));
  f.add("dram_input", boolText(ph.dramInput));
  f.add("local_receiver", boolText(ph.localReceiver));
  f.add("remote_receiver", boolText(ph.remoteReceiver));
  f.add("dram_output", boolText(ph.dramOutput));
  if (ph.remoteSource) f.add("src", nameList(ph.src));
  if (ph.remoteReceiver) f.add("dest", nameList(ph.dest));
  if (ph.dramPadding) {
    f.add("dram_padding", "true");
    f.add("padding_value", real(ph.paddingValue));
  } else if (ph.dramInput || ph.dramOutput || ph.dramBufNocAddr) {
    f.add("dram_buf_noc_addr", support::hexLiteral(ph.dramBufNocAddr));
    f.add("dram_ram", boolText(ph.dramRam));
  }
  f.add("incoming_data_noc", std::to_string(ph.incomingDataNoc));
  f.add("outgoing_data_noc", std::to_string(ph.outgoingDataNoc));
  f.add("vc", std::to_string(ph.vc));
  if (ph.srcPeriodTiles) {
    f.add("src_period_tiles", std::to_string(ph.srcPeriodTiles));
    f.add("src_tile_offset", std::to_string(ph.srcTileOffset));
    f.add("src_period_done", boolText(ph.srcPeriodDone));
    if (ph.sourceEndpoint) f.add("src_freed_tiles", std::to_string(ph.srcFreedTiles));
    if (!ph.srcChunkOffsets.empty()) {
      std::string list = "[";
      for (size_t i = 0; i < ph.srcChunkOffsets.size(); ++i)
        list += (i ? ", " : "") + std::to_string(ph.srcChunkOffsets[i]);
      f.add("src_chunk_offsets", list + "]");
      f.add("src_chunk_tiles", std::to_string(ph.srcChunkTiles));
    }
  }
  if (ph.intermediate) f.add("intermediate", "true");
  for (const auto& e : ph.extra) f.add(e.key, e.value);
  f.write(out, "    ");
}

void writeDramIo(std::string& out, const blob::DramIo& io) {
  out += "    " + std::to_string(io.index) + ":\n";
  Fields f;
  f.add("dram_buf_noc_addr", support::hexLiteral(io.dramBufNocAddr));
  f.add("dram_buf_size_bytes", std::to_string(io.dramBufSizeBytes));
  f.add("dram_buf_size_q_slots", std::to_string(io.dramBufSizeQSlots));
  f.add("dram_buf_size_tiles", std::to_string(io.dramBufSizeTiles));
  if (io.input) f.add("dram_buf_read_chunk_size_tiles", std::to_string(io.chunkTiles));
  if (io.output) f.add("dram_buf_write_chunk_size_tiles", std::to_string(io.chunkTiles));
  f.add("dram_input", boolText(io.input));
  f.add("dram_output", boolText(io.output));
  f.add("dram_ram", boolText(io.ram));
  f.add("msg_size", std::to_string(io.msgSize));
  f.add("num_msgs", std::to_string(io.numMsgs));
  if (io.input) {
    f.add("reader_index", std::to_string(io.readerIndex));
    f.add("total_readers", std::to_string(io.totalReaders));
  }
  for (const auto& e : io.extra) f.add(e.key, e.value);
  f.write(out, "      ");
}

} // namespace

std::string writeBlobYaml(const blob::BlobYaml& blob, const std::map<blob::StreamName, std::string>& comments,
                          const BlobYamlHeader* header) {
  std::string out;
  if (header) {
    out += "# blob.yaml written by pipegen (Tessera) from " + header->source + ": graph '" + header->graphName +
           "', temporal epoch " + std::to_string(header->epoch) + ", device " + header->device + ".\n";
    out += "# Streams and phases per core; format docs/blob-yaml.md, semantics lib/blob/blob_model.hpp.\n";
  }
  // dram_blob: entries grouped by stream, in name order, then index.
  std::vector<const blob::DramIo*> ios;
  for (const auto& io : blob.dramBlob) ios.push_back(&io);
  std::stable_sort(ios.begin(), ios.end(), [](const blob::DramIo* a, const blob::DramIo* b) {
    return a->name != b->name ? a->name < b->name : a->index < b->index;
  });
  out += "dram_blob:";
  out += ios.empty() ? " {}\n" : "\n";
  for (size_t i = 0; i < ios.size(); ++i) {
    if (i == 0 || ios[i]->name != ios[i - 1]->name)
      out += "  " + streamKey(ios[i]->name) + ":" + commentText(comments, ios[i]->name) + "\n";
    writeDramIo(out, *ios[i]);
  }
  std::vector<const blob::Stream*> streams;
  size_t phases = 0;
  for (const auto& s : blob.streams) {
    streams.push_back(&s);
    phases = std::max(phases, s.phases.size());
  }
  std::stable_sort(streams.begin(), streams.end(),
                   [](const blob::Stream* a, const blob::Stream* b) { return a->name < b->name; });
  for (size_t n = 0; n < phases; ++n) {
    out += "phase_" + std::to_string(n) + ":\n";
    for (const blob::Stream* s : streams) {
      if (n >= s->phases.size()) continue;
      out += "  " + streamKey(s->name) + ":" + commentText(comments, s->name) + "\n";
      writePhase(out, s->phases[n]);
    }
  }
  return out;
}

} // namespace tessera::pipegen
