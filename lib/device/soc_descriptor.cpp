#include "device/soc_descriptor.hpp"

#include "support/yaml.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <utility>

namespace tessera {

std::string toString(CoreCoord c) { return std::to_string(c.x) + "-" + std::to_string(c.y); }

CoreCoord SocDescriptor::workerCore(int row, int col) const {
  if (row < 0 || col < 0 || row >= static_cast<int>(workerRowY.size()) ||
      col >= static_cast<int>(workerColX.size()))
    return {-1, -1};
  return {workerColX[static_cast<size_t>(col)], workerRowY[static_cast<size_t>(row)]};
}

std::optional<SocDescriptor::Logical> SocDescriptor::workerLogical(CoreCoord c) const {
  auto row = std::lower_bound(workerRowY.begin(), workerRowY.end(), c.y);
  auto col = std::lower_bound(workerColX.begin(), workerColX.end(), c.x);
  if (row == workerRowY.end() || *row != c.y || col == workerColX.end() || *col != c.x) return std::nullopt;
  // Parsed descriptors fill the logical grid, so (row, col) is a worker. A
  // hand-built descriptor might not: then confirm against the worker list.
  if (workers.size() != workerRowY.size() * workerColX.size() &&
      std::find(workers.begin(), workers.end(), c) == workers.end())
    return std::nullopt;
  return Logical{static_cast<int>(row - workerRowY.begin()), static_cast<int>(col - workerColX.begin())};
}

CoreCoord SocDescriptor::dramCore(int channel, int sub) const {
  if (channel < 0 || channel >= dramChannelCount()) return {-1, -1};
  const auto& subs = dramChannels[static_cast<size_t>(channel)];
  if (sub < 0 || sub >= static_cast<int>(subs.size())) return {-1, -1};
  return subs[static_cast<size_t>(sub)];
}

namespace {

constexpr const char* kRule = "soc-descriptor";
// Far beyond any real chip; keeps sizes and products well inside int.
constexpr uint64_t kMaxGridDim = 1024;

// Tree positions are 0-based and -1 when unknown; SourceLoc is 1-based.
std::optional<SourceLoc> toLoc(const yaml::Position& m) {
  if (m.line < 0 || m.column < 0) return std::nullopt;
  return SourceLoc{static_cast<uint32_t>(m.line) + 1, static_cast<uint32_t>(m.column) + 1};
}

// Decimal, or hexadecimal with a 0x prefix; nothing else (no sign, no spaces).
std::optional<uint64_t> parseUnsigned(std::string_view s, bool allowHex) {
  int base = 10;
  if (allowHex && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty() || s[0] == '+' || s[0] == '-') return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<bool> parseBool(std::string_view s) {
  std::string lower(s);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (lower == "true") return true;
  if (lower == "false") return false;
  return std::nullopt;
}

// `x-y` with decimal x and y.
std::optional<CoreCoord> parseCoordText(std::string_view s) {
  size_t dash = s.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto x = parseUnsigned(s.substr(0, dash), false);
  auto y = parseUnsigned(s.substr(dash + 1), false);
  if (!x || !y || *x >= kMaxGridDim || *y >= kMaxGridDim) return std::nullopt;
  return CoreCoord{static_cast<int>(*x), static_cast<int>(*y)};
}

// True when some line holds more than blanks and a comment.
bool hasContent(std::string_view text) {
  bool lineStart = true, inComment = false;
  for (char c : text) {
    if (c == '\n') {
      lineStart = true;
      inComment = false;
    } else if (inComment || c == ' ' || c == '\t' || c == '\r') {
      continue;
    } else if (c == '#' && lineStart) {
      inComment = true;
    } else {
      return true;
    }
  }
  return false;
}

std::string stemOf(const std::string& path) {
  size_t slash = path.find_last_of("/\\");
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (std::string_view ext : {".yaml", ".yml"})
    if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0)
      return base.substr(0, base.size() - ext.size());
  return base;
}

struct KeyValue {
  yaml::Node key;
  yaml::Node value;
};

// A coordinate together with where it was written and which list it is in,
// for the range and duplicate checks.
struct Placed {
  CoreCoord coord;
  SourceLoc loc;
  std::string_view list;
};

class Parser {
public:
  Parser(const SourceBuffer& source, DiagnosticEngine& diag) : source_(source), diag_(diag) {}

