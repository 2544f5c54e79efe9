#include "sim/one_core_harness.hpp"

#include "formats/data_format.hpp"
#include "support/yaml.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

namespace tessera::sim {

namespace c = contract;
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kBufferAlign = 32;  // operand buffers start on 32-byte boundaries, as pipegen places them

uint32_t formatTileSize(c::DataFormatCode f) {
  static_assert(static_cast<uint32_t>(DataFormat::RawUInt32) == c::kRawUInt32,
                "contract::DataFormatCode follows DataFormat");
  return tileSizeBytes(static_cast<DataFormat>(f));
}

std::optional<c::DataFormatCode> parseFormat(std::string_view s) {
  std::optional<DataFormat> f = parseDataFormat(s);
  if (!f) return std::nullopt;
  return static_cast<c::DataFormatCode>(*f);
}

std::string operandText(uint32_t id) { return "operand " + std::to_string(id); }

} // namespace

std::optional<OperandRole> operandRole(uint32_t id) {
  if (id < c::kFirstOutputOperand) return OperandRole::Input;  // 8-15: inputs 8-15 of fused ops
  if (id >= c::kFirstOutputOperand && id < c::kFirstIntermediateOperand) return OperandRole::Output;
  if (id >= c::kFirstIntermediateOperand && id < c::kOperandCount) return OperandRole::Intermediate;
  return std::nullopt;
}

const char* operandRoleName(OperandRole role) {
  switch (role) {
  case OperandRole::Input: return "input";
  case OperandRole::Output: return "output";
  case OperandRole::Intermediate: return "intermediate";
  }
  return "?";
}

// --- Harness -------------------------------------------------------------------

