// Cluster descriptors: parsing (the upstream corpus files and broken ones),
// default topologies, routes and MMIO gateways. Link counts and routes were
// worked out by hand from the files and docs/cluster.md.
#include "device/cluster.hpp"
#include "support/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace tessera;

namespace {

constexpr uint32_t kWormholeChannels = 16;

std::optional<ClusterDescriptor> parse(const std::string& text, DiagnosticEngine& diags,
                                       uint32_t channels = kWormholeChannels) {
  SourceBuffer source("test_cluster.yaml", text);
  return parseClusterDescriptor(source, channels, diags);
}

ClusterDescriptor mustParse(const std::string& text, uint32_t channels = kWormholeChannels) {
  DiagnosticEngine diags;
  auto c = parse(text, diags, channels);
  for (const Diagnostic& d : diags.diagnostics()) UNSCOPED_INFO(d.loc.line << ":" << d.loc.col << " " << d.message);
  REQUIRE(diags.errorCount() == 0);
  REQUIRE(c.has_value());
  return *c;
}

// The first error of a rejected text (`errors` of them in all).
Diagnostic mustFail(const std::string& text, uint32_t channels = kWormholeChannels, size_t errors = 1) {
  DiagnosticEngine diags;
  auto c = parse(text, diags, channels);
  for (const Diagnostic& d : diags.diagnostics()) UNSCOPED_INFO(d.loc.line << ":" << d.loc.col << " " << d.message);
  REQUIRE_FALSE(c.has_value());
  REQUIRE(diags.errorCount() == errors);
  REQUIRE(diags.diagnostics().front().rule == "cluster-descriptor");
  return diags.diagnostics().front();
}

std::string corpusDir() { return std::string(TESSERA_UNIT_CORPUS) + "/clusters"; }

// The corpus tests pass vacuously (with a warning) when the corpus is not beside the checkout.
bool haveCorpus() {
  if (std::filesystem::is_directory(corpusDir())) return true;
  WARN("corpus not found at " << corpusDir() << ": skipped");
  return false;
}

std::optional<ClusterDescriptor> parseCorpus(const std::string& name, DiagnosticEngine& diags) {
  auto text = readFile(corpusDir() + "/" + name);
  REQUIRE(text.ok());
  SourceBuffer source(name, std::move(*text));
  return parseClusterDescriptor(source, kWormholeChannels, diags);
}

bool hasLink(const ClusterDescriptor& c, EthEndpoint x, EthEndpoint y) {
  auto p = c.peer(x);
  return p && *p == y;
}

} // namespace

TEST_CASE("cluster: every upstream descriptor parses to the links it lists", "[cluster]") {
  if (!haveCorpus()) return;
  struct Expect {
    const char* file;
    size_t chips;
    size_t links; // counted in the files: each two-way link once
  };
  const Expect expected[] = {
      {"cluster_desc_issue_1813.yaml", 32, 208}, // 52 chip pairs x 4 links
      {"wormhole_2chip_bidirectional_cluster.yaml", 2, 2},      // 4 listings, each link both ways
      {"wormhole_2x2_cluster_1_link_per_pair.yaml", 4, 4},
      {"wormhole_3x3_cluster.yaml", 9, 12},
      {"wormhole_4chip_linear_cluster.yaml", 4, 12},
      {"wormhole_4chip_square_cluster.yaml", 4, 16},
      {"wormhole_weird_intersecting_3x3_ring_cluster.yaml", 13, 14},
  };
  for (const Expect& e : expected) {
    INFO(e.file);
    DiagnosticEngine diags;
    auto c = parseCorpus(e.file, diags);
    REQUIRE(diags.errorCount() == 0);
    REQUIRE(diags.warningCount() == 0);
    REQUIRE(c.has_value());
    CHECK(c->chipCount() == e.chips);
    CHECK(c->links.size() == e.links);
    CHECK(c->mmio == std::set<ChipId>{0}); // issue_1813 writes it as [0: 0] (chip: PCI device)
    CHECK(c->name == std::string(e.file).substr(0, std::string(e.file).size() - 5));
    for (size_t i = 1; i < c->links.size(); ++i) {
      const EthLink& p = c->links[i - 1];
      const EthLink& l = c->links[i];
      CHECK((p.a < l.a || (p.a == l.a && p.b < l.b))); // sorted, no repeats
    }
    for (const EthLink& l : c->links) {
      CHECK(l.a < l.b);
      CHECK(l.loc.valid());
    }
  }
}