  std::optional<SocDescriptor> run() {
    // Syntax errors come back under the shared `yaml-syntax` rule; report
    // them under this parser's rule so callers see one rule for the file.
    DiagnosticEngine syntax;
    auto doc = parseYaml(source_, syntax);
    if (!doc) {
      for (const Diagnostic& d : syntax.diagnostics()) error(d.loc.valid() ? d.loc : SourceLoc{1, 1}, d.message);
      return std::nullopt;
    }
    try {
      parseRoot(doc->root());
    } catch (const std::exception& e) {
      error(rootLoc_, std::string("malformed SoC descriptor: ") + e.what());
    }
    if (errors_ != 0) return std::nullopt;
    return std::move(soc_);
  }

private:
  const SourceBuffer& source_;
  DiagnosticEngine& diag_;
  SocDescriptor soc_;
  size_t errors_ = 0;
  SourceLoc rootLoc_{1, 1}; // where section-level problems without a node of their own point
  std::vector<Placed> placed_;

  SourceLoc locOf(const yaml::Node& n, SourceLoc fallback) const {
    if (!n.IsDefined()) return fallback; // also guards Mark() on a zombie node
    return toLoc(n.Mark()).value_or(fallback);
  }
  SourceLoc locOf(const yaml::Node& n) const { return locOf(n, rootLoc_); }

  DiagnosticEngine::Builder error(SourceLoc loc, std::string message) {
    ++errors_;
    return diag_.error(kRule, loc, std::move(message));
  }

  // Collects the entries of a mapping; reports non-scalar and duplicate keys.
  // Unknown keys are warned about when `known` is given (typos would otherwise
  // silently drop a section).
  std::map<std::string, KeyValue> entries(const yaml::Node& map, std::string_view what,
                                          const std::vector<std::string_view>* known) {
    std::map<std::string, KeyValue> out;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const yaml::Node key = it->first;
      const yaml::Node value = it->second;
      if (!key.IsScalar()) {
        error(locOf(key), "expected a plain key in " + std::string(what));
        continue;
      }
      const std::string& name = key.Scalar();
      auto [pos, inserted] = out.try_emplace(name, KeyValue{key, value});
      if (!inserted) {
        error(locOf(key), "duplicate key '" + name + "' in " + std::string(what))
            .note(locOf(pos->second.key), "first defined here");
        continue;
      }
      if (known && std::find(known->begin(), known->end(), name) == known->end())
        diag_.warning(kRule, locOf(key), "unknown key '" + name + "' in " + std::string(what) + " is ignored");
    }
    return out;
  }

  std::optional<uint64_t> unsignedValue(const KeyValue& kv, bool allowHex = true) {
    const std::string& key = kv.key.Scalar();
    if (!kv.value.IsScalar()) {
      error(locOf(kv.value, locOf(kv.key)), "'" + key + "' must be a non-negative integer");
      return std::nullopt;
    }
    auto v = parseUnsigned(kv.value.Scalar(), allowHex);
    if (!v)
      error(locOf(kv.value), "'" + key + "' must be a non-negative integer, got '" + kv.value.Scalar() + "'");
    return v;
  }

  std::optional<bool> boolValue(const KeyValue& kv) {
    auto v = kv.value.IsScalar() ? parseBool(kv.value.Scalar()) : std::nullopt;
    if (!v) error(locOf(kv.value, locOf(kv.key)), "'" + kv.key.Scalar() + "' must be True or False");
    return v;
  }

