// blob.yaml -> BlobYaml (rules: docs/blobgen.md, "Reading blob.yaml").
#include "blob/blob_yaml_reader.hpp"

#include "blob/blob_binary.hpp"
#include "device/device_contract.h"
#include "support/yaml.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

namespace tessera::blob {

namespace {

constexpr const char* kDataFormatNames[] = {
    "Float32", "Float16", "Float16_b", "Bfp8", "Bfp8_b", "Bfp4", "Bfp4_b", "Bfp2", "Bfp2_b", "Lf8", "Fp8_e4m3",
    "Int8", "Int32", "UInt8", "UInt16", "RawUInt8", "RawUInt16", "RawUInt32"};
static_assert(std::size(kDataFormatNames) == contract::kDataFormatCount, "one name per DataFormatCode");

// Decimal digits only, fits 32 bits.
std::optional<uint32_t> parseDecimal32(std::string_view s) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  uint32_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Decimal digits only, fits 64 bits.
std::optional<uint64_t> parseDecimal64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Appends `n` in decimal: names are made for every phase, without temporaries.
void appendNumber(std::string& out, uint64_t n) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, n).ptr);
}

void appendCoreName(std::string& out, uint32_t chip, uint32_t y, uint32_t x) {
  out += "chip_";
  appendNumber(out, chip);
  out += "__y_";
  appendNumber(out, y);
  out += "__x_";
  appendNumber(out, x);
}

// Consumes `prefix` then a decimal number from `s`.
bool takeNumber(std::string_view& s, std::string_view prefix, std::string_view terminator, uint32_t& out) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  size_t end = terminator.empty() ? s.size() : s.find(terminator);
  if (end == std::string_view::npos) return false;
  auto v = parseDecimal32(s.substr(0, end));
  if (!v) return false;
  out = *v;
  s.remove_prefix(end);
  return true;
}

// Compact flow-style text of a node for ExtraField values. Bounded.
void renderNode(const yaml::Node& n, std::string& out) {
  constexpr size_t kMaxChars = 4096;
  if (out.size() > kMaxChars) return;
  switch (n.Type()) {
    case yaml::NodeType::Scalar: out += n.Scalar(); break;
    case yaml::NodeType::Sequence: {
      out += '[';
      bool first = true;
      for (const auto& item : n) {
        if (!first) out += ", ";
        first = false;
        renderNode(item, out);
        if (out.size() > kMaxChars) break;
      }
      out += ']';
      break;
    }
    case yaml::NodeType::Map: {
      out += '{';
      bool first = true;
      for (const auto& kv : n) {
        if (!first) out += ", ";
        first = false;
        renderNode(kv.first, out);
        out += ": ";
        renderNode(kv.second, out);
        if (out.size() > kMaxChars) break;
      }
      out += '}';
      break;
    }
    default: out += "~"; break;
  }
}

std::string quote(const std::string& s) {
  return "'" + (s.size() > 60 ? s.substr(0, 60) + "..." : s) + "'";
}

// "<element>: <field>" for messages, spelled out only when one is reported
// (a generated blob.yaml has a million fields).
struct FieldName {
  const std::string& element;
  std::string_view key;
  std::string str() const { return element + ": " + std::string(key); }
};
std::string operator+(const FieldName& what, const char* s) { return what.str() + s; }

