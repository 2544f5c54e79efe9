// pipegen.yaml reader. The file is a stream of `---`-separated documents;
// our YAML tree (lib/support/yaml_tree.hpp) holds one document, so the text
// is split at the separator lines and each document is parsed on its own,
// with positions shifted back to the whole file's lines.
#include "pipegen/pipegen_yaml_reader.hpp"

#include "formats/data_format.hpp"
#include "support/yaml.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace tessera::pipegen {

using pipe::Buffer;
using pipe::BufferId;
using pipe::BufferType;
using pipe::ExtraField;
using pipe::Pipe;
using pipe::PipegenYaml;
using pipe::SourcePos;

namespace {

constexpr const char* kRule = "pipegen-yaml";

// BUDA fields Tessera keeps in `extra` without a warning.
const std::set<std::string_view> kBudaBufferExtras = {
    "dram_prefetch_incoming_noc_id", "buffer_space_shared", "is_post_tm_relay_buf",
    "untilized_output_tile_dim_r", "untilized_output_tile_dim_c", "untilized_output_type_0_zdim",
    "untilized_output_type_1_zdim", "embedding_table_row_size_per_core", "embedding_table_row_size",
    "embedding_table_core_c_div", "embedding_op_index_input", "embedding_op_data_input",
    "embedding_indices_per_tile", "embedding_indices_per_input", "embedding_index", "embedding_table",
    "tilize_row_col_offset", "tilize_mblock_n_loop_num_rows", "hw_tilize", "prefetch_type"};
const std::set<std::string_view> kBudaPipeExtras = {"dram_pipe_num_forks", "dram_pipe_fork_index",
                                                    "op_input_dram_io_buf_size_tiles"};

std::optional<BufferType> parseBufferType(std::string_view s) {
  if (s == "unpacker") return BufferType::Unpacker;
  if (s == "packer") return BufferType::Packer;
  if (s == "intermediate") return BufferType::Intermediate;
  if (s == "dram_io") return BufferType::DramIo;
  if (s == "dram_prolog") return BufferType::DramProlog;
  if (s == "relay") return BufferType::Relay;
  if (s == "ethernet") return BufferType::Ethernet;
  return std::nullopt;
}

// A YAML value as one line of flow text (for `extra`).
std::string flowText(const yaml::Node& n, int depth = 0) {
  if (depth > 16) return "...";
  switch (n.Type()) {
  case yaml::NodeType::Scalar: return n.Scalar();
  case yaml::NodeType::Null: return "null";
  case yaml::NodeType::Sequence: {
    std::string s = "[";
    bool first = true;
    for (const auto& item : n) {
      s += (first ? "" : ", ") + flowText(item, depth + 1);
      first = false;
    }
    return s + "]";
  }
  case yaml::NodeType::Map: {
    std::string s = "{";
    bool first = true;
    for (const auto& kv : n) {
      s += (first ? "" : ", ") + flowText(kv.first, depth + 1) + ": " + flowText(kv.second, depth + 1);
      first = false;
    }
    return s + "}";
  }
  case yaml::NodeType::Undefined: break;
  }
  return "";
}

const char* kindName(yaml::NodeType t) {
  switch (t) {
  case yaml::NodeType::Scalar: return "a scalar";
  case yaml::NodeType::Null: return "null";
  case yaml::NodeType::Sequence: return "a list";
  case yaml::NodeType::Map: return "a map";
  case yaml::NodeType::Undefined: break;
  }
  return "nothing";
}

// The positions of the list items of a pipe, kept until references are checked.
struct PipeNodes {
  std::vector<SourceLoc> inputs;             // per input_list entry
  std::vector<std::vector<SourceLoc>> outputs; // per output_list entry
};

class Reader {
public:
  Reader(const SourceBuffer& source, DiagnosticEngine& diags) : source_(source), diags_(diags) {}

  std::optional<PipegenYaml> run(uint32_t epoch);

private:
  // Document-relative node position -> file position.
  SourceLoc at(const yaml::Node& n) const {
    SourceLoc l = locOf(n);
    if (l.valid()) l.line += lineOffset_;
    return l;
  }
  SourcePos posOf(const yaml::Node& n) const {
    SourceLoc l = at(n);
    return {l.line, l.col};
  }
  void error(const yaml::Node& n, const std::string& message) { diags_.error(kRule, at(n), message); }

