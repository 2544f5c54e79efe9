// The per-core binaries cache and epoch command queue (lib/sim/binaries_cache,
// the firmware's loadFromEpochCommand): image round trip, LRU eviction, the
// command queue's wrapping pointers, the DRAM region and the firmware load.
#include "sim/binaries_cache.hpp"
#include "sim/firmware.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <set>

using namespace tessera;
using namespace tessera::sim;
namespace c = tessera::contract;

namespace {

const SocDescriptor& grayskull() {
  static const SocDescriptor soc = loadBundledDescriptor("grayskull_10x12");
  return soc;
}
const SocDescriptor& wormhole() {
  static const SocDescriptor soc = loadBundledDescriptor("wormhole_b0_8x10");
  return soc;
}

elf::Segment segment(uint32_t vaddr, uint32_t memSize, std::vector<uint8_t> bytes, bool exec) {
  elf::Segment s;
  s.vaddr = vaddr;
  s.memSize = memSize;
  s.bytes = std::move(bytes);
  s.executable = exec;
  s.writable = !exec;
  return s;
}

// A kernel per thread: code at the thread's code region (odd sizes, so the
// records need padding) and a .data/.bss segment in local memory.
BinariesImage sampleImage() {
  BinariesImage img;
  const uint32_t bases[3] = {c::kTrisc0CodeBase, c::kTrisc1CodeBase, c::kTrisc2CodeBase};
  for (uint32_t t = 0; t < 3; ++t) {
    elf::Image k;
    k.entry = bases[t];
    k.machine = 243;
    std::vector<uint8_t> code(13 + t * 7);
    for (size_t i = 0; i < code.size(); ++i) code[i] = static_cast<uint8_t>(i * 31 + t);
    k.segments.push_back(segment(bases[t], static_cast<uint32_t>(code.size()), code, true));
    k.segments.push_back(segment(c::kLocalMemBase, 64, {1, 2, 3}, false));
    img.kernels[t] = k;
  }
  img.blob.push_back({c::kOverlayBlobBase / 4, {0xdeadbeef, 1, 2, 3}});
  img.blob.push_back({c::kOverlayBlobBase / 4 + 100, {7}});
  return img;
}

}  // namespace

TEST_CASE("binaries image: encode and decode round trip", "[sim][binaries]") {
  const BinariesImage img = sampleImage();
  const std::vector<uint8_t> bytes = encodeBinaries(img);
  REQUIRE(bytes.size() % 4 == 0);
  Expected<BinariesImage> back = decodeBinaries(bytes);
  REQUIRE(back);
  for (uint32_t t = 0; t < 3; ++t) {
    REQUIRE(back->kernels[t]);
    CHECK(back->kernels[t]->entry == img.kernels[t]->entry);
    CHECK(back->kernels[t]->machine == 243);
    REQUIRE(back->kernels[t]->segments.size() == 2);
    for (size_t s = 0; s < 2; ++s) {
      const elf::Segment& a = img.kernels[t]->segments[s];
      const elf::Segment& b = back->kernels[t]->segments[s];
      CHECK(a.vaddr == b.vaddr);
      CHECK(a.memSize == b.memSize);
      CHECK(a.bytes == b.bytes);
      CHECK(a.executable == b.executable);
      CHECK(a.writable == b.writable);
    }
  }
  REQUIRE(back->blob.size() == 2);
  CHECK(back->blob[0].wordAddress == img.blob[0].wordAddress);
  CHECK(back->blob[0].words == img.blob[0].words);
  CHECK(back->blob[1].words == img.blob[1].words);
  CHECK(encodeBinaries(*back) == bytes);  // byte-identical

  // A stream-only core: no kernels.
  BinariesImage blobOnly;
  blobOnly.blob = img.blob;
  back = decodeBinaries(encodeBinaries(blobOnly));
  REQUIRE(back);
  CHECK(!back->kernels[0]);
  CHECK(back->blob.size() == 2);

  // A slot read with trailing bytes decodes the image only.
  std::vector<uint8_t> slot = bytes;
  slot.resize(bytes.size() + 64, 0xAA);
  CHECK(decodeBinaries(slot));
}

TEST_CASE("binaries image: damaged images are errors, not crashes", "[sim][binaries]") {
  const std::vector<uint8_t> bytes = encodeBinaries(sampleImage());
  std::vector<uint8_t> flipped = bytes;
  flipped[bytes.size() - 5] ^= 1;
  Expected<BinariesImage> bad = decodeBinaries(flipped);
  REQUIRE(!bad);
  CHECK(bad.error().find("checksum") != std::string::npos);

  std::vector<uint8_t> truncated(bytes.begin(), bytes.end() - 8);
  bad = decodeBinaries(truncated);
  REQUIRE(!bad);
  CHECK(bad.error().find("does not fit") != std::string::npos);

  std::vector<uint8_t> zero(c::kBinariesSlotBytes, 0);
  bad = decodeBinaries(zero);
  REQUIRE(!bad);
  CHECK(bad.error().find("no binaries image") != std::string::npos);

  // Every prefix and every single-byte corruption: a clean answer.
  for (size_t n = 0; n < bytes.size(); n += 3) (void)decodeBinaries(std::span(bytes).first(n));
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> b = bytes;
    b[i] = static_cast<uint8_t>(~b[i]);
    (void)decodeBinaries(b);
  }
}