// A YAML float (decimal, exponent, .inf/.nan), as padding_value is written.
std::optional<float> parseFloat(const std::string& s) {
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<float>::quiet_NaN();
  if (s == ".inf" || s == "+.inf" || s == ".Inf") return std::numeric_limits<float>::infinity();
  if (s == "-.inf" || s == "-.Inf") return -std::numeric_limits<float>::infinity();
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// Presence bits of fields that dram_blob may fill in.
enum Present : uint32_t {
  kHasQSlots = 1 << 0,
  kHasSlotTiles = 1 << 1,
  kHasChunk = 1 << 2,
  kHasReaderIndex = 1 << 3,
  kHasTotalReaders = 1 << 4,
  kHasDramRam = 1 << 5,
  kHasDramAddr = 1 << 6,
};

struct PendingPhase {
  StreamPhase p;
  uint32_t present = 0;
  SourceLoc loc;  // the stream key of this phase
  SourceLoc srcLoc, destLoc;
};

class Reader {
public:
  Reader(const SourceBuffer& source, DiagnosticEngine& diags, const BlobReadOptions& options, BlobYamlSourceMap* map)
      : source_(source), d_(diags), opts_(options), map_(map) {}

  std::optional<BlobYaml> run();

private:
  // Scalar conversions with a blob-field error at the value.
  // The text of a scalar (kept by the document), else null.
  const std::string* scalarText(const yaml::Node& v, const FieldName& what);
  bool getU64(const yaml::Node& v, const FieldName& what, uint64_t& out);
  bool getU32(const yaml::Node& v, const FieldName& what, uint32_t& out);
  bool getU32List(const yaml::Node& v, const FieldName& what, std::vector<uint32_t>& out);
  bool getBool(const yaml::Node& v, const FieldName& what, bool& out);
  bool getStreamList(const yaml::Node& v, const FieldName& what, std::vector<StreamName>& out);
  bool getDataFormat(const yaml::Node& v, const FieldName& what, uint32_t& out);
  std::optional<StreamName> streamKey(const yaml::Node& k);
  // `what()` names the stream in the message (made only for an error).
  template <class What> bool checkWorker(const StreamName& n, SourceLoc loc, What what);

  void readPhaseSection(uint64_t phaseNumber, const yaml::Node& key, const yaml::Node& section);
  void readPhase(uint64_t phaseNumber, const StreamName& name, const yaml::Node& key, const yaml::Node& fields);
  void readDramBlob(const yaml::Node& section);
  void mergeDramBlob();

  const SourceBuffer& source_;
  DiagnosticEngine& d_;
  BlobReadOptions opts_;
  BlobYamlSourceMap* map_;
  std::map<StreamName, std::vector<PendingPhase>> phases_;
  std::set<std::pair<StreamName, uint64_t>> seenPhases_;
  std::set<StreamName> checkedCores_;
  BlobYaml out_;
};

const std::string* Reader::scalarText(const yaml::Node& v, const FieldName& what) {
  if (!v.IsScalar()) {
    d_.error("blob-field", locOf(v), what + ": expected a scalar value");
    return nullptr;
  }
  return &v.Scalar();
}

bool Reader::getU64(const yaml::Node& v, const FieldName& what, uint64_t& out) {
  const std::string* s = scalarText(v, what);
  if (!s) return false;
  auto x = parseUInt64(*s);
  if (!x) {
    d_.error("blob-field", locOf(v), what + ": expected an unsigned 64-bit integer, got " + quote(*s));
    return false;
  }
  out = *x;
  return true;
}

bool Reader::getU32(const yaml::Node& v, const FieldName& what, uint32_t& out) {
  const std::string* s = scalarText(v, what);
  if (!s) return false;
  auto x = parseUInt64(*s);
  if (!x || *x > 0xFFFFFFFFull) {
    d_.error("blob-field", locOf(v), what + ": expected an unsigned 32-bit integer, got " + quote(*s));
    return false;
  }
  out = static_cast<uint32_t>(*x);
  return true;
}

bool Reader::getU32List(const yaml::Node& v, const FieldName& what, std::vector<uint32_t>& out) {
  if (!v.IsSequence()) {
    d_.error("blob-field", locOf(v), what + ": expected a list of unsigned 32-bit integers");
    return false;
  }
  out.clear();
  out.reserve(v.size());
  bool ok = true;
  for (const auto& item : v) {
    uint32_t x = 0;
    if (getU32(item, what, x)) out.push_back(x);
    else ok = false;
  }
  return ok;
}

bool Reader::getBool(const yaml::Node& v, const FieldName& what, bool& out) {
  const std::string* s = scalarText(v, what);
  if (!s) return false;
  auto b = parseBool(*s);
  if (!b) {
    d_.error("blob-field", locOf(v), what + ": expected true or false, got " + quote(*s));
    return false;
  }
  out = *b;
  return true;
}

bool Reader::getStreamList(const yaml::Node& v, const FieldName& what, std::vector<StreamName>& out) {
  auto one = [&](const yaml::Node& n) {
    if (!n.IsScalar()) {
      d_.error("blob-field", locOf(n), what + ": expected a stream name (chip_<c>__y_<y>__x_<x>__stream_id_<s>)");
      return false;
    }
    auto name = parseStreamName(n.Scalar());
    if (!name) {
      d_.error("blob-field", locOf(n),
               what + ": " + quote(n.Scalar()) + " is not a stream name (chip_<c>__y_<y>__x_<x>__stream_id_<s>)");
      return false;
    }
    if (name->streamId >= kStreamsPerCore) {
      d_.error("blob-field", locOf(n),
               what + ": stream id " + std::to_string(name->streamId) + " is out of range (a core has " +
                   std::to_string(kStreamsPerCore) + " streams)");
      return false;
    }
    out.push_back(*name);
    return true;
  };
  out.clear();
  if (v.IsScalar()) return one(v);
  if (!v.IsSequence()) {
    d_.error("blob-field", locOf(v), what + ": expected a stream name or a list of them");
    return false;
  }
  bool ok = true;
  for (const auto& item : v) ok = one(item) && ok;
  return ok;
}

bool Reader::getDataFormat(const yaml::Node& v, const FieldName& what, uint32_t& out) {
  const std::string* s = scalarText(v, what);
  if (!s) return false;
  if (auto code = dataFormatCode(*s)) {
    out = *code;
    return true;
  }
  auto x = parseUInt64(*s);
  if (!x || *x >= contract::kDataFormatCount) {
    d_.error("blob-field", locOf(v),
             what + ": " + quote(*s) + " is not a data format (a name such as Float16_b, or a code below " +
                 std::to_string(contract::kDataFormatCount) + ")");
    return false;
  }
  out = static_cast<uint32_t>(*x);
  return true;
}

std::optional<StreamName> Reader::streamKey(const yaml::Node& k) {
  if (!k.IsScalar()) {
    d_.error("blob-stream-name", locOf(k), "expected a stream name key (chip_<c>__y_<y>__x_<x>__stream_id_<s>)");
    return std::nullopt;
  }
  auto name = parseStreamName(k.Scalar());
  if (!name) {
    d_.error("blob-stream-name", locOf(k),
             quote(k.Scalar()) + " is not a stream name (expected chip_<c>__y_<y>__x_<x>__stream_id_<s>)");
    return std::nullopt;
  }
  if (name->streamId >= kStreamsPerCore) {
    d_.error("blob-stream-name", locOf(k),
             k.Scalar() + ": stream id " + std::to_string(name->streamId) + " is out of range (a core has " +
                 std::to_string(kStreamsPerCore) + " streams, 0-" + std::to_string(kStreamsPerCore - 1) + ")");
    return std::nullopt;
  }
  return name;
}

template <class What> bool Reader::checkWorker(const StreamName& n, SourceLoc loc, What what) {
  if (!opts_.device) return true;
  const SocDescriptor& dev = *opts_.device;
  const bool fits = n.x <= 0x7FFFFFFF && n.y <= 0x7FFFFFFF;
  const CoreCoord c{fits ? static_cast<int>(n.x) : -1, fits ? static_cast<int>(n.y) : -1};
  // Ethernet cores carry relay streams (several chips), 32 of them.
  if (fits && std::find(dev.ethCores.begin(), dev.ethCores.end(), c) != dev.ethCores.end()) {
    if (n.streamId < contract::kEthStreamsPerCore) return true;
    d_.error("blob-core", loc,
             what() + ": stream id " + std::to_string(n.streamId) + " on an ethernet core (y " + std::to_string(n.y) +
                 ", x " + std::to_string(n.x) + "), which has " + std::to_string(contract::kEthStreamsPerCore) +
                 " streams");
    return false;
  }
  bool ok = fits && dev.isWorker(c);
  if (!ok)
    d_.error("blob-core", loc,
             what() + ": core (y " + std::to_string(n.y) + ", x " + std::to_string(n.x) +
                 ") is not a " + (dev.ethCores.empty() ? "worker" : "worker or ethernet") + " core of " + dev.name)
        .note("stream names use physical NOC coordinates (x " + std::to_string(dev.workerColX.empty() ? 0 : dev.workerColX.front()) +
              "-" + std::to_string(dev.workerColX.empty() ? 0 : dev.workerColX.back()) + ", y " +
              std::to_string(dev.workerRowY.empty() ? 0 : dev.workerRowY.front()) + "-" +
              std::to_string(dev.workerRowY.empty() ? 0 : dev.workerRowY.back()) + " on this device)");
  return ok;
}

void Reader::readPhase(uint64_t phaseNumber, const StreamName& name, const yaml::Node& key, const yaml::Node& fields) {
  std::string element = streamNameString(name);
  element += " phase_";
  appendNumber(element, phaseNumber);
  const SourceLoc keyLoc = locOf(key);
  if (!seenPhases_.insert({name, phaseNumber}).second) {
    d_.error("blob-duplicate", keyLoc, element + ": the stream appears twice in this phase");
    return;
  }
  if (map_) map_->streams.try_emplace(name, keyLoc);
  if (checkedCores_.insert(name).second) checkWorker(name, keyLoc, [&] { return "stream " + streamNameString(name); });

  PendingPhase pending;
  pending.loc = keyLoc;
  StreamPhase& p = pending.p;
  p.phaseId = phaseNumber;
  if (fields.IsNull()) {
    d_.error("blob-phase-role", keyLoc, element + ": empty phase (no fields)");
    return;
  }
  if (!fields.IsMap()) {
    d_.error("blob-yaml", locOf(fields), element + ": expected a map of phase fields");
    return;
  }
  bool ok = true;
  bool receiverEndpoint = false;
  std::optional<uint32_t> numMcastDests;
  SourceLoc destLoc = keyLoc, srcLoc = keyLoc, mcastLoc = keyLoc;
  // A few dozen, compared by address (a document keeps one string per text):
  // a list beats a set.
  std::vector<const std::string*> seenKeys;
  for (const auto& kv : fields) {
    if (!kv.first.IsScalar()) {
      d_.error("blob-yaml", locOf(kv.first), element + ": expected a field name");
      ok = false;
      continue;
    }
    const std::string& key = kv.first.Scalar();
    const std::string_view k = key;
    const yaml::Node& v = kv.second;
    const FieldName what{element, k};
    if (std::find(seenKeys.begin(), seenKeys.end(), &key) != seenKeys.end()) {
      d_.error("blob-duplicate", locOf(kv.first), element + ": field '" + key + "' appears twice");
      ok = false;
      continue;
    }
    seenKeys.push_back(&key);
    if (k == "phase_id") {
      uint64_t id = 0;
      if (!getU64(v, what, id)) ok = false;
      else if (id != phaseNumber) {
        d_.error("blob-phase-id", locOf(v),
                 element + ": phase_id " + std::to_string(id) + " differs from the enclosing phase_" +
                     std::to_string(phaseNumber));
        ok = false;
      }
    } else if (k == "num_msgs") ok = getU32(v, what, p.numMsgs) && ok;
    else if (k == "msg_size") ok = getU32(v, what, p.msgSize) && ok;
    else if (k == "buf_addr") ok = getU32(v, what, p.bufAddr) && ok;
    else if (k == "buf_size") ok = getU32(v, what, p.bufSize) && ok;
    else if (k == "num_iters_in_epoch") ok = getU32(v, what, p.numItersInEpoch) && ok;
    else if (k == "pipe_id") ok = getU64(v, what, p.pipeId) && ok;
    else if (k == "buf_id") ok = getU64(v, what, p.bufId) && ok;
    else if (k == "source_endpoint") ok = getBool(v, what, p.sourceEndpoint) && ok;
    else if (k == "remote_source") ok = getBool(v, what, p.remoteSource) && ok;
    else if (k == "dram_input") ok = getBool(v, what, p.dramInput) && ok;
    else if (k == "local_receiver") ok = getBool(v, what, p.localReceiver) && ok;
    else if (k == "remote_receiver") ok = getBool(v, what, p.remoteReceiver) && ok;
    else if (k == "dram_output") ok = getBool(v, what, p.dramOutput) && ok;
    else if (k == "src") {
      srcLoc = locOf(v);
      ok = getStreamList(v, what, p.src) && ok;
    } else if (k == "dest") {
      destLoc = locOf(v);
      ok = getStreamList(v, what, p.dest) && ok;
    } else if (k == "dram_buf_noc_addr") {
      ok = getU64(v, what, p.dramBufNocAddr) && ok;
      pending.present |= kHasDramAddr;
    } else if (k == "dram_ram") {
      ok = getBool(v, what, p.dramRam) && ok;
      pending.present |= kHasDramRam;
    } else if (k == "dram_buf_size_q_slots") {
      ok = getU32(v, what, p.dramBufSizeQSlots) && ok;
      pending.present |= kHasQSlots;
    } else if (k == "dram_buf_size_tiles") {
      ok = getU32(v, what, p.dramBufSizeTiles) && ok;
      pending.present |= kHasSlotTiles;
    } else if (k == "dram_buf_read_chunk_size_tiles" || k == "dram_buf_write_chunk_size_tiles") {
      ok = getU32(v, what, p.dramChunkTiles) && ok;
      pending.present |= kHasChunk;
    } else if (k == "reader_index") {
      ok = getU32(v, what, p.dramReaderIndex) && ok;
      pending.present |= kHasReaderIndex;
    } else if (k == "total_readers") {
      ok = getU32(v, what, p.dramTotalReaders) && ok;
      pending.present |= kHasTotalReaders;
    } else if (k == "incoming_data_noc") ok = getU32(v, what, p.incomingDataNoc) && ok;
    else if (k == "outgoing_data_noc") ok = getU32(v, what, p.outgoingDataNoc) && ok;
    else if (k == "vc") ok = getU32(v, what, p.vc) && ok;
    else if (k == "data_format") ok = getDataFormat(v, what, p.dataFormat) && ok;
    else if (k == "src_period_tiles") ok = getU32(v, what, p.srcPeriodTiles) && ok;
    else if (k == "src_tile_offset") ok = getU32(v, what, p.srcTileOffset) && ok;
    else if (k == "src_period_done") ok = getBool(v, what, p.srcPeriodDone) && ok;
    else if (k == "intermediate") ok = getBool(v, what, p.intermediate) && ok;
    else if (k == "dram_padding") ok = getBool(v, what, p.dramPadding) && ok;
    else if (k == "eth_sender") ok = getBool(v, what, p.ethSender) && ok;
    else if (k == "eth_receiver") ok = getBool(v, what, p.ethReceiver) && ok;
    else if (k == "padding_value") {
      const std::string* text = scalarText(v, what);
      if (!text) ok = false;
      else if (std::optional<float> f = parseFloat(*text)) p.paddingValue = *f;
      else {
        d_.error("blob-field", locOf(v), what + ": expected a number, got " + quote(*text));
        ok = false;
      }
    } else if (k == "src_freed_tiles") ok = getU32(v, what, p.srcFreedTiles) && ok;
    else if (k == "src_chunk_offsets") ok = getU32List(v, what, p.srcChunkOffsets) && ok;
    else if (k == "src_chunk_tiles") ok = getU32(v, what, p.srcChunkTiles) && ok;
    else if (k == "untilize_r_dim") ok = getU32(v, what, p.untilizeRDim) && ok;
    else if (k == "untilize_c_dim") ok = getU32(v, what, p.untilizeCDim) && ok;
    else if (k == "untilize_full_r_dim") ok = getU32(v, what, p.untilizeFullRDim) && ok;
    else if (k == "untilize_full_c_dim") ok = getU32(v, what, p.untilizeFullCDim) && ok;
    else if (k == "untilize_z_dim") ok = getU32(v, what, p.untilizeZDim) && ok;
    else if (k == "untilize_tile_dim_r") ok = getU32(v, what, p.untilizeTileR) && ok;
    else if (k == "untilize_tile_dim_c") ok = getU32(v, what, p.untilizeTileC) && ok;
    else if (k == "num_mcast_dests") {
      uint32_t n = 0;
      mcastLoc = locOf(v);
      if (getU32(v, what, n)) numMcastDests = n;
      else ok = false;
    } else {
      if (k == "receiver_endpoint") {
        bool b = false;
        if (getBool(v, what, b)) receiverEndpoint = b;
        else ok = false;
      }
      ExtraField e;
      e.key = k;
      renderNode(v, e.value);
      p.extra.push_back(std::move(e));
    }
  }
  if (!ok) return;

  // BUDA's flag combinations, normalized (docs/blobgen.md).
  if (p.sourceEndpoint && (p.dramInput || p.remoteSource)) p.sourceEndpoint = false;
  if (!p.src.empty() && !p.sourceEndpoint && !p.remoteSource && !p.dramInput) p.remoteSource = true;
  if (receiverEndpoint && !p.localReceiver && !p.remoteReceiver && !p.dramOutput) p.localReceiver = true;
  if (!p.dest.empty() && !p.localReceiver && !p.remoteReceiver && !p.dramOutput) p.remoteReceiver = true;

  const int sources = int{p.sourceEndpoint} + int{p.remoteSource} + int{p.dramInput};
  const int destinations = int{p.localReceiver} + int{p.remoteReceiver} + int{p.dramOutput};
  if (sources == 0) {
    d_.error("blob-phase-role", keyLoc, element + ": no source (source_endpoint, remote_source or dram_input)");
    ok = false;
  } else if (sources > 1) {
    d_.warning("blob-phase-role", keyLoc,
               element + ": more than one source (" + std::string(p.sourceEndpoint ? "source_endpoint " : "") +
                   (p.remoteSource ? "remote_source " : "") + (p.dramInput ? "dram_input" : "") + ")");
  }
  if (destinations == 0) {
    d_.error("blob-phase-role", keyLoc, element + ": no destination (local_receiver, remote_receiver or dram_output)");
    ok = false;
  } else if (destinations > 1) {
    std::string list = std::string(p.localReceiver ? "local_receiver " : "") +
                       (p.remoteReceiver ? "remote_receiver " : "") + (p.dramOutput ? "dram_output" : "");
    while (!list.empty() && list.back() == ' ') list.pop_back();
    d_.warning("blob-phase-role", keyLoc, element + ": more than one destination (" + list + ")");
  }
  if (p.remoteSource && p.src.empty()) {
    d_.error("blob-phase-role", keyLoc, element + ": remote_source phase without src");
    ok = false;
  }
  if (p.remoteReceiver && p.dest.empty()) {
    d_.error("blob-phase-role", keyLoc, element + ": remote_receiver phase without dest");
    ok = false;
  }
  if (p.dramPadding && !p.dramInput) {
    d_.error("blob-dram", keyLoc, element + ": dram_padding on a phase that is not dram_input (a padding buffer is only read)");
    ok = false;
  }
  if (p.untilizeRDim || p.untilizeCDim || p.untilizeFullRDim || p.untilizeFullCDim || p.untilizeZDim) {
    const bool zero = !p.untilizeRDim || !p.untilizeCDim || !p.untilizeFullRDim || !p.untilizeFullCDim || !p.untilizeZDim;
    if (zero || p.untilizeFullRDim % p.untilizeRDim || p.untilizeFullCDim % p.untilizeCDim) {
      d_.error("blob-untilize", keyLoc,
               element + ": untilize_r_dim " + std::to_string(p.untilizeRDim) + ", untilize_c_dim " +
                   std::to_string(p.untilizeCDim) + ", untilize_full_r_dim " + std::to_string(p.untilizeFullRDim) +
                   ", untilize_full_c_dim " + std::to_string(p.untilizeFullCDim) + ", untilize_z_dim " +
                   std::to_string(p.untilizeZDim) +
                   ": all five must be set, and the full dims must be whole multiples of the core's block");
      ok = false;
    }
  }
  {
    const uint32_t r = p.untilizeTileR, c = p.untilizeTileC;
    const bool shape = c == 32 ? (r == 1 || r == 2 || r == 4 || r == 8 || r == 16 || r == 32) : (c == 16 && r == 32);
    if (!shape) {
      d_.error("blob-untilize", keyLoc,
               element + ": untilize_tile_dim_r " + std::to_string(r) + ", untilize_tile_dim_c " + std::to_string(c) +
                   " is not a tile shape (32x32, 32x16, or 1/2/4/8/16 rows of 32)");
      ok = false;
    }
  }
  if ((p.dramInput || p.dramOutput) && !(pending.present & kHasDramAddr)) {
    d_.error("blob-dram", keyLoc,
             element + ": " + (p.dramInput ? "dram_input" : "dram_output") + " phase without dram_buf_noc_addr");
    ok = false;
  }

  if (!ok) return;

  // A BUDA multicast dest: [start, end] corners of a NOC rectangle.
  if (numMcastDests) {
    if (p.dest.size() != 2) {
      d_.error("blob-mcast", destLoc,
               element + ": with num_mcast_dests, dest must be [start, end] (two corners of a NOC rectangle), got " +
                   std::to_string(p.dest.size()) + " entries");
      return;
    }
    const StreamName a = p.dest[0], b = p.dest[1];
    if (a.chip != b.chip || a.streamId != b.streamId) {
      d_.error("blob-mcast", destLoc,
               element + ": multicast corners " + streamNameString(a) + " and " + streamNameString(b) +
                   " differ in chip or stream id");
      return;
    }
    const uint32_t y0 = std::min(a.y, b.y), y1 = std::max(a.y, b.y), x0 = std::min(a.x, b.x), x1 = std::max(a.x, b.x);
    const uint64_t area = (uint64_t{y1} - y0 + 1) * (uint64_t{x1} - x0 + 1);
    if (area > 65536) {
      d_.error("blob-mcast", destLoc, element + ": multicast rectangle of " + std::to_string(area) + " cores is too large");
      return;
    }
    std::vector<StreamName> expanded;
    for (uint32_t y = y0; y <= y1; ++y)
      for (uint32_t x = x0; x <= x1; ++x)
        if (!opts_.device || opts_.device->isWorker(CoreCoord{static_cast<int>(x), static_cast<int>(y)}))
          expanded.push_back(StreamName{a.chip, y, x, a.streamId});
    if (expanded.size() != *numMcastDests) {
      d_.error("blob-mcast", mcastLoc,
               element + ": num_mcast_dests is " + std::to_string(*numMcastDests) + " but the rectangle " +
                   streamNameString(a) + " .. " + streamNameString(b) + " holds " + std::to_string(expanded.size()) +
                   " worker cores" + (opts_.device ? " of " + opts_.device->name : ""));
      return;
    }
    p.dest = std::move(expanded);
  }

  for (const StreamName& s : p.src)
    ok = checkWorker(s, srcLoc, [&] { return element + ": src " + streamNameString(s); }) && ok;
  for (const StreamName& s : p.dest)
    ok = checkWorker(s, destLoc, [&] { return element + ": dest " + streamNameString(s); }) && ok;
  if (!ok) return;
  if (std::string e = checkEthernetPhase(p, name); !e.empty()) {
    d_.error("blob-ethernet", keyLoc, element + ": " + e);
    return;
  }
  // Without ethernet (grayskull) a worker core's stream sends to or
  // receives from another chip through the PCIe cores instead.
  const bool viaPcie = opts_.device && opts_.device->ethCores.empty() && !opts_.device->pcie.empty() &&
                       opts_.device->isWorker(CoreCoord{static_cast<int>(name.x), static_cast<int>(name.y)});
  if ((p.ethSender || p.ethReceiver) && opts_.device && !viaPcie && name.x <= 0x7FFFFFFF && name.y <= 0x7FFFFFFF &&
      std::find(opts_.device->ethCores.begin(), opts_.device->ethCores.end(),
                CoreCoord{static_cast<int>(name.x), static_cast<int>(name.y)}) == opts_.device->ethCores.end()) {
    d_.error("blob-ethernet", keyLoc,
             element + ": " + (p.ethSender ? "eth_sender" : "eth_receiver") + " on a stream of core (y " +
                 std::to_string(name.y) + ", x " + std::to_string(name.x) +
                 "), which is not an ethernet core of " + opts_.device->name +
                 ": only ethernet cores have links (and worker cores, through PCIe, of chips without ethernet)");
    return;
  }
  pending.srcLoc = srcLoc;
  pending.destLoc = destLoc;
  phases_[name].push_back(std::move(pending));
}

void Reader::readPhaseSection(uint64_t phaseNumber, const yaml::Node& key, const yaml::Node& section) {
  if (section.IsNull()) return;
  if (!section.IsMap()) {
    d_.error("blob-yaml", locOf(section.IsDefined() ? section : key),
             "phase_" + std::to_string(phaseNumber) + ": expected a map of streams");
    return;
  }
  for (const auto& kv : section) {
    auto name = streamKey(kv.first);
    if (!name) continue;
    readPhase(phaseNumber, *name, kv.first, kv.second);
  }
}

void Reader::readDramBlob(const yaml::Node& section) {
  if (section.IsNull()) return;
  if (!section.IsMap()) {
    d_.error("blob-yaml", locOf(section), "dram_blob: expected a map of streams");
    return;
  }
  for (const auto& kv : section) {
    auto name = streamKey(kv.first);
    if (!name) continue;
    const std::string element = "dram_blob: " + streamNameString(*name);
    if (kv.second.IsNull()) continue;
    if (!kv.second.IsMap()) {
      d_.error("blob-yaml", locOf(kv.second), element + ": expected a map of buffer indices (0:, 1:, ...)");
      continue;
    }
    for (const auto& ikv : kv.second) {
      DramIo io;
      io.name = *name;
      if (!ikv.first.IsScalar() || !parseDecimal32(ikv.first.Scalar())) {
        d_.error("blob-yaml", locOf(ikv.first), element + ": expected a buffer index (0, 1, ...) as the key");
        continue;
      }
      io.index = *parseDecimal32(ikv.first.Scalar());
      const std::string el = element + " " + std::to_string(io.index);
      if (!ikv.second.IsMap()) {
        d_.error("blob-yaml", locOf(ikv.second.IsDefined() ? ikv.second : ikv.first), el + ": expected a map of fields");
        continue;
      }
      bool ok = true;
      std::vector<const std::string*> seenKeys;  // by address, as in readPhase
      for (const auto& f : ikv.second) {
        if (!f.first.IsScalar()) {
          d_.error("blob-yaml", locOf(f.first), el + ": expected a field name");
          ok = false;
          continue;
        }
        const std::string& key = f.first.Scalar();
        const std::string_view k = key;
        const yaml::Node& v = f.second;
        const FieldName what{el, k};
        if (std::find(seenKeys.begin(), seenKeys.end(), &key) != seenKeys.end()) {
          d_.error("blob-duplicate", locOf(f.first), el + ": field '" + key + "' appears twice");
          ok = false;
          continue;
        }
        seenKeys.push_back(&key);
        if (k == "dram_buf_noc_addr") ok = getU64(v, what, io.dramBufNocAddr) && ok;
        else if (k == "dram_buf_size_bytes") ok = getU32(v, what, io.dramBufSizeBytes) && ok;
        else if (k == "dram_buf_size_q_slots") ok = getU32(v, what, io.dramBufSizeQSlots) && ok;
        else if (k == "dram_buf_size_tiles") ok = getU32(v, what, io.dramBufSizeTiles) && ok;
        else if (k == "dram_buf_read_chunk_size_tiles" || k == "dram_buf_write_chunk_size_tiles")
          ok = getU32(v, what, io.chunkTiles) && ok;
        else if (k == "dram_input") ok = getBool(v, what, io.input) && ok;
        else if (k == "dram_output") ok = getBool(v, what, io.output) && ok;
        else if (k == "dram_ram") ok = getBool(v, what, io.ram) && ok;
        else if (k == "msg_size") ok = getU32(v, what, io.msgSize) && ok;
        else if (k == "num_msgs") ok = getU32(v, what, io.numMsgs) && ok;
        else if (k == "reader_index") ok = getU32(v, what, io.readerIndex) && ok;
        else if (k == "total_readers") ok = getU32(v, what, io.totalReaders) && ok;
        else {
          ExtraField e;
          e.key = k;
          renderNode(v, e.value);
          io.extra.push_back(std::move(e));
        }
      }
      if (ok) out_.dramBlob.push_back(std::move(io));
    }
  }
}

void Reader::mergeDramBlob() {
  std::map<StreamName, std::vector<const DramIo*>> byStream;
  for (const DramIo& io : out_.dramBlob) byStream[io.name].push_back(&io);
  for (auto& [name, list] : byStream)
    std::stable_sort(list.begin(), list.end(), [](const DramIo* a, const DramIo* b) { return a->index < b->index; });
  for (auto& [name, pending] : phases_) {
    auto it = byStream.find(name);
    if (it == byStream.end()) continue;
    for (PendingPhase& pp : pending) {
      StreamPhase& p = pp.p;
      // A gradient accumulator (an intermediate with a DRAM address) takes
      // its slot size from its dram_blob entry like any DRAM phase.
      if (!p.dramInput && !p.dramOutput && !(p.intermediate && p.dramBufNocAddr != 0)) continue;
      const DramIo* io = it->second.front();
      for (const DramIo* cand : it->second)
        if (cand->dramBufNocAddr == p.dramBufNocAddr) {
          io = cand;
          break;
        }
      if (!(pp.present & kHasQSlots)) p.dramBufSizeQSlots = io->dramBufSizeQSlots;
      if (!(pp.present & kHasSlotTiles)) p.dramBufSizeTiles = io->dramBufSizeTiles;
      if (!(pp.present & kHasChunk)) p.dramChunkTiles = io->chunkTiles;
      if (!(pp.present & kHasReaderIndex)) p.dramReaderIndex = io->readerIndex;
      if (!(pp.present & kHasTotalReaders)) p.dramTotalReaders = io->totalReaders;
      if (!(pp.present & kHasDramRam)) p.dramRam = io->ram;
    }
  }
}

std::optional<BlobYaml> Reader::run() {
  const size_t errorsBefore = d_.errorCount();
  auto doc = parseYaml(source_, d_);
  if (!doc) return std::nullopt;
  yaml::Node root = doc->root();
  if (!root.IsDefined() || root.IsNull()) {
    d_.error("blob-yaml", SourceLoc{1, 1}, "empty blob.yaml (expected dram_blob and phase_<n> sections)");
    return std::nullopt;
  }
  if (!root.IsMap()) {
    d_.error("blob-yaml", locOf(root), "expected a map with dram_blob and phase_<n> sections");
    return std::nullopt;
  }
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      d_.error("blob-yaml", locOf(kv.first), "expected a section name");
      continue;
    }
    const std::string& key = kv.first.Scalar();
    if (key == "dram_blob") {
      readDramBlob(kv.second);
    } else if (key == "global_info_blob") {
      // BUDA's (empty in every anchor); nothing of it is modelled.
    } else if (key.rfind("phase_", 0) == 0) {
      auto n = parseDecimal64(std::string_view(key).substr(6));
      if (!n) {
        d_.error("blob-yaml", locOf(kv.first), "'" + key + "' is not a phase section (expected phase_<number>)");
        continue;
      }
      readPhaseSection(*n, kv.first, kv.second);
    } else {
      d_.warning("blob-unknown-key", locOf(kv.first), "unknown section '" + key + "' (ignored)");
    }
  }
  // Every src and dest must be a stream of this blob.yaml (else the
  // receiver or sender is never configured: a hang).
  if (d_.errorCount() == errorsBefore)
    for (const auto& [name, pending] : phases_)
      for (const PendingPhase& pp : pending)
        for (const auto* list : {&pp.p.src, &pp.p.dest})
          for (const StreamName& r : *list)
            if (!phases_.count(r)) {
              const bool isSrc = list == &pp.p.src;
              d_.error("blob-dangling", isSrc ? pp.srcLoc : pp.destLoc,
                       streamNameString(name) + " phase_" + std::to_string(pp.p.phaseId) + ": " +
                           (isSrc ? "src " : "dest ") + streamNameString(r) + " is not a stream of this blob.yaml");
            }
  if (d_.errorCount() > errorsBefore) return std::nullopt;
  mergeDramBlob();
  for (auto& [name, pending] : phases_) {
    std::stable_sort(pending.begin(), pending.end(),
                     [](const PendingPhase& a, const PendingPhase& b) { return a.p.phaseId < b.p.phaseId; });
    Stream s;
    s.name = name;
    s.phases.reserve(pending.size());
    for (PendingPhase& pp : pending) s.phases.push_back(std::move(pp.p));
    out_.streams.push_back(std::move(s));
  }
  return std::move(out_);
}

}  // namespace