  void parseDocument(const yaml::Node& root);
  void parseBuffer(const std::string& key, const yaml::Node& keyNode, const yaml::Node& body);
  void parsePipe(const std::string& key, const yaml::Node& keyNode, const yaml::Node& body);
  std::string commentOf(const yaml::Node& keyNode) const;
  void checkReferences(PipegenYaml& doc);

  // Scalar conversions; each reports its own error and returns false.
  // `what` names the field in messages.
  bool u64(const yaml::Node& v, std::string_view what, uint64_t& out);
  bool u32(const yaml::Node& v, std::string_view what, uint32_t& out);
  bool flag(const yaml::Node& v, std::string_view what, bool& out);
  bool text(const yaml::Node& v, std::string_view what, std::string& out);
  bool u32List(const yaml::Node& v, std::string_view what, std::vector<uint32_t>& out);
  bool idList(const yaml::Node& v, std::string_view what, std::vector<BufferId>& out, std::vector<SourceLoc>& locs);

  const SourceBuffer& source_;
  DiagnosticEngine& diags_;
  uint32_t lineOffset_ = 0;
  PipegenYaml doc_;
  bool sawGraphName_ = false;
  std::optional<pipe::Dialect> dialect_; // the graph document's `dialect:` (Tessera addition)
  std::vector<PipeNodes> pipeNodes_;
  std::map<BufferId, size_t> bufferIndex_;
  std::map<uint64_t, size_t> pipeIndex_;
};

bool Reader::u64(const yaml::Node& v, std::string_view what, uint64_t& out) {
  if (!v.IsScalar()) {
    error(v, std::string(what) + " must be an unsigned integer, found " + kindName(v.Type()));
    return false;
  }
  auto x = parseUInt64(v.Scalar());
  if (!x) {
    error(v, std::string(what) + " must be an unsigned integer, found '" + v.Scalar() + "'");
    return false;
  }
  out = *x;
  return true;
}

bool Reader::u32(const yaml::Node& v, std::string_view what, uint32_t& out) {
  uint64_t x = 0;
  if (!u64(v, what, x)) return false;
  if (x > std::numeric_limits<uint32_t>::max()) {
    error(v, std::string(what) + " " + v.Scalar() + " is out of range (at most 4294967295)");
    return false;
  }
  out = static_cast<uint32_t>(x);
  return true;
}

bool Reader::flag(const yaml::Node& v, std::string_view what, bool& out) {
  if (v.IsScalar())
    if (auto b = parseBool(v.Scalar())) {
      out = *b;
      return true;
    }
  error(v, std::string(what) + " must be 0, 1, true or false, found " +
               (v.IsScalar() ? "'" + v.Scalar() + "'" : std::string(kindName(v.Type()))));
  return false;
}

bool Reader::text(const yaml::Node& v, std::string_view what, std::string& out) {
  if (!v.IsScalar()) {
    error(v, std::string(what) + " must be a string, found " + kindName(v.Type()));
    return false;
  }
  out = v.Scalar();
  return true;
}

bool Reader::u32List(const yaml::Node& v, std::string_view what, std::vector<uint32_t>& out) {
  if (v.IsScalar()) { // a lone number where BUDA writes a one-element list
    uint32_t x = 0;
    if (!u32(v, what, x)) return false;
    out = {x};
    return true;
  }
  if (!v.IsSequence()) {
    error(v, std::string(what) + " must be a list of unsigned integers, found " + kindName(v.Type()));
    return false;
  }
  out.clear();
  const std::string entry = std::string(what) + " entry";
  for (const auto& item : v) {
    uint32_t x = 0;
    if (!u32(item, entry, x)) return false;
    out.push_back(x);
  }
  return true;
}

bool Reader::idList(const yaml::Node& v, std::string_view what, std::vector<BufferId>& out,
                    std::vector<SourceLoc>& locs) {
  if (!v.IsSequence()) {
    error(v, std::string(what) + " must be a list of buffer ids, found " + kindName(v.Type()));
    return false;
  }
  if (v.size() == 0) {
    error(v, std::string(what) + " is empty");
    return false;
  }
  const std::string entry = std::string(what) + " entry";
  for (const auto& item : v) {
    uint64_t x = 0;
    if (!u64(item, entry, x)) return false;
    out.push_back(x);
    locs.push_back(at(item));
  }
  return true;
}

std::string Reader::commentOf(const yaml::Node& keyNode) const {
  SourceLoc l = at(keyNode);
  std::string_view line = source_.line(l.line);
  size_t hash = line.find('#', l.col > 0 ? l.col - 1 : 0);
  if (hash == std::string_view::npos) return "";
  std::string_view c = line.substr(hash + 1);
  while (!c.empty() && (c.front() == ' ' || c.front() == '\t')) c.remove_prefix(1);
  while (!c.empty() && (c.back() == ' ' || c.back() == '\t' || c.back() == '\r')) c.remove_suffix(1);
  return std::string(c);
}

// `prefix<digits>` -> the number.
std::optional<uint64_t> idOfKey(const std::string& key, std::string_view prefix) {
  if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  std::string_view digits(key);
  digits.remove_prefix(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return parseUInt64(digits);
}

void Reader::parseDocument(const yaml::Node& root) {
  if (!root.IsDefined() || root.IsNull()) return; // an empty document
  if (!root.IsMap()) {
    error(root, std::string("a pipegen.yaml document must be a map (graph_name, buffer_<id> or pipe_<id>), found ") +
                    kindName(root.Type()));
    return;
  }
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      error(kv.first, "document keys must be graph_name, buffer_<id> or pipe_<id>");
      continue;
    }
    const std::string& key = kv.first.Scalar();
    if (key == "cluster_chips") {
      if (u32(kv.second, "cluster_chips", doc_.clusterChips) && doc_.clusterChips == 0)
        error(kv.second, "cluster_chips must be at least 1");
    } else if (key == "dialect") {
      // Tessera addition: how the file counts tiles, when it cannot be told
      // from the fields (a BUDA file with data formats added: loader
      // --pipes-from). Absent: Tessera when a buffer carries data_format.
      std::string d;
      if (text(kv.second, "dialect", d)) {
        if (d == "buda") dialect_ = pipe::Dialect::Buda;
        else if (d == "tessera") dialect_ = pipe::Dialect::Tessera;
        else error(kv.second, "dialect must be buda or tessera, found '" + d + "'");
      }
    } else if (key == "graph_name") {
      if (sawGraphName_) error(kv.first, "graph_name given twice");
      sawGraphName_ = true;
      text(kv.second, "graph_name", doc_.graphName);
    } else if (key.rfind("buffer_", 0) == 0) {
      parseBuffer(key, kv.first, kv.second);
    } else if (key.rfind("pipe_", 0) == 0) {
      parsePipe(key, kv.first, kv.second);
    } else {
      error(kv.first, "unknown document '" + key + "': expected graph_name, buffer_<id> or pipe_<id>");
    }
  }
}

