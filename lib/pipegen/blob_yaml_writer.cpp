// blob.yaml writer. Field order within a phase: phase_id first, then the
// fields alphabetically, as the BUDA backend's pipegen2 writes them.
#include "pipegen/blob_yaml_writer.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

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

// As support::hexLiteral, without a temporary string.
void appendHex(std::string& out, uint64_t n) {
  char buf[24];
  out += "0x";
  out.append(buf, std::to_chars(buf, buf + sizeof buf, n, 16).ptr);
}

void appendNameList(std::string& out, const std::vector<blob::StreamName>& names) {
  out += '[';
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    appendStreamKey(out, names[i]);
  }
  out += ']';
}

std::string commentText(const std::map<blob::StreamName, std::string>& comments, const blob::StreamName& n) {
  auto it = comments.find(n);
  if (it == comments.end() || it->second.empty()) return "";
  std::string c = it->second;
  std::replace(c.begin(), c.end(), '\n', ' ');
  return "  # " + c;
}

// Fields of one map, written sorted by key. Keys and values go into one
// buffer, reused from map to map: no allocation per field.
class Fields {
public:
  Fields() {
    f_.reserve(40);
    text_.reserve(1024);
  }
  // Starts field `key`: append its value to the returned buffer.
  std::string& add(std::string_view key) {
    f_.push_back({static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(key.size()), 0});
    text_.append(key);
    return text_;
  }
  // Writes the fields and forgets them.
  void write(std::string& out, std::string_view indent) {
    for (size_t i = 0; i < f_.size(); ++i)
      f_[i].valueSize = static_cast<uint32_t>((i + 1 < f_.size() ? f_[i + 1].at : text_.size()) - f_[i].at) - f_[i].keySize;
    auto key = [&](const Field& f) { return std::string_view(text_).substr(f.at, f.keySize); };
    auto byKey = [&](const Field& a, const Field& b) { return key(a) < key(b); };
    // The writers add known fields in key order: only extras need the sort.
    if (!std::is_sorted(f_.begin(), f_.end(), byKey)) std::stable_sort(f_.begin(), f_.end(), byKey);
    for (const Field& f : f_) {
      out.append(indent);
      out.append(text_, f.at, f.keySize);
      out += ": ";
      out.append(text_, f.at + f.keySize, f.valueSize);
      out += '\n';
    }
    f_.clear();
    text_.clear();
  }

private:
  struct Field {
    uint32_t at, keySize, valueSize; // key then value at text_[at]
  };
  std::vector<Field> f_;
  std::string text_;
};