TEST_CASE("binaries cache table: LRU eviction at 33 epochs", "[sim][binaries]") {
  BinariesCacheTable table;
  const CoreCoord core{1, 1};
  for (uint32_t e = 0; e < 32; ++e) {
    BinariesCacheTable::Use u = table.use(core, e);
    CHECK(!u.hit);
    CHECK(u.slot == e);
    CHECK(!u.evicted);
  }
  CHECK(table.use(core, 0).hit);  // epoch 1 is now the least recently used
  BinariesCacheTable::Use u = table.use(core, 32);
  CHECK(!u.hit);
  REQUIRE(u.evicted);
  CHECK(*u.evicted == 1);
  CHECK(u.slot == 1);
  CHECK(!table.slotOf(core, 1));
  CHECK(table.slotOf(core, 32) == 1u);
  CHECK(table.slotOf(core, 0) == 0u);
  u = table.use(core, 1);  // back again: evicts epoch 2
  CHECK(!u.hit);
  CHECK(*u.evicted == 2);
  // Other cores have their own slots.
  CHECK(!table.use(CoreCoord{2, 1}, 0).hit);
}

TEST_CASE("binaries host: pushes only on a miss, then the command", "[sim][binaries]") {
  std::string error;
  Expected<BinariesLayout> layout = BinariesLayout::forSoc(grayskull());
  REQUIRE(layout);
  Dram dram(grayskull());
  BinariesHost host(*layout);
  const CoreCoord core{1, 1};
  const std::vector<uint8_t> image = encodeBinaries(sampleImage());
  int encodes = 0;
  auto encode = [&](std::vector<uint8_t>& out, std::string&) {
    ++encodes;
    out = image;
    return true;
  };
  const CoreBinariesArea area = *layout->area(core);
  for (uint32_t e = 0; e < 33; ++e) {
    REQUIRE(host.deploy(dram, core, "op", e, 1, encode, error));
    REQUIRE(popEpochCommand(dram, area));
  }
  REQUIRE(host.deploy(dram, core, "op", 32, 4, encode, error));
  const std::optional<c::EpochCommand> cmd = popEpochCommand(dram, area);
  REQUIRE(cmd);
  CHECK(cmd->magic == c::kEpochCommandMagic);
  CHECK(cmd->epochId == 32);
  CHECK(cmd->inputCount == 4);
  CHECK(cmd->binariesSlot == 0);  // epoch 0's slot, the LRU one at epoch 32
  CHECK(cmd->binariesBytes == image.size());
  CHECK(cmd->binariesChannel == area.channel);
  CHECK((uint64_t{cmd->binariesAddressHi} << 32 | cmd->binariesAddressLo) == area.slotAddress(0));
  CHECK(encodes == 33);
  CHECK(host.counters().pushes == 33);
  CHECK(host.counters().pushedBytes == 33 * image.size());
  CHECK(host.counters().hits == 1);
  CHECK(host.counters().evictions == 1);
  CHECK(host.counters().commands == 34);

  // An image larger than a slot names the core, the epoch and both sizes.
  auto huge = [](std::vector<uint8_t>& out, std::string&) {
    out.assign(c::kBinariesSlotBytes + 4, 0);
    return true;
  };
  CHECK(!host.deploy(dram, core, "big", 99, 1, huge, error));
  CHECK(error == "core 'big', temporal epoch 99: binaries image of 131076 bytes is larger than a binaries cache slot "
                 "(131072 bytes)");
}

TEST_CASE("epoch command queue: pointers wrap at 2 x 32, full at 32", "[sim][binaries]") {
  std::string error;
  Expected<BinariesLayout> layout = BinariesLayout::forSoc(grayskull());
  REQUIRE(layout);
  Dram dram(grayskull());
  const CoreBinariesArea area = *layout->area(CoreCoord{12, 11});
  c::EpochCommand cmd{};
  cmd.magic = c::kEpochCommandMagic;
  for (uint32_t i = 0; i < 32; ++i) {
    cmd.epochId = i;
    REQUIRE(pushEpochCommand(dram, area, cmd, error));
  }
  CHECK(pendingEpochCommands(dram, area) == 32);
  CHECK(!pushEpochCommand(dram, area, cmd, error));
  CHECK(error.find("full") != std::string::npos);
  for (uint32_t i = 0; i < 32; ++i) CHECK(popEpochCommand(dram, area)->epochId == i);
  CHECK(!popEpochCommand(dram, area));
  QueueHeader h = readQueueHeader(dram, area.channel, area.commandQueue);
  CHECK(h.rdPtr == 32);
  CHECK(h.wrPtr == 32);
  CHECK(h.slots == 32);
  // 100 more, three at a time: the pointers stay in [0, 64) and wrap.
  uint32_t next = 100, expect = 100;
  for (int round = 0; round < 34; ++round) {
    for (int k = 0; k < 3; ++k) {
      cmd.epochId = next++;
      REQUIRE(pushEpochCommand(dram, area, cmd, error));
    }
    for (int k = 0; k < 3; ++k) CHECK(popEpochCommand(dram, area)->epochId == expect++);
    h = readQueueHeader(dram, area.channel, area.commandQueue);
    CHECK(h.wrPtr < 64);
    CHECK(h.rdPtr == h.wrPtr);
    CHECK(h.wrPtr == static_cast<uint32_t>((32 + 3 * (round + 1)) % 64));
  }
}

