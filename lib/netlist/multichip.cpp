#include "netlist/multichip.hpp"

#include "netlist/text.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <unordered_map>

namespace tessera::netlist {

namespace {

std::optional<ChipId> toChip(const Field<int64_t>& td) {
  int64_t v = td.present() ? td.value : 0;
  if (v < 0 || v > static_cast<int64_t>(UINT32_MAX)) return std::nullopt;
  return static_cast<ChipId>(v);
}

std::string chipText(ChipId c) { return "chip " + std::to_string(c); }
std::string endText(EthEndpoint e) { return chipText(e.chip) + " channel " + std::to_string(e.chan); }

} // namespace

std::optional<ChipId> chipOf(const Graph& g) { return toChip(g.targetDevice); }
std::optional<ChipId> chipOf(const Queue& q) { return toChip(q.targetDevice); }

uint32_t chipsNamed(const Netlist& nl) {
  uint64_t chips = 1;
  for (const Queue& q : nl.queues)
    if (auto c = chipOf(q)) chips = std::max<uint64_t>(chips, uint64_t{*c} + 1);
  for (const Graph& g : nl.graphs)
    if (auto c = chipOf(g)) chips = std::max<uint64_t>(chips, uint64_t{*c} + 1);
  return static_cast<uint32_t>(std::min<uint64_t>(chips, UINT32_MAX));
}

bool crossChipOpEdgesSupported(Arch arch) { return arch != Arch::Blackhole; }

std::vector<std::vector<const Graph*>> opJoinedGraphs(const Netlist& nl) {
  std::unordered_map<std::string, size_t> graphOfOp; // first definition wins, as the validator's index
  for (size_t i = 0; i < nl.graphs.size(); ++i)
    for (const Op& op : nl.graphs[i].ops) graphOfOp.emplace(op.name, i);
  std::vector<size_t> parent(nl.graphs.size());
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t i = 0; i < nl.graphs.size(); ++i)
    for (const Op& op : nl.graphs[i].ops)
      for (const Operand& in : op.inputs)
        if (auto it = graphOfOp.find(in.name); it != graphOfOp.end()) {
          size_t a = find(i), b = find(it->second);
          if (a != b) parent[std::max(a, b)] = std::min(a, b); // the root stays the group's first graph
        }
  std::map<size_t, std::vector<const Graph*>> groups;
  for (size_t i = 0; i < nl.graphs.size(); ++i) groups[find(i)].push_back(&nl.graphs[i]);
  std::vector<std::vector<const Graph*>> out;
  for (auto& [root, graphs] : groups) out.push_back(std::move(graphs));
  return out;
}

std::string clusterText(const ClusterDescriptor& c) {
  std::string chips;
  bool contiguous = !c.chips.empty() && c.chips.begin()->first == 0 && c.chips.rbegin()->first + 1 == c.chips.size();
  if (c.chips.size() == 1) chips = chipText(c.chips.begin()->first);
  else if (contiguous) chips = "chips 0.." + std::to_string(c.chips.size() - 1);
  else {
    size_t shown = 0;
    for (const auto& [id, loc] : c.chips) {
      if (shown == 8) {
        chips += ", ...";
        break;
      }
      chips += (shown++ ? ", " : "chips ") + std::to_string(id);
    }
  }
  return "cluster '" + c.name + "' (" + chips + ")";
}

namespace {

class MultichipValidator {
public:
  MultichipValidator(const Netlist& nl, const ValidationTarget& target, DiagnosticEngine& d)
      : nl_(nl), target_(target), cluster_(*target.cluster), d_(d) {}

  void run() {
    for (const Graph& g : nl_.graphs)
      for (const Op& op : g.ops) ops_.emplace(op.name, std::pair{&op, &g});
    for (const Queue& q : nl_.queues) queues_.emplace(q.name, &q);
    for (const Graph& g : nl_.graphs)
      for (const Op& op : g.ops) {
        if (op.type.value == "ethernet_datacopy") checkEthernetDatacopy(g, op);
        checkInputRoutes(g, op);
      }
    for (const Queue& q : nl_.queues) checkQueueRoutes(q);
  }

private:
  const Netlist& nl_;
  const ValidationTarget& target_;
  const ClusterDescriptor& cluster_;
  DiagnosticEngine& d_;
  std::unordered_map<std::string, std::pair<const Op*, const Graph*>> ops_;
  std::unordered_map<std::string, const Queue*> queues_;