  // `grid:` / `physical:` — a mapping with positive x_size and y_size.
  bool gridSize(const KeyValue& kv, int& x, int& y) {
    const std::string& key = kv.key.Scalar();
    if (!kv.value.IsMap()) {
      error(locOf(kv.value, locOf(kv.key)), "'" + key + "' must be a mapping with x_size and y_size");
      return false;
    }
    static const std::vector<std::string_view> kKnown{"x_size", "y_size"};
    auto fields = entries(kv.value, "'" + key + "'", &kKnown);
    bool ok = true;
    using Field = std::pair<const char*, int*>;
    for (auto [name, out] : {Field{"x_size", &x}, Field{"y_size", &y}}) {
      auto it = fields.find(name);
      if (it == fields.end()) {
        error(locOf(kv.value, locOf(kv.key)), "'" + key + "' is missing '" + name + "'");
        ok = false;
        continue;
      }
      auto v = unsignedValue(it->second, false);
      if (v && (*v == 0 || *v > kMaxGridDim)) {
        error(locOf(it->second.value),
              "'" + key + "." + name + "' must be between 1 and " + std::to_string(kMaxGridDim));
        v.reset();
      }
      if (!v) {
        ok = false;
        continue;
      }
      *out = static_cast<int>(*v);
    }
    return ok;
  }

  std::optional<CoreCoord> coord(const yaml::Node& n, SourceLoc fallback, std::string_view list) {
    SourceLoc loc = locOf(n, fallback);
    if (!n.IsScalar()) {
      error(loc, "expected a core coordinate `x-y` in '" + std::string(list) + "'");
      return std::nullopt;
    }
    auto c = parseCoordText(n.Scalar());
    if (!c) {
      error(loc, "invalid core coordinate '" + n.Scalar() + "' in '" + std::string(list) +
                     "': expected `x-y` with non-negative integers");
      return std::nullopt;
    }
    placed_.push_back({*c, loc, list});
    return c;
  }

  // A flow or block list of `x-y` coordinates; an empty value means an empty list.
  void coordList(const KeyValue& kv, std::vector<CoreCoord>& out, std::string_view list) {
    SourceLoc keyLoc = locOf(kv.key);
    if (kv.value.IsNull()) return;
    if (!kv.value.IsSequence()) {
      error(locOf(kv.value, keyLoc), "'" + std::string(list) + "' must be a list of `x-y` core coordinates");
      return;
    }
    for (const yaml::Node& item : kv.value)
      if (auto c = coord(item, keyLoc, list)) out.push_back(*c);
  }

  // `dram:` — one entry per channel: a list of subchannel cores, or a single `x-y`.
  void dramList(const KeyValue& kv) {
    SourceLoc keyLoc = locOf(kv.key);
    if (!kv.value.IsSequence()) {
      error(locOf(kv.value, keyLoc), "'dram' must be a list of DRAM channels");
      return;
    }
    for (const yaml::Node& channel : kv.value) {
      std::vector<CoreCoord> subs;
      SourceLoc channelLoc = locOf(channel, keyLoc);
      if (channel.IsSequence()) {
        for (const yaml::Node& sub : channel)
          if (auto c = coord(sub, channelLoc, "dram")) subs.push_back(*c);
        if (channel.size() == 0) {
          error(channelLoc, "DRAM channel " + std::to_string(soc_.dramChannels.size()) + " has no cores");
          continue;
        }
      } else if (auto c = coord(channel, keyLoc, "dram")) {
        subs.push_back(*c);
      }
      if (subs.empty()) continue;
      soc_.dramCores.insert(soc_.dramCores.end(), subs.begin(), subs.end());
      soc_.dramChannels.push_back(std::move(subs));
    }
    if (kv.value.size() == 0) error(locOf(kv.value, keyLoc), "'dram' lists no DRAM channels");
  }