TEST_CASE("cluster: the upstream files' links and locations", "[cluster]") {
  if (!haveCorpus()) return;
  DiagnosticEngine diags;
  auto two = parseCorpus("wormhole_2chip_bidirectional_cluster.yaml", diags);
  REQUIRE(two);
  CHECK(hasLink(*two, {0, 8}, {1, 0}));
  CHECK(hasLink(*two, {1, 1}, {0, 9}));
  CHECK_FALSE(two->peer({0, 0}).has_value());
  CHECK(two->chips.at(1).x == 1);
  CHECK(two->links.front().loc == SourceLoc{7, 3}); // first listing of 0:8 <-> 1:0

  auto gal = parseCorpus("cluster_desc_issue_1813.yaml", diags);
  REQUIRE(gal);
  CHECK(hasLink(*gal, {0, 8}, {30, 8}));
  CHECK(hasLink(*gal, {31, 3}, {30, 3}));
  CHECK(gal->chips.at(5).x == 1);
  CHECK(gal->chips.at(5).y == 6);
  CHECK(gal->linksBetween(0, 3).size() == 4);
  REQUIRE(gal->linksBetween(3, 0).size() == 4);
  CHECK(gal->linksBetween(3, 0)[0].a == EthEndpoint{3, 12}); // oriented from chip 3, its channels ascending
  CHECK(gal->linksBetween(3, 0)[3].b == EthEndpoint{0, 7});
  // Chips 12, 11, 10, 9, 8, 7, 6, 26 sit at x 0, y 0..7: the straight column.
  CHECK(gal->route(12, 26) == std::vector<ChipId>{12, 11, 10, 9, 8, 7, 6, 26});
  CHECK(gal->route(12, 31).size() == 11); // [0,0] -> [3,7]: 10 hops
}

TEST_CASE("cluster: the invalid upstream file is rejected naming its bad link", "[cluster]") {
  if (!haveCorpus()) return;
  DiagnosticEngine diags;
  auto c = parseCorpus("wormhole_2chip_invalid_bidirectional_cluster.yaml", diags);
  CHECK_FALSE(c.has_value());
  REQUIRE(diags.errorCount() >= 1);
  const Diagnostic& d = diags.diagnostics().front();
  CHECK(d.rule == "cluster-descriptor");
  // Line 9 lists chip 1 channel 1 <-> chip 0 channel 8: channel 1:1 is already
  // joined to 0:9 (line 8) and 0:8 to 1:0 (line 7).
  CHECK(d.loc == SourceLoc{9, 3});
  CHECK_THAT(d.message, Catch::Contains("link chip 1 channel 1 <-> chip 0 channel 8"));
  CHECK_THAT(d.message, Catch::Contains("joins to chip 0 channel 9"));
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].loc == SourceLoc{8, 3});
}

