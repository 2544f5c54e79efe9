#include "device/cluster.hpp"

#include "support/yaml.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <utility>

namespace tessera {

// ---------------------------------------------------------------- queries

std::optional<EthEndpoint> ClusterDescriptor::peer(EthEndpoint end) const {
  for (const EthLink& l : links) {
    if (l.a == end) return l.b;
    if (l.b == end) return l.a;
  }
  return std::nullopt;
}

std::vector<EthLink> ClusterDescriptor::linksBetween(ChipId from, ChipId to) const {
  std::vector<EthLink> out;
  for (const EthLink& l : links) {
    if (l.a.chip == from && l.b.chip == to) out.push_back(l);
    else if (l.b.chip == from && l.a.chip == to) out.push_back(EthLink{l.b, l.a, l.loc});
  }
  std::sort(out.begin(), out.end(), [](const EthLink& x, const EthLink& y) { return x.a.chan < y.a.chan; });
  return out;
}

namespace {

// Neighbours of every chip, ascending and without repeats (parallel links
// count once): what the hop searches walk.
std::map<ChipId, std::vector<ChipId>> adjacency(const ClusterDescriptor& c) {
  std::map<ChipId, std::vector<ChipId>> adj;
  for (const auto& [id, loc] : c.chips) adj[id];
  for (const EthLink& l : c.links) {
    adj[l.a.chip].push_back(l.b.chip);
    adj[l.b.chip].push_back(l.a.chip);
  }
  for (auto& [id, n] : adj) {
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
  }
  return adj;
}

// Hops from `start` to every chip it reaches.
std::map<ChipId, uint32_t> hopsFrom(const std::map<ChipId, std::vector<ChipId>>& adj, ChipId start) {
  std::map<ChipId, uint32_t> dist{{start, 0}};
  std::deque<ChipId> todo{start};
  while (!todo.empty()) {
    ChipId c = todo.front();
    todo.pop_front();
    auto it = adj.find(c);
    if (it == adj.end()) continue;
    for (ChipId n : it->second)
      if (dist.emplace(n, dist[c] + 1).second) todo.push_back(n);
  }
  return dist;
}

} // namespace

std::vector<ChipId> ClusterDescriptor::route(ChipId from, ChipId to) const {
  if (!hasChip(from) || !hasChip(to)) return {};
  if (from == to) return {from};
  auto adj = adjacency(*this);
  // Distances to `to`; then walk from `from`, each step to the lowest-id
  // neighbour one hop closer, which gives the same route in every tool.
  auto dist = hopsFrom(adj, to);
  if (!dist.count(from)) return {};
  std::vector<ChipId> path{from};
  ChipId cur = from;
  while (cur != to) {
    uint32_t want = dist.at(cur) - 1;
    for (ChipId n : adj.at(cur)) {
      auto d = dist.find(n);
      if (d != dist.end() && d->second == want) {
        cur = n;
        break;
      }
    }
    path.push_back(cur);
  }
  return path;
}

std::optional<ChipId> ClusterDescriptor::mmioGateway(ChipId chip) const {
  if (!hasChip(chip)) return std::nullopt;
  if (isMmio(chip)) return chip;
  auto dist = hopsFrom(adjacency(*this), chip);
  std::optional<ChipId> best;
  uint32_t bestHops = std::numeric_limits<uint32_t>::max();
  for (ChipId m : mmio) { // ascending: the first of equal distance wins
    auto d = dist.find(m);
    if (d != dist.end() && d->second < bestHops) {
      best = m;
      bestHops = d->second;
    }
  }
  return best;
}

// ---------------------------------------------------------------- defaults

namespace {

// Grayskull chips each sit on PCIe; beyond this many a target_device is a
// typo, not a machine (and a default must not allocate millions of chips).
constexpr uint32_t kMaxGrayskullChips = 256;

void addLink(ClusterDescriptor& c, EthEndpoint x, EthEndpoint y) {
  if (y < x) std::swap(x, y);
  c.links.push_back(EthLink{x, y, SourceLoc{}});
}

// Chips firstId + r*cols + col at [x=col, y=r]: left-right neighbours by
// channels 8,9 -> 0,1, upper-lower by 14,15 -> 6,7 (docs/cluster.md).
void addMesh(ClusterDescriptor& c, uint32_t rows, uint32_t cols, ChipId firstId) {
  auto id = [&](uint32_t r, uint32_t col) { return firstId + r * cols + col; };
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t col = 0; col < cols; ++col)
      c.chips[id(r, col)] = ChipLocation{static_cast<int64_t>(col), static_cast<int64_t>(r), 0, 0};
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t col = 0; col < cols; ++col) {
      if (col + 1 < cols)
        for (uint32_t k = 0; k < 2; ++k) addLink(c, {id(r, col), 8 + k}, {id(r, col + 1), 0 + k});
      if (r + 1 < rows)
        for (uint32_t k = 0; k < 2; ++k) addLink(c, {id(r, col), 14 + k}, {id(r + 1, col), 6 + k});
    }
}

