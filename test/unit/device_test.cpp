// Unit tests of lib/device: SoC descriptor parsing, bundled descriptors, arch parameters.
#include "device/arch.hpp"
#include "device/arch_params.hpp"
#include "device/soc_descriptor.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace tessera;

// Readable failure messages for the coordinate types.
namespace Catch {
template <> struct StringMaker<CoreCoord> {
  static std::string convert(const CoreCoord& c) { return toString(c); }
};
template <> struct StringMaker<SourceLoc> {
  static std::string convert(const SourceLoc& l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }
};
} // namespace Catch

namespace {

SocDescriptor mustLoad(const std::string& name) {
  auto text = bundledDescriptorText(name);
  REQUIRE(text.has_value());
  SourceBuffer source(name + ".yaml", std::string(*text));
  DiagnosticEngine diag;
  auto soc = parseSocDescriptor(source, diag);
  INFO(name);
  REQUIRE(diag.errorCount() == 0);
  REQUIRE(diag.warningCount() == 0);
  REQUIRE(soc.has_value());
  return *soc;
}

// Parses `text`, expecting failure; returns the diagnostics.
DiagnosticEngine mustFail(const std::string& text) {
  SourceBuffer source("bad.yaml", text);
  DiagnosticEngine diag;
  std::optional<SocDescriptor> soc;
  REQUIRE_NOTHROW(soc = parseSocDescriptor(source, diag));
  CHECK_FALSE(soc.has_value());
  CHECK(diag.errorCount() > 0);
  CHECK(diag.hasRule("soc-descriptor"));
  for (const Diagnostic& d : diag.diagnostics()) {
    INFO(d.message);
    CHECK(d.rule == "soc-descriptor");
    CHECK(d.loc.valid());
    CHECK(d.loc.line <= std::max<uint32_t>(source.lineCount(), 1));
  }
  return diag;
}

// A small valid descriptor the malformed cases below are derived from.
const std::string kMinimal = R"(grid:
  x_size: 3
  y_size: 3
dram:
  [[0-0]]
functional_workers:
  [1-1, 2-1,
   1-2, 2-2]
worker_l1_size: 1048576
dram_bank_size: 1073741824
arch_name: GRAYSKULL
)";

std::string replaceOnce(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

} // namespace

TEST_CASE("parseArch is case-insensitive and knows the netlist spellings", "[device]") {
  CHECK(parseArch("grayskull") == Arch::Grayskull);
  CHECK(parseArch("GRAYSKULL") == Arch::Grayskull);
  CHECK(parseArch("GraySkull") == Arch::Grayskull);
  CHECK(parseArch("wormhole") == Arch::Wormhole);
  CHECK(parseArch("WORMHOLE_B0") == Arch::WormholeB0);
  CHECK(parseArch("wormhole_b") == Arch::WormholeB0);
  CHECK(parseArch("Wormhole_B") == Arch::WormholeB0);
  CHECK(parseArch("blackhole") == Arch::Blackhole);
  CHECK_FALSE(parseArch("").has_value());
  CHECK_FALSE(parseArch("wormhole_b1").has_value());
  CHECK_FALSE(parseArch(" grayskull").has_value());
  for (Arch a : {Arch::Grayskull, Arch::Wormhole, Arch::WormholeB0, Arch::Blackhole})
    CHECK(parseArch(archName(a)) == a);
  CHECK(archName(Arch::WormholeB0) == "wormhole_b0");
}

TEST_CASE("every bundled descriptor parses", "[device]") {
  auto names = bundledDescriptorNames();
  CHECK(names.size() == 19);
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const std::string& name : names) {
    SocDescriptor soc = mustLoad(name);
    INFO(name);
    CHECK(soc.name == name);
    CHECK(soc.workerRows * soc.workerCols == soc.workerCount());
    CHECK(soc.dramChannelCount() > 0);
    CHECK(soc.workerL1Size > 0);
    // The logical grid round-trips through workerCore/workerLogical.
    for (int r = 0; r < soc.workerRows; ++r)
      for (int c = 0; c < soc.workerCols; ++c) {
        CoreCoord core = soc.workerCore(r, c);
        auto logical = soc.workerLogical(core);
        REQUIRE(logical.has_value());
        CHECK(logical->row == r);
        CHECK(logical->col == c);
      }
    // The file's arch prefix matches its arch_name.
    CHECK(name.rfind(std::string(archName(soc.arch)) + "_", 0) == 0);
    auto viaLoad = loadBundledDescriptor(name);
    CHECK(viaLoad.workers == soc.workers);
  }
  CHECK_FALSE(bundledDescriptorText("no_such_chip").has_value());
  CHECK_FALSE(findBundledDescriptor("no_such_chip").has_value());
  CHECK(loadBundledDescriptor("no_such_chip").workers.empty());
}