TEST_CASE("cluster: malformed descriptors are located errors", "[cluster]") {
  const std::string chips = "chips: {0: [0,0,0,0], 1: [1,0,0,0], 2: [2,0,0,0]}\n";
  SECTION("not YAML") {
    Diagnostic d = mustFail("chips: {0: [0,0,0,0]\nethernet_connections: [\n");
    CHECK(d.loc.valid());
  }
  SECTION("not a map") { CHECK(mustFail("- 1\n- 2\n").loc == SourceLoc{1, 1}); }
  SECTION("a link listed one-way among two-way ones") {
    Diagnostic d = mustFail(chips +
                            "ethernet_connections: [\n"
                            "  [{chip: 0, chan: 0}, {chip: 1, chan: 0}],\n"
                            "  [{chip: 1, chan: 0}, {chip: 0, chan: 0}],\n"
                            "  [{chip: 1, chan: 1}, {chip: 2, chan: 0}],\n"
                            "]\nchips_with_mmio: [0]\n");
    CHECK(d.loc == SourceLoc{5, 3});
    CHECK_THAT(d.message, Catch::Contains("link chip 1 channel 1 <-> chip 2 channel 0 is listed one-way"));
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0].loc == SourceLoc{4, 3});
  }
  SECTION("an end on a chip the file does not list") {
    Diagnostic d = mustFail(chips + "ethernet_connections: [[{chip: 0, chan: 0}, {chip: 7, chan: 0}]]\nchips_with_mmio: [0]\n");
    CHECK(d.loc == SourceLoc{2, 52});
    CHECK_THAT(d.message, Catch::Contains("chip 7"));
  }
  SECTION("a channel the chips do not have") {
    Diagnostic d = mustFail(chips + "ethernet_connections: [[{chip: 0, chan: 16}, {chip: 1, chan: 0}]]\nchips_with_mmio: [0]\n");
    CHECK(d.loc == SourceLoc{2, 41});
    CHECK_THAT(d.message, Catch::Contains("channel 16 is not an ethernet channel (the chips have channels 0..15)"));
  }
  SECTION("grayskull has no ethernet: any link is rejected") {
    // Both ends are wrong: two errors.
    Diagnostic d = mustFail(chips + "ethernet_connections: [[{chip: 0, chan: 0}, {chip: 1, chan: 0}]]\nchips_with_mmio: [0]\n", 0, 2);
    CHECK_THAT(d.message, Catch::Contains("no ethernet cores"));
  }
  SECTION("a link from a chip to itself") {
    Diagnostic d = mustFail(chips + "ethernet_connections: [[{chip: 1, chan: 0}, {chip: 1, chan: 1}]]\nchips_with_mmio: [0]\n");
    CHECK(d.loc == SourceLoc{2, 24});
    CHECK_THAT(d.message, Catch::Contains("joins a chip to itself"));
  }
  SECTION("an MMIO chip that is not a chip") {
    Diagnostic d = mustFail(chips + "chips_with_mmio: [0, 5]\n");
    CHECK(d.loc == SourceLoc{2, 22});
  }
  SECTION("no MMIO section") { CHECK_THAT(mustFail(chips).message, Catch::Contains("chips_with_mmio")); }
  SECTION("a chip id that is not a non-negative integer") {
    Diagnostic d = mustFail("chips: {-1: [0,0,0,0]}\nchips_with_mmio: [0]\n");
    CHECK(d.loc == SourceLoc{1, 9});
  }
  SECTION("a location that is not four integers") {
    Diagnostic d = mustFail("chips: {0: [0,0,0]}\nchips_with_mmio: [0]\n");
    CHECK(d.loc == SourceLoc{1, 12});
  }
}

TEST_CASE("cluster: repeated listings of one link are one link", "[cluster]") {
  ClusterDescriptor c = mustParse("chips: {0: [0,0,0,0], 1: [1,0,0,0]}\n"
                                  "ethernet_connections: [\n"
                                  "  [{chip: 0, chan: 3}, {chip: 1, chan: 5}],\n"
                                  "  [{chip: 0, chan: 3}, {chip: 1, chan: 5}],\n"
                                  "]\nchips_with_mmio: [{0: 0}]\nharvesting: {0: {noc_translation: True, harvest_mask: 0}}\n");
  REQUIRE(c.links.size() == 1);
  CHECK(c.links[0].a == EthEndpoint{0, 3});
  CHECK(c.links[0].b == EthEndpoint{1, 5});
  CHECK(c.isMmio(0));
  CHECK_FALSE(c.isMmio(1));
}