  void featuresSection(const KeyValue& kv) {
    if (kv.value.IsNull()) return;
    if (!kv.value.IsMap()) {
      error(locOf(kv.value, locOf(kv.key)), "'features' must be a mapping");
      return;
    }
    SocFeatures& f = soc_.features;
    // Only the fields we model are checked; other feature keys are upstream's business.
    // Plain references, not structured bindings: the lambdas below capture them (clang < 16).
    for (auto& groupEntry : entries(kv.value, "'features'", nullptr)) {
      const auto& group = groupEntry.first;
      auto& groupKv = groupEntry.second;
      if (!groupKv.value.IsMap()) continue;
      for (auto& fieldEntry : entries(groupKv.value, "'features." + group + "'", nullptr)) {
        const auto& field = fieldEntry.first;
        auto& fieldKv = fieldEntry.second;
        auto asInt = [&](int& out) {
          auto v = unsignedValue(fieldKv);
          if (v && *v > 1000000) error(locOf(fieldKv.value), "'" + field + "' is out of range");
          else if (v) out = static_cast<int>(*v);
        };
        auto asBool = [&](bool& out) {
          if (auto v = boolValue(fieldKv)) out = *v;
        };
        if (field == "version") {
          if (group == "unpacker") asInt(f.unpackerVersion);
          else if (group == "packer") asInt(f.packerVersion);
          else if (group == "overlay") asInt(f.overlayVersion);
        } else if (group == "unpacker" && field == "inline_srca_trans_without_srca_trans_instr") {
          asBool(f.inlineSrcaTransWithoutInstr);
        } else if (group == "math" && field == "dst_size_alignment") {
          if (auto v = unsignedValue(fieldKv)) f.dstSizeAlignment = *v;
        } else if (group == "noc" && field == "translation_id_enabled") {
          asBool(f.nocTranslationIdEnabled);
        }
      }
    }
  }

  void parseRoot(const yaml::Node& root) {
    if (root.IsNull() || !root.IsDefined()) {
      // A null document is either a blank file or something YAML reads as
      // nothing at all (e.g. a lone directive line): say which.
      error(SourceLoc{1, 1}, hasContent(source_.text()) ? "expected a mapping of SoC descriptor sections"
                                                        : "SoC descriptor is empty");
      return;
    }
    rootLoc_ = locOf(root, SourceLoc{1, 1});
    if (!root.IsMap()) {
      error(rootLoc_, "expected a mapping of SoC descriptor sections (grid, dram, functional_workers, ...)");
      return;
    }
    soc_.name = stemOf(source_.name());

    static const std::vector<std::string_view> kKnown{
        "grid", "physical", "arc", "pcie", "dram", "eth", "functional_workers", "harvested_workers",
        "router_only", "worker_l1_size", "dram_bank_size", "eth_l1_size", "arch_name", "features"};
    auto top = entries(root, "the SoC descriptor", &kKnown);

    // Required sections first, all reported at once.
    for (std::string_view key : {"grid", "arch_name", "functional_workers", "dram", "worker_l1_size", "dram_bank_size"})
      if (!top.count(std::string(key))) error(rootLoc_, "missing required key '" + std::string(key) + "'");

    bool gridOk = false;
    if (auto it = top.find("grid"); it != top.end()) gridOk = gridSize(it->second, soc_.gridX, soc_.gridY);
    soc_.physicalGridX = soc_.gridX;
    soc_.physicalGridY = soc_.gridY;
    if (auto it = top.find("physical"); it != top.end())
      gridSize(it->second, soc_.physicalGridX, soc_.physicalGridY);

    if (auto it = top.find("arch_name"); it != top.end()) {
      const KeyValue& kv = it->second;
      auto arch = kv.value.IsScalar() ? parseArch(kv.value.Scalar()) : std::nullopt;
      if (arch)
        soc_.arch = *arch;
      else
        error(locOf(kv.value, locOf(kv.key)),
              "unknown arch_name '" + (kv.value.IsScalar() ? kv.value.Scalar() : std::string("?")) + "'")
            .note("expected GRAYSKULL, WORMHOLE, WORMHOLE_B0 or BLACKHOLE");
    }

    auto sizeOf = [&](const char* key, uint64_t& out, bool positive) {
      auto it = top.find(key);
      if (it == top.end()) return;
      auto v = unsignedValue(it->second);
      if (v && positive && *v == 0) error(locOf(it->second.value), "'" + std::string(key) + "' must be positive");
      else if (v) out = *v;
    };
    sizeOf("worker_l1_size", soc_.workerL1Size, true);
    sizeOf("dram_bank_size", soc_.dramBankSize, true);
    sizeOf("eth_l1_size", soc_.ethL1Size, false);

    auto list = [&](const char* key, std::vector<CoreCoord>& out) {
      if (auto it = top.find(key); it != top.end()) coordList(it->second, out, key);
    };
    list("functional_workers", soc_.workers);
    list("harvested_workers", soc_.harvestedWorkers);
    if (auto it = top.find("dram"); it != top.end()) dramList(it->second);
    list("eth", soc_.ethCores);
    list("router_only", soc_.routerOnly);
    list("arc", soc_.arc);
    list("pcie", soc_.pcie);
    if (auto it = top.find("features"); it != top.end()) featuresSection(it->second);

    if (gridOk) checkPlacement();
    if (auto it = top.find("functional_workers"); it != top.end()) buildWorkerGrid(it->second);
  }

