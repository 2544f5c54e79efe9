// relayExcessDramReads (lib/pipe/dram_relays.cpp) on hand-made buffers and
// pending pipes of a grayskull chip: which pipes move, to which idle core,
// and what the two pipes carry. Expected values worked out by hand.
#include "pipe/dram_relays.hpp"

#include "device/soc_descriptor.hpp"
#include "netlist/validator.hpp"

#include <catch2/catch.hpp>

using namespace tessera;
using namespace tessera::pipe;
using namespace tessera::pipe::build;

namespace {

struct Fixture {
  netlist::Netlist nl;
  SocDescriptor soc = loadBundledDescriptor(defaultDescriptorName(netlist::Arch::Grayskull));
  netlist::ValidationTarget target{netlist::Arch::Grayskull, &soc};
  DiagnosticEngine diags;
  Compilation out;
  Shared sh{nl, target, *target.cluster, diags, out};
  std::vector<Buf> bufs;
  std::vector<PendingPipe> pending;

  uint32_t core(uint32_t r, uint32_t c) {
    Buf b;
    b.doc.core = pipe::CoreCoord{r, c};
    b.doc.tileSize = 2080;
    bufs.push_back(b);
    return static_cast<uint32_t>(bufs.size() - 1);
  }
  uint32_t dram() {
    Buf b;
    b.place = Buf::Place::Dram;
    b.doc.core = pipe::CoreCoord{255, 255};
    b.doc.tileSize = 2080;
    bufs.push_back(b);
    return static_cast<uint32_t>(bufs.size() - 1);
  }
  // Reads tiles 0..n-1 of `src`, `repeat` times, into `dest`.
  void read(uint32_t src, uint32_t dest, int n, int input, int repeat = 1) {
    PendingPipe p;
    for (int k = 0; k < repeat; ++k)
      for (int i = 0; i < n; ++i) p.tiles.push_back(SourceTile{src, i});
    p.outputs = {dest};
    p.input = input;
    p.comment = "in" + std::to_string(input);
    pending.push_back(p);
  }
  size_t run() {
    DramRelayContext ctx{sh, bufs, pending, 2, 8, 917504, [](const PendingPipe& p) { return p.outputs.front(); }};
    return relayExcessDramReads(ctx);
  }
};

} // namespace

TEST_CASE("a core within its DRAM input streams keeps its reads", "[pipe][dram-relays]") {
  Fixture f;
  const uint32_t q = f.dram();
  for (int i = 0; i < 8; ++i) f.read(q, f.core(0, 0), 1, i);
  CHECK(f.run() == 0);
  CHECK(f.pending.size() == 8);
}

TEST_CASE("the excess DRAM reads go through relays on the nearest idle cores", "[pipe][dram-relays]") {
  Fixture f;
  // Core [0, 1] reads 10 DRAM pipes; [0, 0] and [0, 2] hold buffers (busy).
  f.core(0, 0);
  f.core(0, 2);
  const uint32_t q = f.dram();
  std::vector<uint32_t> ins;
  for (int i = 0; i < 10; ++i) ins.push_back(f.core(0, 1));
  for (int i = 0; i < 9; ++i) f.read(q, ins[i], 2, i);
  f.read(q, ins[9], 2, 9, 3); // the same 2 tiles 3 times: a period of 2
  const size_t before = f.bufs.size();
  // 2 over the limit: inputs 9 and 8 move (last first) to the nearest idle
  // core: [1, 1] (distance 1; [0, 0] and [0, 2] are busy), which has room
  // for both.
  CHECK(f.run() == 2);
  REQUIRE(f.bufs.size() == before + 2);
  REQUIRE(f.pending.size() == 12);
  const Buf& r9 = f.bufs[before];
  const Buf& r8 = f.bufs[before + 1];
  CHECK(r9.doc.bufferType == BufferType::Relay);
  CHECK((r9.doc.core.r == 1 && r9.doc.core.c == 1));
  CHECK((r8.doc.core.r == 1 && r8.doc.core.c == 1));
  CHECK(r9.doc.tilesPerInput == 2); // one period
  CHECK(r9.doc.epochTiles == 4);    // 2 inputs
  CHECK(r9.doc.sizeTiles == 2);     // min(period, 8)
  // Input 9 now reads its relay's 2 tiles 3 times, into the same buffer.
  const uint32_t h9 = static_cast<uint32_t>(before);
  CHECK(f.pending[9].outputs == std::vector<uint32_t>{ins[9]});
  const std::vector<SourceTile> relayed{{h9, 0}, {h9, 1}, {h9, 0}, {h9, 1}, {h9, 0}, {h9, 1}};
  CHECK(f.pending[9].tiles == relayed);
  CHECK(f.pending[9].comment == "in9; through the relay at [r=1, c=1] ([r=0, c=1] has no DRAM input stream left)");
  // The relay reads appended: input 9's first, one period of DRAM tiles each.
  CHECK(f.pending[10].outputs == std::vector<uint32_t>{h9});
  const std::vector<SourceTile> period{{q, 0}, {q, 1}};
  CHECK(f.pending[10].tiles == period);
  CHECK(f.pending[11].outputs == std::vector<uint32_t>{h9 + 1});
  CHECK(f.pending[11].input == 8);
  // Inputs 0..7 untouched.
  CHECK(f.pending[7].tiles == period);
}

TEST_CASE("pipes with a tile from a core are not relayed", "[pipe][dram-relays]") {
  Fixture f;
  const uint32_t q = f.dram();
  const uint32_t packer = f.core(5, 5);
  const uint32_t dest = f.core(0, 0);
  for (int i = 0; i < 9; ++i) {
    f.read(q, dest, 1, i);
    f.pending.back().tiles.push_back(SourceTile{packer, 0}); // a gather of DRAM and a packer
  }
  CHECK(f.run() == 0);
}
