// blobgen --dump: a decoded blob as YAML with blob.yaml field names.
#include "blob/blob_binary.hpp"
#include "support/text_format.hpp"

#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tessera::blob {

namespace {

std::string hexStr(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string refName(const StreamName& n) {
  return "chip_" + std::to_string(n.chip) + "__y_" + std::to_string(n.y) + "__x_" + std::to_string(n.x) +
         "__stream_id_" + std::to_string(n.streamId);
}

std::string refList(const std::vector<StreamName>& list) {
  std::string s = "[";
  for (size_t i = 0; i < list.size(); ++i) s += (i ? ", " : "") + refName(list[i]);
  return s + "]";
}

}  // namespace

std::string dumpCoreBlob(const CoreBlob& blob, uint64_t sizeBytes, uint32_t version) {
  std::string o;
  auto line = [&](int indent, const std::string& key, const std::string& value) {
    o.append(static_cast<size_t>(indent), ' ');
    o += key;
    o += ": ";
    o += value;
    o += '\n';
  };
  size_t phases = 0;
  for (const Stream& s : blob.streams) phases += s.phases.size();
  o += "# Tessera overlay blob, layout version " + std::to_string(version) + "\n";
  line(0, "core", "chip_" + std::to_string(blob.chip) + "__y_" + std::to_string(blob.y) + "__x_" + std::to_string(blob.x));
  line(0, "epoch", std::to_string(blob.epoch));
  line(0, "size_bytes", std::to_string(sizeBytes));
  line(0, "num_streams", std::to_string(blob.streams.size()));
  line(0, "num_phases", std::to_string(phases));
  if (blob.streams.empty()) {
    line(0, "streams", "{}");
    return o;
  }
  o += "streams:\n";
  for (const Stream& s : blob.streams) {
    o += "  " + refName(s.name) + ":\n";
    if (s.phases.empty()) o += "    []\n";
    for (const StreamPhase& p : s.phases) {
      o += "    - phase_id: " + std::to_string(p.phaseId) + "\n";
      const int in = 6;
      line(in, "num_msgs", std::to_string(p.numMsgs));
      line(in, "msg_size", std::to_string(p.msgSize));
      line(in, "buf_addr", hexStr(p.bufAddr));
      line(in, "buf_size", std::to_string(p.bufSize));
      line(in, "num_iters_in_epoch", std::to_string(p.numItersInEpoch));
      line(in, "pipe_id", std::to_string(p.pipeId));
      line(in, "buf_id", std::to_string(p.bufId));
      const std::pair<bool, const char*> flags[] = {
          {p.sourceEndpoint, "source_endpoint"}, {p.remoteSource, "remote_source"},
          {p.dramInput, "dram_input"},           {p.localReceiver, "local_receiver"},
          {p.remoteReceiver, "remote_receiver"}, {p.dramOutput, "dram_output"},
          {p.dramRam, "dram_ram"},           {p.srcPeriodDone, "src_period_done"},
          {p.intermediate, "intermediate"}, {p.dramPadding, "dram_padding"},
          {p.ethSender, "eth_sender"},       {p.ethReceiver, "eth_receiver"}};
      for (const auto& [set, name] : flags)
        if (set) line(in, name, "true");
      line(in, "src", refList(p.src));
      line(in, "dest", refList(p.dest));
      line(in, "dram_buf_noc_addr", hexStr(p.dramBufNocAddr));
      line(in, "dram_buf_size_q_slots", std::to_string(p.dramBufSizeQSlots));
      line(in, "dram_buf_size_tiles", std::to_string(p.dramBufSizeTiles));
      line(in, "dram_chunk_size_tiles", std::to_string(p.dramChunkTiles));
      line(in, "reader_index", std::to_string(p.dramReaderIndex));
      line(in, "total_readers", std::to_string(p.dramTotalReaders));
      line(in, "incoming_data_noc", std::to_string(p.incomingDataNoc));
      line(in, "outgoing_data_noc", std::to_string(p.outgoingDataNoc));
      line(in, "vc", std::to_string(p.vc));
      line(in, "data_format", std::to_string(p.dataFormat));
      line(in, "src_period_tiles", std::to_string(p.srcPeriodTiles));
      line(in, "src_tile_offset", std::to_string(p.srcTileOffset));
      if (p.srcFreedTiles) line(in, "src_freed_tiles", std::to_string(p.srcFreedTiles));
      if (!p.srcChunkOffsets.empty()) {
        std::string list = "[";
        for (size_t i = 0; i < p.srcChunkOffsets.size(); ++i)
          list += (i ? ", " : "") + std::to_string(p.srcChunkOffsets[i]);
        line(in, "src_chunk_offsets", list + "]");
        line(in, "src_chunk_tiles", std::to_string(p.srcChunkTiles));
      }
      // Only where they mean something, so tiled, unpadded dumps stay short.
      if (p.dramPadding) line(in, "padding_value", support::yamlFloat(p.paddingValue));
      if (p.untilizeCDim) {
        line(in, "untilize_r_dim", std::to_string(p.untilizeRDim));
        line(in, "untilize_c_dim", std::to_string(p.untilizeCDim));
        line(in, "untilize_full_r_dim", std::to_string(p.untilizeFullRDim));
        line(in, "untilize_full_c_dim", std::to_string(p.untilizeFullCDim));
        line(in, "untilize_z_dim", std::to_string(p.untilizeZDim));
      }
    }
  }
  return o;
}

}  // namespace tessera::blob