void Reader::parseBuffer(const std::string& key, const yaml::Node& keyNode, const yaml::Node& body) {
  auto id = idOfKey(key, "buffer_");
  if (!id) {
    error(keyNode, "document name '" + key + "' is not buffer_<uniqid>");
    return;
  }
  if (!body.IsMap()) {
    error(body.IsDefined() && !body.IsNull() ? body : keyNode,
          key + " must be a map of buffer fields, found " + kindName(body.Type()));
    return;
  }
  Buffer b;
  b.uniqid = *id;
  b.pos = posOf(keyNode);
  b.comment = commentOf(keyNode);
  bool ok = true;
  std::vector<std::string_view> seen; // field names, kept by the document
  auto need = [&](std::string_view field) {
    if (std::find(seen.begin(), seen.end(), field) == seen.end()) {
      error(keyNode, key + ": missing field '" + std::string(field) + "'");
      ok = false;
    }
  };
  for (const auto& kv : body) {
    if (!kv.first.IsScalar()) {
      error(kv.first, key + ": field names must be scalars");
      ok = false;
      continue;
    }
    // A view: compares check the length before any byte.
    const std::string_view f = kv.first.Scalar();
    const yaml::Node& v = kv.second;
    seen.push_back(f);
    bool good = true;
    if (f == "md_op_name") good = text(v, f, b.mdOpName);
    else if (f == "buffer_type") {
      good = text(v, f, b.bufferTypeText);
      if (good) b.bufferType = parseBufferType(b.bufferTypeText).value_or(BufferType::Other);
    } else if (f == "id") good = u32(v, f, b.id);
    else if (f == "uniqid") {
      uint64_t u = 0;
      good = u64(v, f, u);
      if (good && u != b.uniqid) {
        error(v, key + ": uniqid " + std::to_string(u) + " does not match the document name");
        good = false;
      }
    } else if (f == "epoch_tiles") good = u32(v, f, b.epochTiles);
    else if (f == "tiles_per_input") good = u32(v, f, b.tilesPerInput);
    else if (f == "chip_id") {
      std::vector<uint32_t> chips;
      good = u32List(v, f, chips);
      if (good && chips.size() != 1) {
        error(v, key + ": chip_id must name exactly one chip");
        good = false;
      }
      if (good) b.chipId = chips[0];
    } else if (f == "core_coordinates") {
      std::vector<uint32_t> rc;
      good = u32List(v, f, rc);
      if (good && rc.size() != 2) {
        error(v, key + ": core_coordinates must be [row, column]");
        good = false;
      }
      if (good) b.core = {rc[0], rc[1]};
    } else if (f == "ethernet_chan") {
      uint32_t chan = 0;
      good = u32(v, f, chan);
      if (good) b.ethernetChan = chan;
    } else if (f == "pcie_relay") {
      good = flag(v, f, b.pcieRelay);
    } else if (f == "size_tiles") good = u32(v, f, b.sizeTiles);
    else if (f == "scatter_gather_num_tiles") good = u32(v, f, b.scatterGatherNumTiles);
    else if (f == "is_scatter") good = flag(v, f, b.isScatter);
    else if (f == "replicate") good = u32(v, f, b.replicate);
    else if (f == "tile_size") good = u32(v, f, b.tileSize);
    else if (f == "tile_clear_granularity") good = u32(v, f, b.tileClearGranularity);
    else if (f == "overlay_blob_size") good = u32(v, f, b.overlayBlobSize);
    else if (f == "dram_io_flag_is_remote") good = flag(v, f, b.dramIoFlagIsRemote);
    else if (f == "dram_buf_flag") good = flag(v, f, b.dramBufFlag);
    else if (f == "dram_buf_streaming") good = flag(v, f, b.dramBufStreaming);
    else if (f == "write_dram_buf_flag") good = flag(v, f, b.writeDramBufFlag);
    else if (f == "dram_chan") good = u32(v, f, b.dramChan);
    else if (f == "dram_sub_chan") good = u32(v, f, b.dramSubChan);
    else if (f == "dram_addr") good = u64(v, f, b.dramAddr);
    else if (f == "q_slots") good = u32(v, f, b.qSlots);
    else if (f == "dram_io_flag") good = flag(v, f, b.dramIoFlag);
    else if (f == "dram_io_allow_overwrite") good = flag(v, f, b.dramIoAllowOverwrite);
    else if (f == "dram_io_skip_flow_ctrl") good = flag(v, f, b.dramIoSkipFlowCtrl);
    else if (f == "dram_ram_flag") good = flag(v, f, b.dramRamFlag);
    else if (f == "use_shadow_rd_ptr") good = flag(v, f, b.useShadowRdPtr);
    else if (f == "prefetch_type" && v.IsScalar() && parseUInt64(v.Scalar())) good = u32(v, f, b.prefetchType);
    else if (f == "ublock_rt") good = u32(v, f, b.ublockRt);
    else if (f == "ublock_ct") good = u32(v, f, b.ublockCt);
    else if (f == "mblock_m") good = u32(v, f, b.mblockM);
    else if (f == "mblock_n") good = u32(v, f, b.mblockN);
    else if (f == "mblock_k") good = u32(v, f, b.mblockK);
    else if (f == "untilized_output") good = flag(v, f, b.untilizedOutput);
    else if (f == "untilized_output_full_r_dim") good = u32(v, f, b.untilizedOutputFullRDim);
    else if (f == "untilized_output_full_c_dim") good = u32(v, f, b.untilizedOutputFullCDim);
    else if (f == "untilized_output_r_dim") good = u32(v, f, b.untilizedOutputRDim);
    else if (f == "untilized_output_c_dim") good = u32(v, f, b.untilizedOutputCDim);
    else if (f == "untilized_output_z_dim") good = u32(v, f, b.untilizedOutputZDim);
    else if (f == "is_padding") good = flag(v, f, b.isPadding);
    else if (f == "padding_value") {
      auto r = v.IsScalar() ? parseReal(v.Scalar()) : std::nullopt;
      if (r) b.paddingValue = *r;
      else {
        error(v, key + ": padding_value must be a number");
        good = false;
      }
    } else if (f == "data_format") {
      std::string df;
      good = text(v, f, df);
      if (good && !parseDataFormat(df)) {
        error(v, key + ": unknown data_format '" + df + "'");
        good = false;
      }
      if (good) b.dataFormat = df;
    } else {
      if (!kBudaBufferExtras.count(f))
        diags_.warning("unknown-field", at(kv.first),
                       key + ": unknown buffer field '" + std::string(f) + "' (kept, not used)");
      b.extra.push_back({std::string(f), flowText(v), posOf(kv.first)});
    }
    ok &= good;
  }
  for (const char* f : {"md_op_name", "buffer_type", "core_coordinates", "epoch_tiles", "size_tiles",
                        "scatter_gather_num_tiles", "tile_size"})
    need(f);
  if (!ok) return;
  if (auto [it, fresh] = bufferIndex_.emplace(b.uniqid, doc_.buffers.size()); !fresh) {
    diags_.error(kRule, at(keyNode), "buffer " + std::to_string(b.uniqid) + " is defined twice")
        .note({doc_.buffers[it->second].pos.line, doc_.buffers[it->second].pos.column}, "first defined here");
    return;
  }
  doc_.buffers.push_back(std::move(b));
}

