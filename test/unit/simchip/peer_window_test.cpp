// Another chip's DRAM through the PCIe core (chips without ethernet,
// docs/cluster.md "Through the host"; lib/sim/dram.hpp peer windows).
#include "simchip_helpers.hpp"

using namespace simchip;

namespace {
// Tessera's peer encoding, worked out by hand for grayskull's PCIe core 0-4
// ((4 << 6 | 0) << 32 = 0x100'0000'0000): chip 1 -> (1 + 1) << 52, channel 5 -> 5 << 48.
constexpr uint64_t kChip1Chan5 = 0x0025'0100'0000'0000ull;
}  // namespace

TEST_CASE("peer window: NOC addresses of other chips' DRAM on the PCIe core", "[simchip][host][peer]") {
  const SocDescriptor& soc = grayskull();
  std::optional<DramLocation> loc = decodeDramNocAddress(soc, kChip1Chan5 | 0x3000'0000);
  REQUIRE(loc);
  CHECK(loc->host);                    // timed on the PCIe link, kept in the chip's host-memory store
  CHECK(loc->channel == 4 + 1 * 8 + 5);  // after the 4 host memories, 8 channels per chip
  CHECK(loc->address == 0x3000'0000);
  CHECK(loc->core == CoreCoord{0, 4});
  CHECK(peerWindowChannel(1, 5) == 4u + 8u + 5u);
  CHECK(peerWindowChannel(0, 0) == 4u);
  CHECK_FALSE(peerWindowChannel(kPeerWindowChips, 0));
  CHECK_FALSE(peerWindowChannel(0, 8));
  // Channel 8 or more, or a peer on a coordinate that is not the PCIe core: no location.
  CHECK_FALSE(decodeDramNocAddress(soc, 0x0028'0100'0000'0000ull));
  CHECK_FALSE(decodeDramNocAddress(soc, (kChip1Chan5 & ~0xFFF'0000'0000ull) | dramNocAddress(soc, 0, 0)));
  // Bits 47:44 stay invalid.
  CHECK_FALSE(decodeDramNocAddress(soc, 0x0000'1100'0000'0000ull));
}

TEST_CASE("peer window: a packer writes another chip's DRAM queue through PCIe", "[simchip][host][peer]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  // Chip 1's channel 5 at 0x8000 as this chip's PCIe core reaches it.
  const Queue q{*peerWindowChannel(1, 5), 0x8000, 4, 2};
  QueueHeader h;
  h.slots = 4;
  REQUIRE(writeQueueHeader(chip.hostMemory(), q.channel, q.address, h));
  loadBlob(chip, 2, 3, {streamOf(2, 3, 24, {packerToDram(4, kBuf0, 4, kChip1Chan5 | 0x8000, 4, 2)})});
  prePush(chip, 2, 3, 16, kBuf0, 4, {10, 11, 12, 13});
  ChipRunResult r = run(chip);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(isPattern(readDramTile(chip.hostMemory(), q, 0, 0), 10));
  CHECK(isPattern(readDramTile(chip.hostMemory(), q, 0, 1), 11));
  CHECK(isPattern(readDramTile(chip.hostMemory(), q, 1, 0), 12));
  CHECK(isPattern(readDramTile(chip.hostMemory(), q, 1, 1), 13));
  CHECK(readQueueHeader(chip.hostMemory(), q.channel, q.address).wrPtr == 2);
  CHECK(chip.dram().residentBytes() == 0);  // this chip's own DRAM untouched
}