// Fields in key order (Fields::write sorts only what is not).
void writePhase(std::string& out, Fields& f, const blob::StreamPhase& ph) {
  out += "    phase_id: ";
  appendNumber(out, ph.phaseId);
  out += '\n';
  appendHex(f.add("buf_addr"), ph.bufAddr);
  if (ph.bufId) appendNumber(f.add("buf_id"), ph.bufId);
  appendNumber(f.add("buf_size"), ph.bufSize);
  appendNumber(f.add("data_format"), ph.dataFormat);
  if (ph.remoteReceiver) appendNameList(f.add("dest"), ph.dest);
  const bool dram = ph.dramInput || ph.dramOutput || ph.dramBufNocAddr;
  if (dram) appendHex(f.add("dram_buf_noc_addr"), ph.dramBufNocAddr);
  f.add("dram_input") += boolText(ph.dramInput);
  f.add("dram_output") += boolText(ph.dramOutput);
  if (ph.dramPadding) f.add("dram_padding") += "true";
  if (dram) f.add("dram_ram") += boolText(ph.dramRam);
  if (ph.ethReceiver) f.add("eth_receiver") += "true";
  if (ph.ethSender) f.add("eth_sender") += "true";
  appendNumber(f.add("incoming_data_noc"), ph.incomingDataNoc);
  if (ph.intermediate) f.add("intermediate") += "true";
  f.add("local_receiver") += boolText(ph.localReceiver);
  appendNumber(f.add("msg_size"), ph.msgSize);
  appendNumber(f.add("num_iters_in_epoch"), ph.numItersInEpoch);
  appendNumber(f.add("num_msgs"), ph.numMsgs);
  appendNumber(f.add("outgoing_data_noc"), ph.outgoingDataNoc);
  if (ph.dramPadding) f.add("padding_value") += support::yamlFloat(ph.paddingValue);
  if (ph.pipeId) appendNumber(f.add("pipe_id"), ph.pipeId);
  f.add("remote_receiver") += boolText(ph.remoteReceiver);
  f.add("remote_source") += boolText(ph.remoteSource);
  f.add("source_endpoint") += boolText(ph.sourceEndpoint);
  if (ph.remoteSource) appendNameList(f.add("src"), ph.src);
  if (ph.srcPeriodTiles) {
    if (!ph.srcChunkOffsets.empty()) {
      std::string& list = f.add("src_chunk_offsets");
      list += '[';
      for (size_t i = 0; i < ph.srcChunkOffsets.size(); ++i) {
        if (i) list += ", ";
        appendNumber(list, ph.srcChunkOffsets[i]);
      }
      list += ']';
      appendNumber(f.add("src_chunk_tiles"), ph.srcChunkTiles);
    }
    if (ph.sourceEndpoint) appendNumber(f.add("src_freed_tiles"), ph.srcFreedTiles);
    f.add("src_period_done") += boolText(ph.srcPeriodDone);
    appendNumber(f.add("src_period_tiles"), ph.srcPeriodTiles);
    appendNumber(f.add("src_tile_offset"), ph.srcTileOffset);
  }
  if (ph.untilizeCDim) {
    appendNumber(f.add("untilize_c_dim"), ph.untilizeCDim);
    appendNumber(f.add("untilize_full_c_dim"), ph.untilizeFullCDim);
    appendNumber(f.add("untilize_full_r_dim"), ph.untilizeFullRDim);
    appendNumber(f.add("untilize_r_dim"), ph.untilizeRDim);
    if (ph.untilizeTileR != 32 || ph.untilizeTileC != 32) {  // tile_dim
      appendNumber(f.add("untilize_tile_dim_c"), ph.untilizeTileC);
      appendNumber(f.add("untilize_tile_dim_r"), ph.untilizeTileR);
    }
    appendNumber(f.add("untilize_z_dim"), ph.untilizeZDim);
  }
  appendNumber(f.add("vc"), ph.vc);
  for (const auto& e : ph.extra) f.add(e.key) += e.value;
  f.write(out, "    ");
}

void writeDramIo(std::string& out, Fields& f, const blob::DramIo& io) {
  out += "    ";
  appendNumber(out, io.index);
  out += ":\n";
  appendHex(f.add("dram_buf_noc_addr"), io.dramBufNocAddr);
  if (io.input) appendNumber(f.add("dram_buf_read_chunk_size_tiles"), io.chunkTiles);
  appendNumber(f.add("dram_buf_size_bytes"), io.dramBufSizeBytes);
  appendNumber(f.add("dram_buf_size_q_slots"), io.dramBufSizeQSlots);
  appendNumber(f.add("dram_buf_size_tiles"), io.dramBufSizeTiles);
  if (io.output) appendNumber(f.add("dram_buf_write_chunk_size_tiles"), io.chunkTiles);
  f.add("dram_input") += boolText(io.input);
  f.add("dram_output") += boolText(io.output);
  f.add("dram_ram") += boolText(io.ram);
  appendNumber(f.add("msg_size"), io.msgSize);
  appendNumber(f.add("num_msgs"), io.numMsgs);
  if (io.input) {
    appendNumber(f.add("reader_index"), io.readerIndex);
    appendNumber(f.add("total_readers"), io.totalReaders);
  }
  for (const auto& e : io.extra) f.add(e.key) += e.value;
  f.write(out, "      ");
}

} // namespace

std::string writeBlobYaml(const blob::BlobYaml& blob, const std::map<blob::StreamName, std::string>& comments,
                          const BlobYamlHeader* header) {
  std::string out;
  // About 700 bytes a phase: one buffer, grown (copied) rarely.
  size_t phaseCount = 0;
  for (const auto& s : blob.streams) phaseCount += s.phases.size();
  out.reserve(1024 * phaseCount + 512 * blob.dramBlob.size() + 4096);
  Fields fields;
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
    writeDramIo(out, fields, *ios[i]);
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
    out += "phase_";
    appendNumber(out, n);
    out += ":\n";
    for (size_t i = 0; i < streams.size(); ++i) {
      if (n >= streams[i]->phases.size()) continue;
      out += keyLines[i];
      writePhase(out, fields, streams[i]->phases[n]);
    }
  }
  return out;
}

} // namespace tessera::pipegen