  size_t ethChannels() const { return target_.device->ethCores.size(); }

  // A chip the cluster has (a bad target_device has its own error already).
  std::optional<ChipId> known(std::optional<ChipId> c) const {
    return c && cluster_.hasChip(*c) ? c : std::nullopt;
  }

  // Whether data can go from chip `a` to chip `b`: over ethernet links when
  // the chips have ethernet, else through the host (both reach an MMIO chip).
  bool reachable(ChipId a, ChipId b) const {
    if (a == b) return true;
    if (ethChannels() > 0) return !cluster_.route(a, b).empty();
    return cluster_.mmioGateway(a) && cluster_.mmioGateway(b);
  }

  void noRoute(SourceLoc loc, const std::string& what, ChipId a, ChipId b) {
    d_.error("chip-route", loc,
             what + ": no route from " + chipText(a) + " to " + chipText(b) + " in " + clusterText(cluster_) +
                 (ethChannels() > 0 ? ": no chain of ethernet links joins them"
                                    : ": without ethernet data goes through the host, and one of them reaches no MMIO chip"));
  }

  void noHost(SourceLoc loc, const std::string& what, ChipId c) {
    d_.error("chip-route", loc,
             what + ": the host cannot reach " + chipText(c) + ": no MMIO chip of " + clusterText(cluster_) +
                 " has a route to it");
  }

  // Every transfer into an op crosses chips over a route.
  void checkInputRoutes(const Graph& g, const Op& op) {
    auto chip = known(chipOf(g));
    if (!chip) return;
    for (const Operand& in : op.inputs) {
      const std::string what = "op " + quote(op.name) + " on " + chipText(*chip) + " reads " + quote(in.name);
      if (auto p = ops_.find(in.name); p != ops_.end()) {
        const auto& [producer, pg] = p->second;
        // An ethernet_datacopy's consumers and route are its own rules.
        if (producer->type.value == "ethernet_datacopy" || pg == &g) continue;
        auto from = known(chipOf(*pg));
        if (!from || *from == *chip || !crossChipOpEdgesSupported(target_.arch)) continue;
        if (!reachable(*from, *chip)) noRoute(in.loc, what + " on " + chipText(*from), *from, *chip);
      } else if (auto q = queues_.find(in.name); q != queues_.end()) {
        const Queue& queue = *q->second;
        if (queue.location.present() && queue.location.value == IoLocation::Host) {
          if (!cluster_.mmioGateway(*chip)) noHost(in.loc, what + ", a host queue", *chip);
          continue;
        }
        auto from = known(chipOf(queue));
        if (from && !reachable(*from, *chip)) noRoute(in.loc, what + " on " + chipText(*from), *from, *chip);
      }
    }
  }

  // Writes into a queue: by its producer op, or by the host.
  void checkQueueRoutes(const Queue& queue) {
    auto chip = known(chipOf(queue));
    bool host = queue.location.present() && queue.location.value == IoLocation::Host;
    const std::string element = "queue " + quote(queue.name);
    if (queue.isHostFed()) {
      if (chip && !host && !cluster_.mmioGateway(*chip))
        noHost(queue.targetDevice.present() ? queue.targetDevice.loc : queue.loc, element + ", fed by the host", *chip);
      return;
    }
    auto p = ops_.find(queue.input.value);
    if (p == ops_.end() || p->second.first->type.value == "ethernet_datacopy") return;
    auto from = known(chipOf(*p->second.second));
    if (!from) return;
    if (host) {
      if (!cluster_.mmioGateway(*from)) noHost(queue.input.loc, element + " (a host queue) written by op " + quote(queue.input.value), *from);
    } else if (chip && !reachable(*from, *chip)) {
      noRoute(queue.input.loc, element + " on " + chipText(*chip) + " written by op " + quote(queue.input.value), *from, *chip);
    }
  }