TEST_CASE("cluster: default topologies", "[cluster]") {
  std::string why;
  SECTION("wormhole_b0 pair: chip 0 channels 8,9 to chip 1 channels 0,1") {
    auto c = defaultCluster(Arch::WormholeB0, 2, why);
    REQUIRE(c);
    CHECK(c->name == "default-wormhole_b0-1x2");
    CHECK(c->chipCount() == 2);
    REQUIRE(c->links.size() == 2);
    CHECK(hasLink(*c, {0, 8}, {1, 0}));
    CHECK(hasLink(*c, {0, 9}, {1, 1}));
    CHECK(c->mmio == std::set<ChipId>{0});
  }
  SECTION("3 and 4 chips: 2x2, horizontal 8,9->0,1 and vertical 14,15->6,7") {
    for (uint32_t n : {3u, 4u}) {
      auto c = defaultCluster(Arch::WormholeB0, n, why);
      REQUIRE(c);
      CHECK(c->name == "default-wormhole_b0-2x2");
      CHECK(c->chipCount() == 4);
      CHECK(c->links.size() == 8); // 2 rows x 1 pair x 2 + 2 cols x 1 pair x 2
      CHECK(hasLink(*c, {2, 9}, {3, 1}));
      CHECK(hasLink(*c, {0, 14}, {2, 6}));
      CHECK(hasLink(*c, {1, 15}, {3, 7}));
      CHECK(c->chips.at(3).x == 1);
      CHECK(c->chips.at(3).y == 1);
    }
  }
  SECTION("mesh sizes and link counts") {
    struct Case { uint32_t chips; const char* name; size_t count; size_t links; };
    // links = R*(C-1)*2 + (R-1)*C*2
    for (Case k : {Case{1, "default-wormhole_b0-1x1", 1, 0}, Case{5, "default-wormhole_b0-2x4", 8, 20},
                   Case{8, "default-wormhole_b0-2x4", 8, 20}, Case{9, "default-wormhole_b0-3x4", 12, 34},
                   Case{12, "default-wormhole_b0-3x4", 12, 34}, Case{13, "default-wormhole_b0-4x8", 32, 104},
                   Case{32, "default-wormhole_b0-4x8", 32, 104}}) {
      INFO(k.chips);
      auto c = defaultCluster(Arch::WormholeB0, k.chips, why);
      REQUIRE(c);
      CHECK(c->name == k.name);
      CHECK(c->chipCount() == k.count);
      CHECK(c->links.size() == k.links);
    }
  }
  SECTION("33 chips: MMIO chip 0 in front of a 4x8 Galaxy of chips 1..32") {
    auto c = defaultCluster(Arch::WormholeB0, 33, why);
    REQUIRE(c);
    CHECK(c->chipCount() == 33);
    CHECK(c->links.size() == 106);
    CHECK(hasLink(*c, {0, 8}, {1, 0}));
    CHECK(hasLink(*c, {0, 9}, {1, 1}));
    CHECK(hasLink(*c, {1, 8}, {2, 0})); // Galaxy row 0
    CHECK(hasLink(*c, {1, 14}, {9, 6})); // Galaxy column 0, rows 0 -> 1
    CHECK(c->mmio == std::set<ChipId>{0});
    CHECK(c->route(0, 32).size() == 12); // 0 -> 1, then 3 rows and 7 columns
    CHECK(c->mmioGateway(32) == 0u);
  }
  SECTION("wormhole and blackhole share the meshes") {
    auto w = defaultCluster(Arch::Wormhole, 4, why);
    auto b = defaultCluster(Arch::Blackhole, 8, why);
    REQUIRE(w);
    REQUIRE(b);
    CHECK(w->name == "default-wormhole-2x2");
    CHECK(b->name == "default-blackhole-2x4");
  }
  SECTION("grayskull: every chip MMIO, no links") {
    auto c = defaultCluster(Arch::Grayskull, 3, why);
    REQUIRE(c);
    CHECK(c->chipCount() == 3);
    CHECK(c->links.empty());
    CHECK(c->mmio == std::set<ChipId>{0, 1, 2});
    CHECK(c->mmioGateway(2) == 2u);
    CHECK(c->route(0, 1).empty()); // no ethernet: chips talk through the host
  }
  SECTION("no default") {
    CHECK_FALSE(defaultCluster(Arch::WormholeB0, 34, why));
    CHECK_THAT(why, Catch::Contains("1 to 33"));
    CHECK_FALSE(defaultCluster(Arch::WormholeB0, 0, why));
    CHECK_FALSE(defaultCluster(Arch::Grayskull, 1000000, why));
  }
  SECTION("one chip") {
    ClusterDescriptor c = singleChipCluster();
    CHECK(c.chipCount() == 1);
    CHECK(c.isMmio(0));
    CHECK(c.route(0, 0) == std::vector<ChipId>{0});
  }
}