std::optional<StreamName> parseStreamName(std::string_view text) {
  StreamName n;
  std::string_view s = text;
  if (!takeNumber(s, "chip_", "__", n.chip)) return std::nullopt;
  if (!takeNumber(s, "__y_", "__", n.y)) return std::nullopt;
  if (!takeNumber(s, "__x_", "__", n.x)) return std::nullopt;
  if (!takeNumber(s, "__stream_id_", "", n.streamId)) return std::nullopt;
  return n;
}

std::string coreNameString(uint32_t chip, uint32_t y, uint32_t x) {
  std::string s;
  appendCoreName(s, chip, y, x);
  return s;
}

std::string streamNameString(const StreamName& n) {
  std::string s;
  s.reserve(48);
  appendCoreName(s, n.chip, n.y, n.x);
  s += "__stream_id_";
  appendNumber(s, n.streamId);
  return s;
}

std::optional<uint32_t> dataFormatCode(std::string_view name) {
  for (uint32_t i = 0; i < std::size(kDataFormatNames); ++i)
    if (name == kDataFormatNames[i]) return i;
  return std::nullopt;
}

std::optional<BlobYaml> readBlobYaml(const SourceBuffer& source, DiagnosticEngine& diags, const BlobReadOptions& options,
                                     BlobYamlSourceMap* sourceMap) {
  return Reader(source, diags, options, sourceMap).run();
}

std::vector<CoreBlob> splitByCore(const BlobYaml& yaml, uint32_t epoch) {
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, CoreBlob> cores;
  for (const Stream& s : yaml.streams) {
    CoreBlob& c = cores[{s.name.chip, s.name.y, s.name.x}];
    c.chip = s.name.chip;
    c.y = s.name.y;
    c.x = s.name.x;
    c.epoch = epoch;
    c.streams.push_back(s);
  }
  std::vector<CoreBlob> out;
  out.reserve(cores.size());
  for (auto& [key, c] : cores) {
    std::stable_sort(c.streams.begin(), c.streams.end(),
                     [](const Stream& a, const Stream& b) { return a.name.streamId < b.name.streamId; });
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace tessera::blob