  // ---------------------------------------------------------------- ethernet_datacopy
  void checkEthernetDatacopy(const Graph& g, const Op& op) {
    const std::string element = "op " + quote(op.name);
    const OpAttributes& a = op.attributes;
    SourceLoc here = a.loc.valid() ? a.loc : op.type.loc;
    if (ethChannels() == 0) {
      auto diag = d_.error("ethernet-datacopy", op.type.loc,
                           element + ": ethernet_datacopy runs on ethernet cores, and " + target_.device->name +
                               " has none");
      if (target_.arch == Arch::Grayskull) diag.note("grayskull chips have no ethernet: they talk through the host");
      return;
    }
    if (op.gridLoc.present())
      d_.warning("ethernet-datacopy", op.gridLoc.loc,
                 element + ": grid_loc is ignored: an ethernet_datacopy runs on ethernet cores, not on the worker grid");
    if (!a.destDevice.present()) {
      d_.error("ethernet-datacopy", here, element + ": an ethernet_datacopy needs attributes.dest_device, the chip it sends to");
      return;
    }
    const int64_t destValue = a.destDevice.value;
    if (destValue < 0 || destValue > static_cast<int64_t>(UINT32_MAX) || !cluster_.hasChip(static_cast<ChipId>(destValue))) {
      d_.error("ethernet-datacopy", a.destDevice.loc,
               element + ": dest_device " + std::to_string(destValue) + " is not a chip of " + clusterText(cluster_));
      return;
    }
    const ChipId dest = static_cast<ChipId>(destValue);
    auto chip = known(chipOf(g));
    if (!chip) return;
    if (dest == *chip) {
      d_.error("ethernet-datacopy", a.destDevice.loc,
               element + ": dest_device " + std::to_string(dest) + " is the op's own chip (graph " + quote(g.name) +
                   " is on " + chipText(*chip) + "); an ethernet_datacopy sends to another chip")
          .note(g.targetDevice.loc, "target_device of graph " + quote(g.name));
      return;
    }
    checkConsumers(op, dest);
    if (checkChannels(op, *chip, dest)) return; // explicit channels: their links are the route
    if (cluster_.route(*chip, dest).empty())
      noRoute(a.destDevice.loc, element + " (ethernet_datacopy) on " + chipText(*chip) + " sends to dest_device " +
                                    std::to_string(dest), *chip, dest);
  }