TEST_CASE("binaries layout: where the caches and command queues are", "[sim][binaries]") {
  std::string error;
  Expected<BinariesLayout> gs = BinariesLayout::forSoc(grayskull());
  REQUIRE(gs);
  // 120 workers over 8 channels: 15 per channel, 64 KiB of queues + 15 x 4 MiB.
  CHECK(gs->coresPerChannel() == 15);
  CHECK(gs->regionBase() == 0x1000000);
  CHECK(gs->regionBytes() == 0x3D00000);
  CHECK(gs->overlaps(3, 0x4CFFFFF, 1));
  CHECK(!gs->overlaps(3, 0x4D00000, 0x1000));
  CHECK(gs->overlaps(0, 0xFFFFE0, 0x21));
  CHECK(!gs->overlaps(0, 0xFFFFE0, 0x20));
  // Every worker has its own queue and cache, inside the region.
  std::set<std::pair<uint32_t, uint64_t>> seen;
  for (CoreCoord w : grayskull().workers) {
    const CoreBinariesArea a = *gs->area(w);
    CHECK(seen.insert({a.channel, a.cache}).second);
    CHECK(seen.insert({a.channel, a.commandQueue}).second);
    CHECK(gs->overlaps(a.channel, a.commandQueue, kQueueHeaderBytes + 32 * 32));
    CHECK(gs->overlaps(a.channel, a.slotAddress(31), c::kBinariesSlotBytes));
    CHECK(a.slotAddress(31) + c::kBinariesSlotBytes <= gs->regionBase() + gs->regionBytes());
  }
  CHECK(!gs->area(CoreCoord{0, 0}));

  Expected<BinariesLayout> wh = BinariesLayout::forSoc(wormhole());
  REQUIRE(wh);
  CHECK(wh->regionBase() + wh->regionBytes() == wormhole().dramBankSize);  // the top of each channel
}

TEST_CASE("firmware: epoch start from the command queue", "[sim][binaries]") {
  std::string error;
  Expected<BinariesLayout> layout = BinariesLayout::forSoc(grayskull());
  REQUIRE(layout);
  Dram dram(grayskull());
  BinariesHost host(*layout);
  const CoreCoord noc{2, 3};
  BinariesImage img = sampleImage();
  auto encode = [&](std::vector<uint8_t>& out, std::string&) {
    out = encodeBinaries(img);
    return true;
  };
  REQUIRE(host.deploy(dram, noc, "k", 5, 2, encode, error));
  CoreConfig cfg;
  cfg.name = "k";
  TensixCore core(cfg);
  const std::optional<c::EpochCommand> cmd = loadFromEpochCommand(core, dram, *layout->area(noc), error);
  REQUIRE(cmd);
  CHECK(cmd->epochId == 5);
  CHECK(cmd->inputCount == 2);
  for (uint32_t t = 0; t < 3; ++t) {
    CHECK(core.loaded(static_cast<Thread>(t)));
    const elf::Segment& code = img.kernels[t]->segments[0];
    CHECK(std::memcmp(core.l1().data() + code.vaddr, code.bytes.data(), code.bytes.size()) == 0);
    CHECK(core.hart(static_cast<Thread>(t)).pc() == img.kernels[t]->entry);
    CHECK(core.localMemory(static_cast<Thread>(t))[2] == 3);
  }
  uint32_t w = 0;
  std::memcpy(&w, core.l1().data() + c::kOverlayBlobBase, 4);
  CHECK(w == 0xdeadbeef);
  // Nothing more queued: the firmware says so.
  CHECK(!loadFromEpochCommand(core, dram, *layout->area(noc), error));
  CHECK(error.find("core 'k': its epoch command queue") == 0);

  // A slot overwritten behind the host's back is a clean error.
  REQUIRE(host.deploy(dram, noc, "k", 5, 2, encode, error));
  const CoreBinariesArea area = *layout->area(noc);
  dram.write32(area.channel, area.slotAddress(0) + 40, 0x12345678);
  CHECK(!loadFromEpochCommand(core, dram, area, error));
  CHECK(error.find("checksum") != std::string::npos);
}