void Reader::parsePipe(const std::string& key, const yaml::Node& keyNode, const yaml::Node& body) {
  auto id = idOfKey(key, "pipe_");
  if (!id) {
    error(keyNode, "document name '" + key + "' is not pipe_<id>");
    return;
  }
  if (!body.IsMap()) {
    error(body.IsDefined() && !body.IsNull() ? body : keyNode,
          key + " must be a map of pipe fields, found " + kindName(body.Type()));
    return;
  }
  Pipe p;
  p.id = *id;
  p.pos = posOf(keyNode);
  p.comment = commentOf(keyNode);
  PipeNodes nodes;
  bool ok = true;
  bool sawInputs = false, sawOutputs = false;
  for (const auto& kv : body) {
    if (!kv.first.IsScalar()) {
      error(kv.first, key + ": field names must be scalars");
      ok = false;
      continue;
    }
    const std::string_view f = kv.first.Scalar();
    const yaml::Node& v = kv.second;
    bool good = true;
    if (f == "id") {
      uint64_t x = 0;
      good = u64(v, f, x);
      if (good && x != p.id) {
        error(v, key + ": id " + std::to_string(x) + " does not match the document name");
        good = false;
      }
    } else if (f == "input_list") {
      sawInputs = true;
      p.inputList.clear();
      nodes.inputs.clear();
      good = idList(v, "input_list", p.inputList, nodes.inputs);
    } else if (f == "output_list") {
      sawOutputs = true;
      p.outputList.clear();
      nodes.outputs.clear();
      if (v.IsSequence() && v.size() > 0 && v[size_t{0}].IsSequence()) {
        p.outputListNested = true;
        for (const auto& inner : v) {
          std::vector<BufferId> ids;
          std::vector<SourceLoc> locs;
          if (!idList(inner, "output_list entry", ids, locs)) {
            good = false;
            break;
          }
          p.outputList.push_back(std::move(ids));
          nodes.outputs.push_back(std::move(locs));
        }
      } else {
        std::vector<BufferId> ids;
        std::vector<SourceLoc> locs;
        good = idList(v, "output_list", ids, locs);
        p.outputList.push_back(std::move(ids));
        nodes.outputs.push_back(std::move(locs));
      }
    } else if (f == "pipe_periodic_repeat") good = u32(v, f, p.pipePeriodicRepeat);
    else if (f == "pipe_consumer_repeat") good = u32(v, f, p.pipeConsumerRepeat);
    else if (f == "incoming_noc_id") good = u32(v, f, p.incomingNocId);
    else if (f == "outgoing_noc_id") good = u32(v, f, p.outgoingNocId);
    else if (f == "incoming_vc") good = u32(v, f, p.incomingVc);
    else if (f == "outgoing_vc") good = u32(v, f, p.outgoingVc);
    else if (f == "mcast_core_rc") {
      p.mcastCoreRc.clear();
      if (v.IsSequence() && v.size() > 0 && v[size_t{0}].IsSequence()) {
        for (const auto& inner : v) {
          std::vector<uint32_t> rc;
          if (!u32List(inner, f, rc)) {
            good = false;
            break;
          }
          p.mcastCoreRc.push_back(std::move(rc));
        }
      } else {
        std::vector<uint32_t> rc;
        good = u32List(v, f, rc);
        p.mcastCoreRc.push_back(std::move(rc));
      }
    } else if (f == "dram_pipe_total_readers") good = u32List(v, f, p.dramPipeTotalReaders);
    else if (f == "dram_pipe_reader_index") good = u32List(v, f, p.dramPipeReaderIndex);
    else if (f == "output_padding_list") good = u32List(v, f, p.outputPaddingList);
    else if (f == "mmio_pipe") {
      uint32_t flag = 0;
      good = u32(v, f, flag);
      p.mmioPipe = flag != 0;
    }
    else {
      if (!kBudaPipeExtras.count(f))
        diags_.warning("unknown-field", at(kv.first),
                       key + ": unknown pipe field '" + std::string(f) + "' (kept, not used)");
      p.extra.push_back({std::string(f), flowText(v), posOf(kv.first)});
    }
    ok &= good;
  }
  for (auto [f, saw] : {std::pair{"input_list", sawInputs}, std::pair{"output_list", sawOutputs}})
    if (!saw) {
      error(keyNode, key + ": missing field '" + std::string(f) + "'");
      ok = false;
    }
  if (!ok) return;
  if (auto [it, fresh] = pipeIndex_.emplace(p.id, doc_.pipes.size()); !fresh) {
    diags_.error(kRule, at(keyNode), "pipe " + std::to_string(p.id) + " is defined twice")
        .note({doc_.pipes[it->second].pos.line, doc_.pipes[it->second].pos.column}, "first defined here");
    return;
  }
  doc_.pipes.push_back(std::move(p));
  pipeNodes_.push_back(std::move(nodes));
}