TEST_CASE("default descriptors exist for every arch", "[device]") {
  for (Arch a : {Arch::Grayskull, Arch::Wormhole, Arch::WormholeB0, Arch::Blackhole}) {
    SocDescriptor soc = loadBundledDescriptor(defaultDescriptorName(a));
    CHECK(soc.arch == a);
    CHECK(soc.workerL1Size == archParams(a).defaultWorkerL1Size);
  }
  CHECK(defaultDescriptorName(Arch::Grayskull) == "grayskull_10x12");
  CHECK(defaultDescriptorName(Arch::WormholeB0) == "wormhole_b0_8x10");
  CHECK(defaultDescriptorName(Arch::Blackhole) == "blackhole_10x14_no_eth");
}

TEST_CASE("grayskull_10x12", "[device]") {
  SocDescriptor soc = mustLoad("grayskull_10x12");
  CHECK(soc.arch == Arch::Grayskull);
  CHECK(soc.gridX == 13);
  CHECK(soc.gridY == 12);
  CHECK(soc.physicalGridX == 13);
  CHECK(soc.workerRows == 10);
  CHECK(soc.workerCols == 12);
  CHECK(soc.workerCount() == 120);
  CHECK(soc.dramChannelCount() == 8);
  CHECK(soc.dramCores.size() == 8);
  CHECK(soc.dramCore(0) == CoreCoord{1, 0});
  CHECK(soc.dramCore(7) == CoreCoord{10, 6});
  CHECK(soc.dramCore(8) == CoreCoord{-1, -1});
  CHECK(soc.workerL1Size == 1048576);
  CHECK(soc.dramBankSize == 1073741824);
  CHECK(soc.ethL1Size == 0);
  CHECK(soc.ethCores.empty());
  CHECK(soc.arc == std::vector<CoreCoord>{{0, 2}});
  CHECK(soc.pcie == std::vector<CoreCoord>{{0, 4}});
  CHECK(soc.routerOnly.size() == 26);
  CHECK(soc.workers.front() == CoreCoord{1, 1}); // file order
  CHECK(soc.workers[5] == CoreCoord{1, 7});
  // Worker rows skip y=6 (the DRAM row); columns are x=1..12.
  CHECK(soc.workerCore(0, 0) == CoreCoord{1, 1});
  CHECK(soc.workerCore(4, 0) == CoreCoord{1, 5});
  CHECK(soc.workerCore(5, 0) == CoreCoord{1, 7});
  CHECK(soc.workerCore(9, 11) == CoreCoord{12, 11});
  CHECK(soc.workerCore(10, 0) == CoreCoord{-1, -1});
  CHECK(soc.workerCore(0, -1) == CoreCoord{-1, -1});
  CHECK_FALSE(soc.workerLogical({1, 6}).has_value());
  CHECK_FALSE(soc.isWorker({0, 0}));
  CHECK(soc.features.unpackerVersion == 1);
  CHECK(soc.features.dstSizeAlignment == 32768);
  CHECK_FALSE(soc.features.inlineSrcaTransWithoutInstr);
}

TEST_CASE("wormhole_b0_8x10", "[device]") {
  SocDescriptor soc = mustLoad("wormhole_b0_8x10");
  CHECK(soc.arch == Arch::WormholeB0);
  CHECK(soc.gridX == 10);
  CHECK(soc.gridY == 12);
  CHECK(soc.workerRows == 10);
  CHECK(soc.workerCols == 8);
  REQUIRE(soc.dramChannelCount() == 6);
  for (const auto& channel : soc.dramChannels) CHECK(channel.size() == 3);
  CHECK(soc.dramCores.size() == 18);
  CHECK(soc.dramChannels[3] == std::vector<CoreCoord>{{5, 2}, {5, 9}, {5, 10}});
  CHECK(soc.dramCore(3, 2) == CoreCoord{5, 10});
  CHECK(soc.ethCores.size() == 16);
  CHECK(soc.ethCores.front() == CoreCoord{9, 0});
  CHECK(soc.workerL1Size == 1499136);
  CHECK(soc.dramBankSize == 2147483648ull);
  CHECK(soc.ethL1Size == 262144);
  // Columns skip x=5 (DRAM column), rows skip y=6 (ethernet row).
  CHECK(soc.workerCore(0, 0) == CoreCoord{1, 1});
  CHECK(soc.workerCore(0, 4) == CoreCoord{6, 1});
  CHECK(soc.workerCore(5, 3) == CoreCoord{4, 7});
  CHECK(soc.workerCore(9, 7) == CoreCoord{9, 11});
  auto logical = soc.workerLogical({6, 7});
  REQUIRE(logical.has_value());
  CHECK(*logical == SocDescriptor::Logical{5, 4});
  CHECK(soc.features.unpackerVersion == 2);
  CHECK(soc.features.inlineSrcaTransWithoutInstr);
}