  // Every coordinate inside the grid, and no core listed twice (a core has one role).
  void checkPlacement() {
    std::map<CoreCoord, const Placed*> seen;
    for (const Placed& p : placed_) {
      if (p.coord.x >= soc_.gridX || p.coord.y >= soc_.gridY) {
        error(p.loc, "core " + toString(p.coord) + " in '" + std::string(p.list) + "' is outside the " +
                         std::to_string(soc_.gridX) + "x" + std::to_string(soc_.gridY) + " grid");
        continue;
      }
      auto [it, inserted] = seen.try_emplace(p.coord, &p);
      if (!inserted)
        error(p.loc, "core " + toString(p.coord) + " is listed twice")
            .note(it->second->loc, "first listed in '" + std::string(it->second->list) + "'");
    }
  }

  // Logical rows/columns are the distinct worker y/x values; they must form a
  // full rectangle so that every logical (row, col) names a real worker.
  void buildWorkerGrid(const KeyValue& kv) {
    SourceLoc workersLoc = locOf(kv.key);
    if (kv.value.IsNull() || (kv.value.IsSequence() && kv.value.size() == 0)) {
      error(locOf(kv.value, workersLoc), "'functional_workers' is empty: the chip has no worker cores");
      return;
    }
    if (soc_.workers.empty()) return; // every entry was malformed, already reported
    std::set<int> ys, xs;
    std::set<CoreCoord> unique;
    for (CoreCoord c : soc_.workers) {
      ys.insert(c.y);
      xs.insert(c.x);
      unique.insert(c);
    }
    soc_.workerRowY.assign(ys.begin(), ys.end());
    soc_.workerColX.assign(xs.begin(), xs.end());
    soc_.workerRows = static_cast<int>(ys.size());
    soc_.workerCols = static_cast<int>(xs.size());
    // Duplicates (reported by checkPlacement) would make the count below misleading.
    if (unique.size() == soc_.workers.size() && soc_.workers.size() != ys.size() * xs.size())
      error(workersLoc, "functional workers do not form a full grid: " + std::to_string(soc_.workers.size()) +
                            " cores over " + std::to_string(ys.size()) + " distinct rows (y) and " +
                            std::to_string(xs.size()) + " distinct columns (x)");
  }
};

} // namespace

std::optional<SocDescriptor> parseSocDescriptor(const SourceBuffer& source, DiagnosticEngine& diag) {
  return Parser(source, diag).run();
}

} // namespace tessera