bool OneCoreHarness::setup(std::vector<HarnessOperand> operands, const c::EpochInfo& epoch, std::string& error) {
  const uint64_t l1End = core_.l1().size();
  std::set<uint32_t> ids;
  for (HarnessOperand& op : operands) {
    const std::string name = operandText(op.id);
    std::optional<OperandRole> role = operandRole(op.id);
    if (!role) {
      error = name + ": not an input (0-15), output (16-23) or intermediate (24-31)";
      return false;
    }
    if (!ids.insert(op.id).second) {
      error = name + " is given more than once";
      return false;
    }
    if (op.capacityTiles == 0 || op.capacityTiles > 0xFFFF) {
      error = name + ": capacity must be 1..65535 tiles, got " + std::to_string(op.capacityTiles);
      return false;
    }
    if (op.tileSizeBytes == 0) op.tileSizeBytes = formatTileSize(op.format);
    if (op.tileSizeBytes == 0 || op.tileSizeBytes % 16 != 0) {
      error = name + ": tile size " + std::to_string(op.tileSizeBytes) + " is not a positive multiple of 16 bytes";
      return false;
    }
    if (*role != OperandRole::Input && !op.inputTiles.empty()) {
      error = name + ": only inputs (0-15) take input tiles";
      return false;
    }
    if (op.inputTiles.size() % op.tileSizeBytes != 0) {
      error = name + ": input data is " + std::to_string(op.inputTiles.size()) +
              " bytes, not a whole number of " + std::to_string(op.tileSizeBytes) + "-byte tiles";
      return false;
    }
    if (op.untilized && *role != OperandRole::Output) {
      error = name + ": only outputs (16-23) can be untilized";
      return false;
    }
  }
  // Explicit addresses first, then the rest packed upward after the highest one.
  std::vector<std::pair<uint64_t, uint64_t>> used;  // [begin, end)
  uint64_t next = c::kDataBufferBase;
  for (HarnessOperand& op : operands) {
    if (!op.address) continue;
    const uint64_t end = uint64_t{*op.address} + uint64_t{op.capacityTiles} * op.tileSizeBytes;
    if (*op.address < c::kDataBufferBase || end > l1End || *op.address % 16 != 0) {
      error = operandText(op.id) + ": buffer [" + support::hexLiteral(*op.address) + ", " + support::hexLiteral(end) +
              ") is not 16-byte aligned inside the data buffer area [" + support::hexLiteral(c::kDataBufferBase) + ", " +
              support::hexLiteral(l1End) + ")";
      return false;
    }
    used.emplace_back(*op.address, end);
    next = std::max(next, end);
  }
  for (HarnessOperand& op : operands) {
    if (op.address) continue;
    next = (next + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
    const uint64_t end = next + uint64_t{op.capacityTiles} * op.tileSizeBytes;
    if (end > l1End) {
      error = operandText(op.id) + ": " + std::to_string(op.capacityTiles) + " tiles of " +
              std::to_string(op.tileSizeBytes) + " bytes do not fit in L1 (needs up to " + support::hexLiteral(end) +
              ", L1 ends at " + support::hexLiteral(l1End) + ")";
      return false;
    }
    op.address = static_cast<uint32_t>(next);
    used.emplace_back(next, end);
    next = end;
  }
  for (size_t i = 0; i < operands.size(); ++i)
    for (size_t j = i + 1; j < operands.size(); ++j)
      if (used[i].first < used[j].second && used[j].first < used[i].second) {
        error = "the buffers of " + operandText(operands[i].id) + " and " + operandText(operands[j].id) + " overlap";
        return false;
      }

  operands_ = std::move(operands);
  state_.clear();
  errors_.clear();
  for (const HarnessOperand& op : operands_) {
    c::OperandEntry e{};
    e.baseAddress = *op.address;
    e.tileSizeBytes = op.tileSizeBytes;
    e.capacityTiles = static_cast<uint16_t>(op.capacityTiles);
    e.dataFormat = static_cast<uint8_t>(op.format);
    e.flags = op.untilized ? c::kOperandUntilized : 0;
    e.rowStrideBytes = op.rowStrideBytes;
    core_.writeOperand(op.id, e);
    state_[op.id] = State{};
  }
  core_.writeEpochInfo(epoch);
  return true;
}

bool OneCoreHarness::service(TensixCore& core) {
  std::span<uint8_t> l1 = core.l1();
  for (const HarnessOperand& op : operands_) {
    State& st = state_[op.id];
    const OperandRole role = *operandRole(op.id);
    if (role == OperandRole::Input) {
      const size_t total = op.inputTiles.size() / op.tileSizeBytes;
      const uint32_t occupied = core.tilesOccupied(op.id);
      const uint32_t space = occupied >= op.capacityTiles ? 0 : op.capacityTiles - occupied;
      const size_t n = std::min<size_t>(space, total - st.fed);
      for (size_t k = 0; k < n; ++k) {
        const uint32_t slot = (core.tilesReceived(op.id) + static_cast<uint32_t>(k)) % op.capacityTiles;
        std::memcpy(l1.data() + *op.address + size_t{slot} * op.tileSizeBytes,
                    op.inputTiles.data() + (st.fed + k) * op.tileSizeBytes, op.tileSizeBytes);
      }
      if (n > 0) {
        core.addTilesReceived(op.id, static_cast<uint32_t>(n));
        st.fed += n;
      }
    } else if (role == OperandRole::Output) {
      const uint32_t pushed = core.tilesOccupied(op.id);
      if (pushed == 0) continue;
      if (pushed > op.capacityTiles && !st.overflowReported) {
        errors_.push_back(operandText(op.id) + ": " + std::to_string(pushed) + " tiles pushed into a buffer of " +
                          std::to_string(op.capacityTiles) + " (the pack thread did not wait for free space)");
        st.overflowReported = true;
      }
      if (!op.untilized) {
        const uint32_t n = std::min(pushed, op.capacityTiles);
        for (uint32_t k = 0; k < n; ++k) {
          const uint32_t slot = (core.tilesAcked(op.id) + k) % op.capacityTiles;
          const uint8_t* src = l1.data() + *op.address + size_t{slot} * op.tileSizeBytes;
          st.out.insert(st.out.end(), src, src + op.tileSizeBytes);
        }
      }
      core.addTilesAcked(op.id, pushed);
      st.drained += pushed;
    }
  }
  return false;
}

CoreRunResult OneCoreHarness::run(const RunOptions& options) {
  CoreRunResult r = core_.run(options, [this](TensixCore& core) { return service(core); });
  service(core_);  // tiles pushed in the last slice
  std::span<const uint8_t> l1 = core_.l1();
  for (const HarnessOperand& op : operands_) {
    State& st = state_[op.id];
    if (op.untilized) {
      const uint8_t* src = l1.data() + *op.address;
      st.out.assign(src, src + size_t{op.capacityTiles} * op.tileSizeBytes);
    }
    if (r.stop == CoreStop::Done && op.expectTiles && st.drained != *op.expectTiles)
      errors_.push_back(operandText(op.id) + ": expected " + std::to_string(*op.expectTiles) +
                        " output tiles, the kernel pushed " + std::to_string(st.drained));
  }
  return r;
}

const std::vector<uint8_t>& OneCoreHarness::output(uint32_t id) const {
  static const std::vector<uint8_t> kEmpty;
  auto it = state_.find(id);
  return it == state_.end() ? kEmpty : it->second.out;
}

uint32_t OneCoreHarness::tilesFed(uint32_t id) const {
  auto it = state_.find(id);
  return it == state_.end() ? 0 : static_cast<uint32_t>(it->second.fed);
}

uint32_t OneCoreHarness::tilesDrained(uint32_t id) const {
  auto it = state_.find(id);
  return it == state_.end() ? 0 : static_cast<uint32_t>(it->second.drained);
}

// --- Command-line operands -------------------------------------------------------

bool parseOperandArg(std::string_view text, HarnessOperand& out, std::string& error) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  // FILE is last and may itself contain ':'.
  while (parts.size() < 3) {
    const size_t colon = text.find(':', start);
    if (colon == std::string_view::npos) break;
    parts.push_back(text.substr(start, colon - start));
    start = colon + 1;
  }
  parts.push_back(text.substr(start));
  if (parts.size() < 3) {
    error = "'" + std::string(text) + "': expected ID:FORMAT:CAPACITY[:FILE]";
    return false;
  }
  HarnessOperand op;
  std::optional<uint64_t> id = parseUInt64(parts[0]);
  if (!id || *id >= c::kOperandCount || !operandRole(static_cast<uint32_t>(*id))) {
    error = "'" + std::string(text) + "': operand id '" + std::string(parts[0]) +
            "' is not an input (0-15), output (16-23) or intermediate (24-31)";
    return false;
  }
  op.id = static_cast<uint32_t>(*id);
  std::optional<c::DataFormatCode> format = parseFormat(parts[1]);
  if (!format) {
    error = "'" + std::string(text) + "': unknown data format '" + std::string(parts[1]) + "'";
    return false;
  }
  op.format = *format;
  std::optional<uint64_t> cap = parseUInt64(parts[2]);
  if (!cap || *cap == 0 || *cap > 0xFFFF) {
    error = "'" + std::string(text) + "': capacity '" + std::string(parts[2]) + "' is not 1..65535";
    return false;
  }
  op.capacityTiles = static_cast<uint32_t>(*cap);
  const OperandRole role = *operandRole(op.id);
  if (parts.size() == 4) {
    if (parts[3].empty() || role == OperandRole::Intermediate) {
      error = "'" + std::string(text) + "': " +
              (role == OperandRole::Intermediate ? "intermediates take no file" : "empty file name");
      return false;
    }
    (role == OperandRole::Input ? op.inputPath : op.outputPath) = std::string(parts[3]);
  }
  out = std::move(op);
  return true;
}