TEST_CASE("harvested descriptors", "[device]") {
  SocDescriptor full = mustLoad("wormhole_b0_8x10");
  SocDescriptor harvested = mustLoad("wormhole_b0_9x8_harvested");
  CHECK(harvested.workerRows == 9);
  CHECK(harvested.workerRows < full.workerRows);
  CHECK(harvested.workerCols == full.workerCols);
  CHECK(harvested.harvestedWorkers.size() == 8);
  CHECK(harvested.harvestedWorkers.front() == CoreCoord{1, 11});
  CHECK(harvested.workerCore(8, 7) == CoreCoord{9, 10});

  // Translated-coordinate descriptors: a 32x32 coordinate space plus `physical:`.
  SocDescriptor translated = mustLoad("wormhole_b0_8x10_harvested");
  CHECK(translated.gridX == 32);
  CHECK(translated.gridY == 32);
  CHECK(translated.physicalGridX == 10);
  CHECK(translated.physicalGridY == 12);
  CHECK(translated.workerRows == 10);
  CHECK(translated.workerCols == 8);
  CHECK(translated.workerCore(0, 0) == CoreCoord{18, 18});
  CHECK(translated.features.nocTranslationIdEnabled);

  SocDescriptor small = mustLoad("wormhole_b0_4x6");
  CHECK(small.workerRows == 4);
  CHECK(small.workerCols == 6);
  CHECK(small.workerCore(3, 5) == CoreCoord{7, 4});

  SocDescriptor one = mustLoad("grayskull_1x1_arch");
  CHECK(one.workerRows == 1);
  CHECK(one.workerCols == 1);
  CHECK(one.dramChannels == std::vector<std::vector<CoreCoord>>{{{1, 0}}});
}

TEST_CASE("the minimal descriptor used by the malformed cases is valid", "[device]") {
  SourceBuffer source("soc.yaml", kMinimal);
  DiagnosticEngine diag;
  auto soc = parseSocDescriptor(source, diag);
  REQUIRE(soc.has_value());
  CHECK(diag.diagnostics().empty());
  CHECK(soc->name == "soc");
  CHECK(soc->workerRows == 2);
  CHECK(soc->workerCols == 2);
  CHECK(soc->ethCores.empty()); // optional lists default to empty

  // A DRAM channel written as a single `x-y` is one subchannel.
  auto flat = parseSocDescriptor(SourceBuffer("flat.yaml", replaceOnce(kMinimal, "[[0-0]]", "[0-0, 0-2, [0-1]]")), diag);
  REQUIRE(flat.has_value());
  CHECK(flat->dramChannels == std::vector<std::vector<CoreCoord>>{{{0, 0}}, {{0, 2}}, {{0, 1}}});
}