  // Channels given: one pair per core, each a link from this chip to dest.
  // Returns whether channels were given.
  bool checkChannels(const Op& op, ChipId chip, ChipId dest) {
    const std::string element = "op " + quote(op.name);
    const OpAttributes& a = op.attributes;
    const auto& in = a.ingressChannels;
    const auto& out = a.egressChannels;
    // Absent and empty both leave the choice to the tools (docs/cluster.md).
    bool hasIn = in.present() && !in.value.empty(), hasOut = out.present() && !out.value.empty();
    if (!hasIn && !hasOut) return false;
    if (in.value.size() != out.value.size()) {
      SourceLoc loc = hasIn ? in.loc : out.loc;
      d_.error("ethernet-datacopy", loc,
               element + ": ingress_channels lists " + std::to_string(in.value.size()) + " channel(s) and egress_channels " +
                   std::to_string(out.value.size()) + "; they pair up core by core");
      return true;
    }
    if (op.gridSize.present() && op.gridSize.value.r > 0 && op.gridSize.value.c > 0) {
      int64_t cores = op.gridSize.value.r * op.gridSize.value.c;
      if (static_cast<int64_t>(in.value.size()) != cores) {
        d_.error("ethernet-datacopy", in.loc,
                 element + ": ingress_channels and egress_channels list " + std::to_string(in.value.size()) +
                     " channel pair(s) for a grid_size of " + dimText(op.gridSize.value) + " (" + std::to_string(cores) +
                     " core(s)); there is one pair per core")
            .note(op.gridSize.loc, "grid_size of " + quote(op.name));
        return true;
      }
    }
    bool inRange = true;
    for (auto [name, list] : {std::pair{"ingress_channels", &in}, std::pair{"egress_channels", &out}})
      for (size_t i = 0; i < list->value.size(); ++i) {
        int64_t ch = list->value[i];
        if (ch >= 0 && ch < static_cast<int64_t>(ethChannels())) continue;
        d_.error("ethernet-datacopy", list->loc,
                 element + ": " + name + "[" + std::to_string(i) + "] is channel " + std::to_string(ch) + ", but " +
                     target_.device->name + " has ethernet channels 0.." + std::to_string(ethChannels() - 1));
        inRange = false;
      }
    if (!inRange) return true;
    for (size_t i = 0; i < in.value.size(); ++i) {
      EthEndpoint from{chip, static_cast<uint32_t>(in.value[i])}, to{dest, static_cast<uint32_t>(out.value[i])};
      auto peer = cluster_.peer(from);
      if (peer && *peer == to) continue;
      auto diag = d_.error("ethernet-link", in.loc,
                           element + ": core " + std::to_string(i) + " relays " + endText(from) + " -> " + endText(to) +
                               " (ingress_channels[" + std::to_string(i) + "], egress_channels[" + std::to_string(i) +
                               "]), which is not a link of " + clusterText(cluster_));
      diag.note(peer ? endText(from) + " is linked to " + endText(*peer) : endText(from) + " has no link");
      if (auto back = cluster_.peer(to); back && !(back == from)) diag.note(endText(to) + " is linked to " + endText(*back));
      if (auto links = cluster_.linksBetween(chip, dest); !links.empty()) {
        std::string pairs;
        for (size_t k = 0; k < links.size() && k < 4; ++k)
          pairs += (k ? ", " : "") + std::to_string(links[k].a.chan) + " -> " + std::to_string(links[k].b.chan);
        if (links.size() > 4) pairs += ", ...";
        diag.note("the links from " + chipText(chip) + " to " + chipText(dest) + " are channels " + pairs);
      } else {
        diag.note(chipText(chip) + " and " + chipText(dest) + " have no direct link");
      }
    }
    return true;
  }

  // What an ethernet_datacopy delivers lives on dest_device: ops that read it
  // run there, and a DRAM queue it writes is there.
  void checkConsumers(const Op& op, ChipId dest) {
    for (const Graph& g : nl_.graphs) {
      auto chip = known(chipOf(g));
      if (!chip || *chip == dest) continue;
      for (const Op& consumer : g.ops)
        for (const Operand& in : consumer.inputs)
          if (in.name == op.name)
            d_.error("ethernet-datacopy-consumer", in.loc,
                     "op " + quote(consumer.name) + " on " + chipText(*chip) + " reads ethernet_datacopy " + quote(op.name) +
                         ", which delivers to " + chipText(dest) + " (its dest_device)")
                .note(op.attributes.destDevice.loc, "dest_device of " + quote(op.name));
    }
    for (const Queue& q : nl_.queues) {
      if (q.input.value != op.name || (q.location.present() && q.location.value == IoLocation::Host)) continue;
      auto chip = known(chipOf(q));
      if (chip && *chip != dest)
        d_.error("ethernet-datacopy-consumer", q.input.loc,
                 "queue " + quote(q.name) + " on " + chipText(*chip) + " is written by ethernet_datacopy " + quote(op.name) +
                     ", which delivers to " + chipText(dest) + " (its dest_device)")
            .note(op.attributes.destDevice.loc, "dest_device of " + quote(op.name));
    }
  }
};

} // namespace

void validateMultichip(const Netlist& nl, const ValidationTarget& target, DiagnosticEngine& diags) {
  MultichipValidator(nl, target, diags).run();
}

} // namespace tessera::netlist

namespace tessera::netlist {

const ClusterDescriptor& oneChipCluster() {
  static const ClusterDescriptor one = singleChipCluster();
  return one;
}

} // namespace tessera::netlist