// --- Spec ------------------------------------------------------------------------

namespace {

class SpecParser {
public:
  SpecParser(const std::string& baseDir, DiagnosticEngine& diags) : base_(baseDir), d_(diags) {}

  std::optional<RunSpec> parse(const yaml::Node& root) {
    if (!root.IsMap()) {
      d_.error("spec-type", locOf(root), "a tensix-run spec is a map (arch, kernel-dir, operands, ...)");
      return std::nullopt;
    }
    RunSpec spec;
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      const yaml::Node& v = kv.second;
      if (key == "arch") {
        std::optional<Arch> a = v.IsScalar() ? parseArch(v.Scalar()) : std::nullopt;
        if (!a) d_.error("spec-value", locOf(v), "arch: expected grayskull or wormhole_b0, got " + show(v));
        spec.arch = a;
      } else if (key == "kernel-dir") {
        if (!v.IsScalar() || v.Scalar().empty()) d_.error("spec-value", locOf(v), "kernel-dir: expected a path");
        else spec.kernelDir = resolve(v.Scalar());
      } else if (key == "input-count") {
        spec.epoch.inputCount = u32(v, key, 0, 0xFFFFFFFFu);
      } else if (key == "epoch-id") {
        spec.epoch.epochId = u32(v, key, 0, 0xFFFFFFFFu);
      } else if (key == "max-cycles") {
        spec.run.maxCycles = u64(v, key, 1);
      } else if (key == "slice-cycles") {
        spec.run.sliceCycles = u64(v, key, 1);
      } else if (key == "hang-slices") {
        spec.run.hangSlices = u32(v, key, 1, 1000000);
      } else if (key == "operands") {
        if (!v.IsSequence()) {
          d_.error("spec-type", locOf(v), "operands: expected a list of operand maps");
          continue;
        }
        for (const auto& item : v) operand(item, spec);
      } else {
        d_.error("spec-unknown-key", locOf(kv.first),
                 "unknown key '" + key +
                     "' (expected arch, kernel-dir, input-count, epoch-id, max-cycles, slice-cycles, hang-slices, "
                     "operands)");
      }
    }
    if (d_.errorCount() > 0) return std::nullopt;
    return spec;
  }

private:
  static std::string show(const yaml::Node& v) { return v.IsScalar() ? "'" + v.Scalar() + "'" : "a non-scalar"; }

  std::string resolve(const std::string& p) const {
    fs::path path(p);
    return path.is_absolute() || base_.empty() ? p : (fs::path(base_) / path).string();
  }