void sortLinks(ClusterDescriptor& c) {
  std::sort(c.links.begin(), c.links.end(), [](const EthLink& x, const EthLink& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
}

} // namespace

std::optional<ClusterDescriptor> defaultCluster(Arch arch, uint32_t chips, std::string& why) {
  const std::string archText(archName(arch));
  if (chips == 0) {
    why = "a cluster has at least one chip";
    return std::nullopt;
  }
  ClusterDescriptor c;
  if (arch == Arch::Grayskull) {
    if (chips > kMaxGrayskullChips) {
      why = "grayskull default clusters have at most " + std::to_string(kMaxGrayskullChips) + " chips";
      return std::nullopt;
    }
    // As upstream's create_for_grayskull_cluster: chip i at x = i, all MMIO.
    c.name = "default-grayskull-1x" + std::to_string(chips);
    for (ChipId i = 0; i < chips; ++i) {
      c.chips[i] = ChipLocation{static_cast<int64_t>(i), 0, 0, 0};
      c.mmio.insert(i);
    }
    return c;
  }
  static const std::pair<uint32_t, uint32_t> kMeshes[] = {{1, 1}, {1, 2}, {2, 2}, {2, 4}, {3, 4}, {4, 8}};
  for (auto [rows, cols] : kMeshes)
    if (chips <= rows * cols) {
      c.name = "default-" + archText + "-" + std::to_string(rows) + "x" + std::to_string(cols);
      addMesh(c, rows, cols, 0);
      c.mmio.insert(0);
      sortLinks(c);
      return c;
    }
  if (chips == 33) {
    // Chip 0 (MMIO, on a shelf of its own) in front of a 4x8 Galaxy of chips
    // 1..32, linked to its corner chip 1, whose left side is otherwise free.
    c.name = "default-" + archText + "-1+4x8";
    addMesh(c, 4, 8, 1);
    c.chips[0] = ChipLocation{0, 0, 0, 1};
    for (uint32_t k = 0; k < 2; ++k) addLink(c, {0, 8 + k}, {1, 0 + k});
    c.mmio.insert(0);
    sortLinks(c);
    return c;
  }
  why = archText + " has default topologies for 1 to 33 chips";
  return std::nullopt;
}

uint32_t maxDefaultChips(Arch arch) { return arch == Arch::Grayskull ? kMaxGrayskullChips : 33; }

ClusterDescriptor singleChipCluster() {
  ClusterDescriptor c;
  c.name = "single-chip";
  c.chips[0] = ChipLocation{};
  c.mmio.insert(0);
  return c;
}

// ---------------------------------------------------------------- parsing

namespace {

constexpr const char* kRule = "cluster-descriptor";
constexpr int64_t kMaxChipId = std::numeric_limits<int32_t>::max(); // upstream keeps chip ids in an int

std::string stemOf(const std::string& path) {
  size_t slash = path.find_last_of("/\\");
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (std::string_view ext : {".yaml", ".yml"})
    if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0)
      return base.substr(0, base.size() - ext.size());
  return base;
}

std::string endText(EthEndpoint e) {
  return "chip " + std::to_string(e.chip) + " channel " + std::to_string(e.chan);
}

class Parser {
public:
  Parser(const SourceBuffer& source, uint32_t maxChannels, DiagnosticEngine& diags)
      : source_(source), maxChannels_(maxChannels), diags_(diags) {}

  std::optional<ClusterDescriptor> run() {
    // Syntax errors come back as `yaml-syntax`; one rule for the whole file.
    DiagnosticEngine syntax;
    auto doc = parseYaml(source_, syntax);
    if (!doc) {
      for (const Diagnostic& d : syntax.diagnostics()) error(d.loc.valid() ? d.loc : SourceLoc{1, 1}, d.message);
      if (syntax.errorCount() == 0) error({1, 1}, "the file is not YAML");
      return std::nullopt;
    }
    out_.name = stemOf(source_.name());
    parseRoot(doc->root());
    if (errors_ != 0) return std::nullopt;
    sortLinks(out_);
    return std::move(out_);
  }

private:
  const SourceBuffer& source_;
  uint32_t maxChannels_;
  DiagnosticEngine& diags_;
  ClusterDescriptor out_;
  size_t errors_ = 0;
  bool failedChips_ = false; // 'chips' had errors: later "no such chip" errors would repeat them

  SourceLoc at(const yaml::Node& n, SourceLoc fallback = {1, 1}) const {
    SourceLoc l = locOf(n);
    return l.valid() ? l : fallback;
  }

  DiagnosticEngine::Builder error(SourceLoc loc, std::string message) {
    ++errors_;
    return diags_.error(kRule, loc, std::move(message));
  }

  std::optional<int64_t> integer(const yaml::Node& n, SourceLoc fallback, const std::string& what) {
    auto v = n.IsScalar() ? parseInt64(n.Scalar()) : std::nullopt;
    if (!v) error(at(n, fallback), what + " must be an integer");
    return v;
  }

  std::optional<ChipId> chipId(const yaml::Node& n, SourceLoc fallback, const std::string& what) {
    auto v = n.IsScalar() ? parseInt64(n.Scalar()) : std::nullopt;
    if (!v || *v < 0 || *v > kMaxChipId) {
      error(at(n, fallback), what + " must be a chip id (a non-negative integer), got " +
                                 (n.IsScalar() ? "'" + n.Scalar() + "'" : std::string("a collection")));
      return std::nullopt;
    }
    return static_cast<ChipId>(*v);
  }

  void parseRoot(const yaml::Node& root) {
    if (!root.IsMap()) {
      error(at(root), "a cluster descriptor is a map with 'chips', 'ethernet_connections' and 'chips_with_mmio'");
      return;
    }
    // Keys other tools of the upstream format write; they do not change the topology.
    static const std::set<std::string> kIgnored = {"harvesting", "arch", "boardtype", "chip_to_boardtype",
                                                   "chip_unique_ids", "chip_to_bus_id", "boards"};
    std::map<std::string, std::pair<yaml::Node, yaml::Node>> sections;
    for (const auto& e : root) {
      if (!e.first.IsScalar()) {
        error(at(e.first), "expected a plain section name");
        continue;
      }
      const std::string& key = e.first.Scalar();
      if (auto [it, fresh] = sections.try_emplace(key, e.first, e.second); !fresh) {
        error(at(e.first), "section '" + key + "' is given twice").note(at(it->second.first), "first given here");
        continue;
      }
      if (key != "chips" && key != "ethernet_connections" && key != "chips_with_mmio" && !kIgnored.count(key))
        diags_.warning(kRule, at(e.first), "unknown section '" + key + "' is ignored");
    }
    auto chips = sections.find("chips");
    if (chips == sections.end()) {
      error(at(root), "missing section 'chips'");
      return;
    }
    parseChips(chips->second.first, chips->second.second);
    failedChips_ = errors_ != 0;
    if (auto eth = sections.find("ethernet_connections"); eth != sections.end())
      parseLinks(eth->second.first, eth->second.second);
    auto mmio = sections.find("chips_with_mmio");
    if (mmio == sections.end()) error(at(root), "missing section 'chips_with_mmio': the host would reach no chip");
    else parseMmio(mmio->second.first, mmio->second.second);
  }

  void parseChips(const yaml::Node& key, const yaml::Node& v) {
    if (!v.IsMap() || v.size() == 0) {
      error(at(v, at(key)), "'chips' must map each chip id to its location [x, y, rack, shelf]");
      return;
    }
    std::map<ChipId, SourceLoc> seen;
    for (const auto& e : v) {
      auto id = chipId(e.first, at(key), "a key of 'chips'");
      if (!id) continue;
      if (auto [it, fresh] = seen.emplace(*id, at(e.first)); !fresh) {
        error(at(e.first), "chip " + std::to_string(*id) + " is listed twice").note(it->second, "first listed here");
        continue;
      }
      const yaml::Node& loc = e.second;
      if (!loc.IsSequence() || loc.size() != 4) {
        error(at(loc, at(e.first)), "chip " + std::to_string(*id) + ": the location must be [x, y, rack, shelf]");
        continue;
      }
      int64_t v4[4];
      bool ok = true;
      for (size_t i = 0; i < 4; ++i) {
        auto x = integer(loc[i], at(loc), "chip " + std::to_string(*id) + ": a location coordinate");
        ok = ok && x;
        v4[i] = x.value_or(0);
      }
      if (ok) out_.chips[*id] = ChipLocation{v4[0], v4[1], v4[2], v4[3]};
    }
  }

  std::optional<EthEndpoint> endpoint(const yaml::Node& n, SourceLoc fallback) {
    SourceLoc loc = at(n, fallback);
    if (!n.IsMap() || !n["chip"].IsDefined() || !n["chan"].IsDefined()) {
      error(loc, "a link end must be {chip: <id>, chan: <channel>}");
      return std::nullopt;
    }
    auto chip = chipId(n["chip"], loc, "'chip'");
    auto chan = integer(n["chan"], loc, "'chan'");
    if (!chip || !chan) return std::nullopt;
    if (!out_.hasChip(*chip)) {
      // A chip whose own entry was bad would only repeat that error.
      if (!failedChips_)
        error(at(n["chip"], loc), "link end names chip " + std::to_string(*chip) + ", which 'chips' does not list");
      return std::nullopt;
    }
    if (*chan < 0 || *chan >= static_cast<int64_t>(maxChannels_)) {
      error(at(n["chan"], loc), "chip " + std::to_string(*chip) + ": channel " + std::to_string(*chan) +
                                    (maxChannels_ == 0 ? " does not exist: the chips have no ethernet cores"
                                                       : " is not an ethernet channel (the chips have channels 0.." +
                                                             std::to_string(maxChannels_ - 1) + ")"));
      return std::nullopt;
    }
    return EthEndpoint{*chip, static_cast<uint32_t>(*chan)};
  }

  void parseLinks(const yaml::Node& key, const yaml::Node& v) {
    if (isNullScalar(v)) return; // no ethernet at all (e.g. chips that talk through the host)
    if (!v.IsSequence()) {
      error(at(v, at(key)), "'ethernet_connections' must be a list of links [{chip, chan}, {chip, chan}]");
      return;
    }
    struct Seen {
      size_t link;     // index into out_.links
      bool forward;    // listed as a -> b
      bool backward;   // listed as b -> a
      SourceLoc reverseLoc;
    };
    std::map<std::pair<EthEndpoint, EthEndpoint>, Seen> byEnds;
    std::map<EthEndpoint, std::pair<EthEndpoint, SourceLoc>> owner; // channel -> its peer and where that was listed
    bool conflicts = false;
    for (const yaml::Node& item : v) {
      SourceLoc loc = at(item, at(key));
      if (!item.IsSequence() || item.size() != 2) {
        error(loc, "a link is a pair of ends [{chip: <id>, chan: <channel>}, {chip: <id>, chan: <channel>}]");
        continue;
      }
      auto p = endpoint(item[0], loc);
      auto q = endpoint(item[1], loc);
      if (!p || !q) continue;
      const std::string text = "link " + endText(*p) + " <-> " + endText(*q);
      if (p->chip == q->chip) {
        error(loc, text + " joins a chip to itself");
        continue;
      }
      // A channel belongs to one link: a second, different peer is a bad listing.
      bool bad = false;
      for (auto [end, other] : {std::pair{*p, *q}, std::pair{*q, *p}}) {
        auto it = owner.find(end);
        if (it == owner.end() || it->second.first == other) continue;
        if (!bad)
          error(loc, text + " reuses " + endText(end) + ", which an earlier link joins to " +
                         endText(it->second.first) + " (a channel belongs to one link)")
              .note(it->second.second, "earlier link listed here");
        else
          diags_.error(kRule, loc, text + " also reuses " + endText(end) + ", already joined to " +
                                       endText(it->second.first))
              .note(it->second.second, "earlier link listed here");
        bad = true;
      }
      if (bad) {
        conflicts = true;
        continue;
      }
      owner.emplace(*p, std::pair{*q, loc});
      owner.emplace(*q, std::pair{*p, loc});
      EthEndpoint a = std::min(*p, *q), b = std::max(*p, *q);
      auto [it, fresh] = byEnds.try_emplace({a, b}, Seen{out_.links.size(), false, false, {}});
      if (fresh) out_.links.push_back(EthLink{a, b, loc});
      bool forward = *p == a;
      (forward ? it->second.forward : it->second.backward) = true;
      if (!fresh && !it->second.reverseLoc.valid() && it->second.forward && it->second.backward)
        it->second.reverseLoc = loc;
    }
    // Lists links in both directions somewhere: then every link must be (a
    // missing reverse is a link listed one-way). After a conflict the
    // conflicting listing was most likely meant as a reverse: say that only.
    if (conflicts) return;
    const Seen* twoWay = nullptr;
    for (const auto& [ends, s] : byEnds)
      if (s.forward && s.backward && (!twoWay || out_.links[s.link].loc.line < out_.links[twoWay->link].loc.line))
        twoWay = &s;
    if (!twoWay) return;
    std::vector<const Seen*> oneWay;
    for (const auto& [ends, s] : byEnds)
      if (!(s.forward && s.backward)) oneWay.push_back(&s);
    std::sort(oneWay.begin(), oneWay.end(), [&](const Seen* x, const Seen* y) { return x->link < y->link; });
    for (const Seen* s : oneWay) {
      const EthLink& l = out_.links[s->link];
      error(l.loc, "link " + endText(l.a) + " <-> " + endText(l.b) +
                       " is listed one-way, but this file lists links in both directions")
          .note(twoWay->reverseLoc, "a link listed in the other direction too");
    }
  }

  void parseMmio(const yaml::Node& key, const yaml::Node& v) {
    SourceLoc loc = at(v, at(key));
    auto add = [&](const yaml::Node& idNode, SourceLoc fallback) {
      auto id = chipId(idNode, fallback, "an entry of 'chips_with_mmio'");
      if (!id) return;
      if (!out_.hasChip(*id)) {
        if (!failedChips_)
          error(at(idNode, fallback), "MMIO chip " + std::to_string(*id) + " is not listed in 'chips'");
        return;
      }
      out_.mmio.insert(*id);
    };
    if (v.IsMap()) { // {chip: pci_device, ...}
      for (const auto& e : v) add(e.first, loc);
    } else if (v.IsSequence()) {
      for (const yaml::Node& item : v) {
        // An entry is a chip id, or {chip: pci_device} as UMD writes it.
        if (item.IsMap() && item.size() == 1) add((*item.begin()).first, at(item, loc));
        else add(item, loc);
      }
    } else if (!isNullScalar(v)) {
      error(loc, "'chips_with_mmio' must be a list of chip ids");
      return;
    }
    if (out_.mmio.empty() && errors_ == 0) error(loc, "'chips_with_mmio' lists no chip: the host would reach none");
  }
};

} // namespace

std::optional<ClusterDescriptor> parseClusterDescriptor(const SourceBuffer& source, uint32_t maxChannels,
                                                        DiagnosticEngine& diags) {
  return Parser(source, maxChannels, diags).run();
}

} // namespace tessera