TEST_CASE("malformed descriptors give positioned diagnostics, never exceptions", "[device]") {
  SECTION("empty text") {
    auto diag = mustFail("");
    CHECK(diag.diagnostics().front().loc == SourceLoc{1, 1});
  }
  SECTION("only comments") { mustFail("# nothing here\n"); }
  SECTION("grid is a scalar") {
    auto diag = mustFail(replaceOnce(kMinimal, "grid:\n  x_size: 3\n  y_size: 3\n", "grid: 5\n"));
    CHECK(diag.diagnostics().front().loc.line == 1);
  }
  SECTION("grid size zero") {
    auto diag = mustFail(replaceOnce(kMinimal, "x_size: 3", "x_size: 0"));
    CHECK(diag.diagnostics().front().loc == SourceLoc{2, 11});
  }
  SECTION("bad x-y string") {
    auto diag = mustFail(replaceOnce(kMinimal, "2-1,", "2x1,"));
    const Diagnostic& d = diag.diagnostics().front();
    CHECK(d.loc == SourceLoc{7, 9});
    CHECK(d.message.find("2x1") != std::string::npos);
  }
  SECTION("negative and overflowing coordinates") {
    mustFail(replaceOnce(kMinimal, "2-1,", "-2-1,"));
    mustFail(replaceOnce(kMinimal, "2-1,", "2-99999999999999999999,"));
    mustFail(replaceOnce(kMinimal, "2-1,", "2-,"));
    mustFail(replaceOnce(kMinimal, "2-1,", "[2, 1],"));
  }
  SECTION("coordinate outside the grid") {
    auto diag = mustFail(replaceOnce(kMinimal, "2-2]", "2-3]"));
    CHECK(diag.diagnostics().front().loc.line == 8);
  }
  SECTION("core listed twice") {
    auto diag = mustFail(replaceOnce(kMinimal, "[[0-0]]", "[[1-1]]"));
    REQUIRE(diag.diagnostics().size() == 1);
    CHECK(diag.diagnostics().front().notes.size() == 1);
  }
  SECTION("workers do not fill a rectangle") { mustFail(replaceOnce(kMinimal, " 2-2]", "]")); }
  SECTION("no workers") { mustFail(replaceOnce(kMinimal, "[1-1, 2-1,\n   1-2, 2-2]", "[]")); }
  SECTION("no dram channels") { mustFail(replaceOnce(kMinimal, "[[0-0]]", "[]")); }
  SECTION("empty dram channel") { mustFail(replaceOnce(kMinimal, "[[0-0]]", "[[0-0], []]")); }
  SECTION("unknown arch") {
    auto diag = mustFail(replaceOnce(kMinimal, "GRAYSKULL", "QUASAR"));
    CHECK(diag.diagnostics().front().loc == SourceLoc{11, 12});
  }
  SECTION("bad size") { mustFail(replaceOnce(kMinimal, "1048576", "1MiB")); }
  SECTION("missing required key") {
    auto diag = mustFail(replaceOnce(kMinimal, "worker_l1_size: 1048576\n", ""));
    CHECK(diag.diagnostics().front().message.find("worker_l1_size") != std::string::npos);
  }
  SECTION("duplicate key") { mustFail(kMinimal + "arch_name: WORMHOLE\n"); }
  SECTION("top level is a list") { mustFail("- 1\n- 2\n"); }
  SECTION("non-YAML garbage") {
    auto diag = mustFail("grid: [1, 2\n  x_size: {{{\n");
    CHECK(diag.diagnostics().front().message.find("invalid YAML") != std::string::npos);
  }
  SECTION("binary garbage") { mustFail(std::string("\x01\xff\x00{[:\"", 7)); }
  SECTION("deep nesting") { mustFail(std::string(5000, '[')); }
  SECTION("unterminated quote") { mustFail("arch_name: \"GRAYSKULL\n"); }
}

TEST_CASE("unknown keys are warnings", "[device]") {
  SourceBuffer source("soc.yaml", kMinimal + "colour: blue\n");
  DiagnosticEngine diag;
  auto soc = parseSocDescriptor(source, diag);
  CHECK(soc.has_value());
  CHECK(diag.errorCount() == 0);
  REQUIRE(diag.warningCount() == 1);
  CHECK(diag.diagnostics().front().loc == SourceLoc{12, 1});
}

TEST_CASE("arch parameters", "[device]") {
  for (Arch a : {Arch::Grayskull, Arch::WormholeB0, Arch::Blackhole}) {
    const ArchParams& p = archParams(a);
    CHECK(p.arch == a);
    CHECK(p.destTiles16bit == 16);
    CHECK(p.nocCount == 2);
    CHECK(p.maxStreamsPerCore == 64);
    CHECK(maxUblockTiles(a, false) == 8);
    CHECK(maxUblockTiles(a, true) == 4);
    CHECK(destTiles(a, true) == 8);
  }
  // Wormhole (A0): four times the dest of the others: 64 16-bit tiles, ublocks up to 32 (16 with Float32).
  CHECK(archParams(Arch::Wormhole).destTiles16bit == 64);
  CHECK(maxUblockTiles(Arch::Wormhole, false) == 32);
  CHECK(maxUblockTiles(Arch::Wormhole, true) == 16);
  CHECK(archParams(Arch::Grayskull).defaultWorkerL1Size == 1048576);
  CHECK(archParams(Arch::WormholeB0).defaultWorkerL1Size == 1499136);
  CHECK_FALSE(archParams(Arch::Grayskull).supportsIntFormats);
  CHECK(archParams(Arch::WormholeB0).supportsIntFormats);
  CHECK_FALSE(archParams(Arch::Grayskull).destAsFusedInput1);
  CHECK(archParams(Arch::WormholeB0).destAsFusedInput1);
}