  uint64_t u64(const yaml::Node& v, const std::string& key, uint64_t min) {
    std::optional<uint64_t> n = v.IsScalar() ? parseUInt64(v.Scalar()) : std::nullopt;
    if (!n || *n < min) {
      d_.error("spec-value", locOf(v), key + ": expected an integer >= " + std::to_string(min) + ", got " + show(v));
      return min;
    }
    return *n;
  }
  uint32_t u32(const yaml::Node& v, const std::string& key, uint32_t min, uint32_t max) {
    std::optional<uint64_t> n = v.IsScalar() ? parseUInt64(v.Scalar()) : std::nullopt;
    if (!n || *n < min || *n > max) {
      d_.error("spec-value", locOf(v),
               key + ": expected an integer in " + std::to_string(min) + ".." + std::to_string(max) + ", got " + show(v));
      return min;
    }
    return static_cast<uint32_t>(*n);
  }

  void operand(const yaml::Node& m, RunSpec& spec) {
    if (!m.IsMap()) {
      d_.error("spec-type", locOf(m), "operands: each entry is a map {id, format, capacity, ...}");
      return;
    }
    HarnessOperand op;
    bool hasId = false, hasFormat = false, hasCapacity = false;
    const size_t errorsBefore = d_.errorCount();
    for (const auto& kv : m) {
      const std::string key = kv.first.Scalar();
      const yaml::Node& v = kv.second;
      if (key == "id") {
        op.id = u32(v, key, 0, c::kOperandCount - 1);
        hasId = true;
      } else if (key == "format") {
        std::optional<c::DataFormatCode> f = v.IsScalar() ? parseFormat(v.Scalar()) : std::nullopt;
        if (!f) d_.error("spec-value", locOf(v), "format: unknown data format " + show(v));
        else op.format = *f;
        hasFormat = true;
      } else if (key == "capacity") {
        op.capacityTiles = u32(v, key, 1, 0xFFFF);
        hasCapacity = true;
      } else if (key == "tile-size") {
        op.tileSizeBytes = u32(v, key, 16, 1u << 20);
      } else if (key == "address") {
        op.address = u32(v, key, 0, 0xFFFFFFFFu);
      } else if (key == "input") {
        if (!v.IsScalar() || v.Scalar().empty()) d_.error("spec-value", locOf(v), "input: expected a file name");
        else op.inputPath = resolve(v.Scalar());
      } else if (key == "output") {
        if (!v.IsScalar() || v.Scalar().empty()) d_.error("spec-value", locOf(v), "output: expected a file name");
        else op.outputPath = resolve(v.Scalar());
      } else if (key == "expect-tiles") {
        op.expectTiles = u32(v, key, 0, 0xFFFFFFFFu);
      } else if (key == "untilized") {
        std::optional<bool> b = v.IsScalar() ? parseBool(v.Scalar()) : std::nullopt;
        if (!b) d_.error("spec-value", locOf(v), "untilized: expected true or false, got " + show(v));
        else op.untilized = *b;
      } else if (key == "row-stride") {
        op.rowStrideBytes = u32(v, key, 0, 0xFFFFFFFFu);
      } else {
        d_.error("spec-unknown-key", locOf(kv.first),
                 "unknown operand key '" + key +
                     "' (expected id, format, capacity, tile-size, address, input, output, expect-tiles, untilized, "
                     "row-stride)");
      }
    }
    if (!hasId || !hasFormat || !hasCapacity) {
      d_.error("spec-missing", locOf(m), "operand: id, format and capacity are required");
      return;
    }
    if (d_.errorCount() != errorsBefore) return;
    std::optional<OperandRole> role = operandRole(op.id);
    if (!role) {
      d_.error("spec-value", locOf(m["id"]),
               "operand " + std::to_string(op.id) + " is not an input (0-15), output (16-23) or intermediate (24-31)");
      return;
    }
    if (!op.inputPath.empty() && *role != OperandRole::Input)
      d_.error("spec-value", locOf(m["input"]), "input: only inputs (operands 0-15) are fed");
    if ((!op.outputPath.empty() || op.expectTiles) && *role != OperandRole::Output)
      d_.error("spec-value", locOf(m["output"] ? m["output"] : m["expect-tiles"]),
               "output: only outputs (operands 16-23) are drained");
    for (const HarnessOperand& other : spec.operands)
      if (other.id == op.id) d_.error("spec-duplicate", locOf(m["id"]), "operand " + std::to_string(op.id) + " appears twice");
    spec.operands.push_back(std::move(op));
  }

  std::string base_;
  DiagnosticEngine& d_;
};

} // namespace

std::optional<RunSpec> parseRunSpec(const SourceBuffer& source, const std::string& baseDir, DiagnosticEngine& diags) {
  std::unique_ptr<yaml::Document> doc = parseYaml(source, diags);
  if (!doc) return std::nullopt;
  SpecParser parser(baseDir, diags);
  return parser.parse(doc->root());
}

} // namespace tessera::sim