void Reader::checkReferences(PipegenYaml& doc) {
  // Buffers by uniqid: an input entry names the buffer with the largest
  // uniqid not above it, plus an offset inside that buffer's period.
  for (size_t pi = 0; pi < doc.pipes.size(); ++pi) {
    const Pipe& p = doc.pipes[pi];
    const PipeNodes& nodes = pipeNodes_[pi];
    for (size_t i = 0; i < p.inputList.size(); ++i) {
      BufferId u = p.inputList[i];
      auto it = bufferIndex_.upper_bound(u);
      const Buffer* b = it == bufferIndex_.begin() ? nullptr : &doc.buffers[std::prev(it)->second];
      if (!b) {
        diags_.error("unknown-buffer", nodes.inputs[i],
                     "pipe " + std::to_string(p.id) + ": input " + std::to_string(u) + " names no buffer");
        continue;
      }
      uint64_t offset = u - b->uniqid;
      uint64_t period = periodTiles(*b, doc.dialect);
      if (offset != 0 && offset + entryTiles(*b, doc.dialect) > period) {
        diags_.error("unknown-buffer", nodes.inputs[i],
                     "pipe " + std::to_string(p.id) + ": input " + std::to_string(u) + " names no buffer (buffer " +
                         std::to_string(b->uniqid) + " has a period of " + std::to_string(period) +
                         " tiles; offset " + std::to_string(offset) + " + " +
                         std::to_string(entryTiles(*b, doc.dialect)) + " tiles is beyond it)")
            .note({b->pos.line, b->pos.column}, "buffer " + std::to_string(b->uniqid) + " ('" + b->mdOpName + "')");
      }
    }
    for (size_t g = 0; g < p.outputList.size(); ++g)
      for (size_t i = 0; i < p.outputList[g].size(); ++i) {
        BufferId u = p.outputList[g][i];
        if (!bufferIndex_.count(u))
          diags_.error("unknown-buffer", nodes.outputs[g][i],
                       "pipe " + std::to_string(p.id) + ": output " + std::to_string(u) + " names no buffer");
      }
  }
}