TEST_CASE("cluster: routes take the fewest hops, ties toward lower chip ids", "[cluster]") {
  // 0-1-2 / 3-4-5 / 6-7-8, one link per neighbour pair.
  ClusterDescriptor grid = mustParse("chips: {0: [0,0,0,0], 1: [1,0,0,0], 2: [2,0,0,0], 3: [0,1,0,0], 4: [1,1,0,0],\n"
                                     "        5: [2,1,0,0], 6: [0,2,0,0], 7: [1,2,0,0], 8: [2,2,0,0], 9: [5,5,0,0]}\n"
                                     "ethernet_connections: [\n"
                                     "  [{chip: 0, chan: 1}, {chip: 1, chan: 3}], [{chip: 0, chan: 2}, {chip: 3, chan: 0}],\n"
                                     "  [{chip: 1, chan: 1}, {chip: 2, chan: 3}], [{chip: 1, chan: 2}, {chip: 4, chan: 0}],\n"
                                     "  [{chip: 2, chan: 2}, {chip: 5, chan: 0}], [{chip: 3, chan: 1}, {chip: 4, chan: 3}],\n"
                                     "  [{chip: 3, chan: 2}, {chip: 6, chan: 0}], [{chip: 4, chan: 1}, {chip: 5, chan: 3}],\n"
                                     "  [{chip: 4, chan: 2}, {chip: 7, chan: 0}], [{chip: 5, chan: 2}, {chip: 8, chan: 0}],\n"
                                     "  [{chip: 6, chan: 1}, {chip: 7, chan: 3}], [{chip: 7, chan: 1}, {chip: 8, chan: 3}],\n"
                                     "]\nchips_with_mmio: [0, 8]\n");
  CHECK(grid.route(0, 8) == std::vector<ChipId>{0, 1, 2, 5, 8});
  CHECK(grid.route(8, 0) == std::vector<ChipId>{8, 5, 2, 1, 0});
  CHECK(grid.route(0, 2) == std::vector<ChipId>{0, 1, 2}); // two hops
  CHECK(grid.route(3, 1) == std::vector<ChipId>{3, 0, 1});
  CHECK(grid.route(4, 4) == std::vector<ChipId>{4});
  CHECK(grid.route(0, 9).empty()); // chip 9 has no links
  CHECK(grid.route(0, 42).empty());
  CHECK(grid.mmioGateway(1) == 0u);
  CHECK(grid.mmioGateway(7) == 8u);
  CHECK(grid.mmioGateway(4) == 0u); // two hops from both: the lower id
  CHECK(grid.mmioGateway(8) == 8u);
  CHECK_FALSE(grid.mmioGateway(9).has_value());
  REQUIRE(grid.linksBetween(4, 1).size() == 1);
  CHECK(grid.linksBetween(4, 1)[0].a == EthEndpoint{4, 0});
  CHECK(grid.linksBetween(4, 1)[0].b == EthEndpoint{1, 2});
  CHECK(grid.linksBetween(0, 8).empty());
}

TEST_CASE("cluster: the upstream ring's route", "[cluster]") {
  if (!haveCorpus()) return;
  DiagnosticEngine diags;
  auto ring = parseCorpus("wormhole_weird_intersecting_3x3_ring_cluster.yaml", diags);
  REQUIRE(ring);
  // 0-C-B-9 (chips 12 and 11) beats 0-1-2-3-7-B-9.
  CHECK(ring->route(0, 9) == std::vector<ChipId>{0, 12, 11, 9});
  CHECK(ring->route(4, 6) == std::vector<ChipId>{4, 8, 6});
  CHECK(ring->mmioGateway(6) == 0u);
}
