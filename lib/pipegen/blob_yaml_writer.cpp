// blob.yaml writer. Field order within a phase: phase_id first, then the
// fields alphabetically, as the BUDA backend's pipegen2 writes them.
#include "pipegen/blob_yaml_writer.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tessera::pipegen {

namespace {

// Appends `n` in decimal (no temporary string: a blob.yaml has millions).
void appendNumber(std::string& out, uint64_t n) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, n).ptr);
}

void appendStreamKey(std::string& out, const blob::StreamName& n) {
  out += "chip_";
  appendNumber(out, n.chip);
  out += "__y_";
  appendNumber(out, n.y);
  out += "__x_";
  appendNumber(out, n.x);
  out += "__stream_id_";
  appendNumber(out, n.streamId);
}

} // namespace

std::string streamKey(const blob::StreamName& n) {
  std::string s;
  appendStreamKey(s, n);
  return s;
}

namespace {

const char* boolText(bool b) { return b ? "true" : "false"; }

std::string nameList(const std::vector<blob::StreamName>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += ", ";
    appendStreamKey(s, names[i]);
  }
  return s + "]";
}

std::string commentText(const std::map<blob::StreamName, std::string>& comments, const blob::StreamName& n) {
  auto it = comments.find(n);
  if (it == comments.end() || it->second.empty()) return "";
  std::string c = it->second;
  std::replace(c.begin(), c.end(), '\n', ' ');
  return "  # " + c;
}

// Fields of one map, sorted by key when written. Keys and values are copied
// into one buffer: no allocation per field.
class Fields {
public:
  Fields() {
    f_.reserve(40);
    text_.reserve(1024);
  }
  void add(std::string_view key, std::string_view value) {
    f_.push_back({static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(key.size()),
                  static_cast<uint32_t>(value.size())});
    text_.append(key);
    text_.append(value);
  }
  void write(std::string& out, std::string_view indent) {
    auto key = [&](const Field& f) { return std::string_view(text_).substr(f.at, f.keySize); };
    // Stable: equal keys keep the order they were added in (`at` grows).
    std::sort(f_.begin(), f_.end(), [&](const Field& a, const Field& b) {
      int c = key(a).compare(key(b));
      return c != 0 ? c < 0 : a.at < b.at;
    });
    for (const Field& f : f_) {
      out.append(indent);
      out.append(text_, f.at, f.keySize);
      out += ": ";
      out.append(text_, f.at + f.keySize, f.valueSize);
      out += '\n';
    }
  }

private:
  struct Field {
    uint32_t at, keySize, valueSize; // key then value at text_[at]
  };
  std::vector<Field> f_;
  std::string text_;
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
  if (ph.dramInput || ph.dramOutput || ph.dramBufNocAddr) {
    f.add("dram_buf_noc_addr", support::hexLiteral(ph.dramBufNocAddr));
    f.add("dram_ram", boolText(ph.dramRam));
  }
  if (ph.dramPadding) {
    f.add("dram_padding", "true");
    f.add("padding_value", support::yamlFloat(ph.paddingValue));
  }
  if (ph.untilizeCDim) {
    f.add("untilize_r_dim", std::to_string(ph.untilizeRDim));
    f.add("untilize_c_dim", std::to_string(ph.untilizeCDim));
    f.add("untilize_full_r_dim", std::to_string(ph.untilizeFullRDim));
    f.add("untilize_full_c_dim", std::to_string(ph.untilizeFullCDim));
    f.add("untilize_z_dim", std::to_string(ph.untilizeZDim));
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
  // Each stream's key line, made once and written in every phase it has.
  std::vector<std::string> keyLines;
  keyLines.reserve(streams.size());
  for (const blob::Stream* s : streams) keyLines.push_back("  " + streamKey(s->name) + ":" + commentText(comments, s->name) + "\n");
  for (size_t n = 0; n < phases; ++n) {
    out += "phase_" + std::to_string(n) + ":\n";
    for (size_t i = 0; i < streams.size(); ++i) {
      if (n >= streams[i]->phases.size()) continue;
      out += keyLines[i];
      writePhase(out, streams[i]->phases[n]);
    }
  }
  return out;
}

} // namespace tessera::pipegen