std::optional<PipegenYaml> Reader::run(uint32_t epoch) {
  const std::string& text = source_.text();
  size_t errorsBefore = diags_.errorCount();
  // Split at `---` / `...` lines.
  size_t pos = 0;
  uint32_t line = 0;          // 0-based line of `pos`
  size_t docStart = 0;
  uint32_t docLine = 0;
  auto flush = [&](size_t end) {
    if (end > docStart) {
      DiagnosticEngine local;
      auto parsed = yaml::Document::parse(std::string_view(text).substr(docStart, end - docStart), local);
      for (const Diagnostic& d : local.diagnostics()) {
        SourceLoc l = d.loc;
        if (l.valid()) l.line += docLine;
        diags_.error(d.rule, l, d.message);
      }
      if (parsed) {
        lineOffset_ = docLine;
        parseDocument((*parsed)->root());
      }
    }
  };
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    size_t end = eol == std::string::npos ? text.size() : eol;
    std::string_view l(text.data() + pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    bool separator = false;
    if (l.size() >= 3 && (l.substr(0, 3) == "---" || l.substr(0, 3) == "...")) {
      std::string_view rest = l.substr(3);
      size_t nb = rest.find_first_not_of(" \t");
      separator = nb == std::string_view::npos || rest[nb] == '#';
    }
    if (separator) {
      flush(pos);
      docStart = eol == std::string::npos ? text.size() : eol + 1;
      docLine = line + 1;
    }
    if (eol == std::string::npos) break;
    pos = eol + 1;
    ++line;
  }
  flush(text.size());
  if (!sawGraphName_ && diags_.errorCount() == errorsBefore)
    diags_.error(kRule, {1, 1}, "missing graph_name (the first document)");
  doc_.dialect = dialect_ ? *dialect_
                 : std::any_of(doc_.buffers.begin(), doc_.buffers.end(),
                               [](const Buffer& b) { return b.dataFormat.has_value(); })
                     ? pipe::Dialect::Tessera
                     : pipe::Dialect::Buda;
  checkReferences(doc_);
  if (diags_.errorCount() != errorsBefore) return std::nullopt;
  doc_.epoch = epoch;
  return std::move(doc_);
}

} // namespace

uint64_t entryTiles(const pipe::Buffer& b, pipe::Dialect d) {
  if (d == pipe::Dialect::Tessera && !b.isScatter && b.tilesPerInput != 0) return b.tilesPerInput;
  return b.scatterGatherNumTiles;
}

uint64_t periodTiles(const pipe::Buffer& b, pipe::Dialect d) {
  if (!b.isScatter) return entryTiles(b, d);
  return uint64_t{b.scatterGatherNumTiles} * std::max<uint32_t>(1, b.replicate);
}

uint64_t epochTotalTiles(const pipe::Buffer& b, pipe::Dialect d) {
  if (d == pipe::Dialect::Buda && b.isScatter) return uint64_t{b.epochTiles} * std::max<uint32_t>(1, b.replicate);
  return b.epochTiles;
}

std::optional<PipegenYaml> readPipegenYaml(const SourceBuffer& source, DiagnosticEngine& diags, uint32_t epoch) {
  return Reader(source, diags).run(epoch);
}

} // namespace tessera::pipegen
