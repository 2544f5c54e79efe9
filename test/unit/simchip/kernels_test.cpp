// The chip with kernels: RV32 programs (test/unit/sim/Inputs, assembled and
// linked with LLVM 14 while the test runs) on cores whose operands the stream
// engine fills and drains. core_copy.s (unpack thread) copies
// EpochInfo.inputCount tiles from operand 0 to operand 16 with loads and
// stores, waiting on the tile counters like a real kernel; math and pack
// run core_exit.s.
#include "simchip_helpers.hpp"

#include "../sim/llvm_tools.hpp"
#include "sim/binaries_cache.hpp"
#include "sim/epoch_runner.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <tuple>

using namespace simchip;
namespace c = tessera::contract;

namespace {

// Links Inputs/<name> for `thread`'s code region into an ELF file in `dir`.
std::string linkKernel(const sim_test::TempDir& dir, const std::string& name, Thread thread, const std::string& out) {
  sim_test::requireTool(sim_test::kLlvmMc, "llvm-mc-14");
  sim_test::requireTool(sim_test::kLld, "ld.lld-14");
  const Region code = codeRegion(thread);
  const std::string wrapper = dir.file(out + ".s"), obj = dir.file(out + ".o"), script = dir.file(out + ".ld");
  {
    std::ofstream w(wrapper);
    w << ".globl _start\n_start:\n.include \"" << sim_test::input(name) << "\"\n";
    std::ofstream l(script);
    l << "ENTRY(_start)\nMEMORY { CODE (rx) : ORIGIN = " << code.base << ", LENGTH = " << code.size
      << "\n LOCAL (rw) : ORIGIN = 0xFFB00000, LENGTH = 0x1000 }\n"
         "SECTIONS { .text : { *(.text .text.*) *(.rodata .rodata.*) } > CODE\n"
         " .data : { *(.data .data.* .bss .bss.*) } > LOCAL }\n";
  }
  sim_test::run(std::string(sim_test::kLlvmMc) + " -triple=riscv32 -mattr=+m,-relax -filetype=obj '" + wrapper +
                "' -o '" + obj + "'");
  const std::string elf = dir.file(out);
  sim_test::run(std::string(sim_test::kLld) + " -T '" + script + "' '" + obj + "' -o '" + elf + "'");
  return elf;
}

// A kernel directory: unpack.elf = `unpack`, math.elf and pack.elf = core_exit.s.
std::string kernelDir(const sim_test::TempDir& dir, const std::string& sub, const std::string& unpack) {
  const std::string d = dir.file(sub);
  std::filesystem::create_directories(d);
  const std::string u = linkKernel(dir, unpack, c::kUnpackThread, sub + "/unpack.elf");
  const std::string m = linkKernel(dir, "core_exit.s", c::kMathThread, sub + "/math.elf");
  const std::string p = linkKernel(dir, "core_exit.s", c::kPackThread, sub + "/pack.elf");
  (void)u, (void)m, (void)p;
  return d;
}

}  // namespace

TEST_CASE("kernels: DRAM -> copy kernel -> remote copy kernel -> DRAM, rings smaller than the data", "[simchip][kernels]") {
  sim_test::TempDir dir;
  const std::string copy = kernelDir(dir, "copy", "core_copy.s");
  Chip chip(grayskull());
  // Input queue: channel 0, 3 slots of 2 tiles, all full; output queue: channel 5, empty.
  const Queue in{0, 0x10000, 3, 2};
  const Queue out{5, 0x20000, 3, 2};
  QueueHeader hin;
  hin.wrPtr = 3;
  chip.beginEpoch();  // runEpoch(EpochRun) begins again; DRAM is kept
  REQUIRE(writeQueueHeader(chip.dram(), in.channel, in.address, hin));
  REQUIRE(writeQueueHeader(chip.dram(), out.channel, out.address, QueueHeader{}));
  for (uint32_t s = 0; s < 3; ++s)
    for (uint32_t t = 0; t < 2; ++t) writeDramTile(chip.dram(), in, s, t, 60 + 2 * s + t);

  auto blobWords = [](int x, int y, std::vector<Stream> streams) {
    CoreBlob b;
    b.x = static_cast<uint32_t>(x);
    b.y = static_cast<uint32_t>(y);
    b.streams = std::move(streams);
    return blob::encodeCoreBlob(b);
  };
  EpochRun run;
  run.options.epoch.inputCount = 6;
  // 1-1: stream 8 reads the queue (2-slot ring, 3 phases of one entry), stream 24 sends to 2-2.
  run.cores.push_back(EpochCore{
      {1, 1}, "op 'first'", copy, "",
      blobWords(1, 1,
                {streamOf(1, 1, 8,
                          {dramToKernel(2, kBuf0, 2, dramNocAddress(grayskull(), 0, in.address), 3, 2),
                           dramToKernel(2, kBuf0, 2, dramNocAddress(grayskull(), 0, in.address), 3, 2),
                           dramToKernel(2, kBuf0, 2, dramNocAddress(grayskull(), 0, in.address), 3, 2)}),
                 streamOf(1, 1, 24, {packerToRemote(6, kBuf1, 3, {sname(2, 2, 8)})})})});
  // 2-2: stream 8 receives (2 slots), stream 24 writes the output queue.
  run.cores.push_back(EpochCore{
      {2, 2}, "op 'second'", copy, "",
      blobWords(2, 2,
                {streamOf(2, 2, 8, {remoteToKernel(6, kBuf0, 2, {sname(1, 1, 24)})}),
                 streamOf(2, 2, 24, {packerToDram(6, kBuf1, 3, dramNocAddress(grayskull(), 5, out.address), 3, 2)})})});
  ChipRunResult r = runEpoch(chip, run);
  INFO(r.message);
  REQUIRE(r.stop == ChipStop::Done);
  CHECK(r.ok());
  for (uint32_t s = 0; s < 3; ++s)
    for (uint32_t t = 0; t < 2; ++t) {
      INFO("output slot " << s << " tile " << t);
      CHECK(isPattern(readDramTile(chip.dram(), out, s, t), 60 + 2 * s + t));
    }
  const QueueHeader hout = readQueueHeader(chip.dram(), out.channel, out.address);
  CHECK(hout.wrPtr == 3);
  CHECK(readQueueHeader(chip.dram(), in.channel, in.address).rdPtr == 3);  // its only reader left all 3 slots
  REQUIRE(r.cores.size() == 2);
  CHECK(r.cores[0].name == "op 'first'");
  CHECK(r.cores[0].kernel);
  CHECK(r.cores[0].streams == 2);
  CHECK(r.cores[1].cycles == r.cycles);  // the last core writes the output
  CHECK(r.cores[0].cycles < r.cores[1].cycles);
  CHECK(r.streams.nocTiles == 6);
  CHECK(r.streams.dramReadTiles == 6);
  CHECK(r.streams.dramWriteTiles == 6);
  // The kernels' operand tables came from the blobs.
  CHECK(chip.core({2, 2})->operand(16).baseAddress == kBuf1);
  CHECK(chip.core({2, 2})->operand(16).capacityTiles == 3);
}

TEST_CASE("kernels: a kernel waiting for DRAM data that never comes is a hang naming stream and thread", "[simchip][kernels][hang]") {
  sim_test::TempDir dir;
  const std::string copy = kernelDir(dir, "copy", "core_copy.s");
  Chip chip(grayskull());
  chip.beginEpoch();
  const Queue in{0, 0x10000, 2, 1};
  QueueHeader h;
  h.wrPtr = 2;  // 2 tiles, the kernel wants 4
  REQUIRE(writeQueueHeader(chip.dram(), in.channel, in.address, h));
  std::string error;
  REQUIRE(chip.loadKernelDir({1, 1}, copy, error));
  loadBlob(chip, 1, 1,
           {streamOf(1, 1, 8, {dramToKernel(1, kBuf0, 2, dramNocAddress(grayskull(), 0, in.address), 2, 1)}, 4),
            streamOf(1, 1, 24, {packerToDram(4, kBuf1, 4, dramNocAddress(grayskull(), 0, 0x40000), 4, 1)})});
  ChipRunOptions options;
  options.epoch.inputCount = 4;
  ChipRunResult r = chip.runEpoch(options);
  INFO(r.message);
  REQUIRE(r.stop == ChipStop::Hang);
  CHECK(contains(r.message, "waiting streams:"));
  CHECK(contains(r.message, "core '1-1' stream 8 phase 0 (phase_id 0, iteration 3 of 4, 0 of 1 tiles): waits for DRAM data"));
  CHECK(contains(r.message, "core '1-1' stream 24 phase 0 (phase_id 0, iteration 1 of 1, 2 of 4 tiles): waits for data: the packer"));
  CHECK(contains(r.message, "waiting threads:"));
  CHECK(contains(r.message, "unpack (TRISC0) pc 0x"));
  CHECK(contains(r.message, "waits for operand 0 tile counters (received 2, acked 2, capacity 2)"));
}

TEST_CASE("kernels: a hart fault stops the chip with the core's name", "[simchip][kernels][fault]") {
  Chip chip(grayskull());
  chip.beginEpoch();
  TensixCore* core = chip.core({3, 3});
  REQUIRE(core);
  chip.setCoreName({3, 3}, "op 'bad'");
  elf::Image image;
  image.machine = 243;
  image.entry = c::kTrisc0CodeBase;
  elf::Segment seg;
  seg.vaddr = image.entry;
  const uint32_t lwMisaligned = 0x00202083;  // lw x1, 2(x0)
  seg.bytes.resize(4);
  std::memcpy(seg.bytes.data(), &lwMisaligned, 4);
  seg.memSize = 4;
  image.segments.push_back(seg);
  std::string error;
  REQUIRE(core->loadProgram(c::kUnpackThread, image, error));
  ChipRunResult r = chip.runEpoch();
  REQUIRE(r.stop == ChipStop::Fault);
  CHECK(r.faultCategory == "misaligned-load");
  CHECK(r.faultCore == "op 'bad'");
  CHECK(contains(r.message, "core 'op 'bad'': misaligned-load in thread unpack (TRISC0) at pc 0x4000: address 0x2"));
}

TEST_CASE("kernels: loading problems are reported with the core and file", "[simchip][kernels]") {
  sim_test::TempDir dir;
  Chip chip(grayskull());
  EpochRun run;
  run.cores.push_back(EpochCore{{1, 1}, "op 'x'", dir.file("nowhere"), "", {}});
  ChipRunResult r = runEpoch(chip, run);
  REQUIRE(r.stop == ChipStop::Fault);
  CHECK(r.faultCategory == "load");
  CHECK(contains(r.message, "core 'op 'x'': unpack thread: '"));
  CHECK(contains(r.message, "cannot open the file"));

  EpochRun notWorker;
  notWorker.cores.push_back(EpochCore{{0, 0}, "", "", "", {}});
  r = runEpoch(chip, notWorker);
  REQUIRE(r.stop == ChipStop::Fault);
  CHECK(contains(r.message, "core 0-0: not a functional worker of grayskull_10x12"));

  EpochRun badHex;
  const std::string hexPath = dir.file("bad.hex");
  std::ofstream(hexPath) << "@00004800\nnot-hex\n";
  badHex.cores.push_back(EpochCore{{1, 1}, "", "", hexPath, {}});
  r = runEpoch(chip, badHex);
  REQUIRE(r.stop == ChipStop::Fault);
  CHECK(contains(r.message, hexPath));
  CHECK(contains(r.message, "line 2"));
}

TEST_CASE("epoch runner: tensors through DRAM queue buffers", "[simchip][dram]") {
  Chip chip(grayskull());
  formats::Blocking b;
  b.gridR = 1;
  b.gridC = 2;
  b.mblockR = 1;
  b.mblockC = 2;
  formats::Tensor t(1, 1, 32, 128);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(i % 251) - 100.0f;
  const std::vector<QueueBufferLoc> buffers = {{0, 0x1000}, {1, 0x1000}};
  std::string error;
  REQUIRE(writeTensorEntry(chip.dram(), buffers, 1, t, 0, b, DataFormat::Float16_b, error));
  // Core 1's second tile is tile column 3 of the tensor: value (r, c) at 32*3 + c.
  std::vector<uint8_t> entry = readQueueEntry(chip.dram(), buffers[1], 1, 2 * kTile);
  REQUIRE(entry.size() == 2 * kTile);
  std::array<float, 1024> values{};
  formats::unpackTile(DataFormat::Float16_b, std::span<const uint8_t>(entry).subspan(kTile, kTile), values);
  CHECK(values[0] == t.at(0, 0, 0, 96));
  CHECK(values[33] == t.at(0, 0, 1, 97));
  formats::Tensor back(1, 1, 32, 128);
  REQUIRE(readTensorEntry(chip.dram(), buffers, 1, b, DataFormat::Float16_b, back, 0, error));
  CHECK(back.data == t.data);  // integers below 256 are exact in Float16_b
  CHECK_FALSE(writeTensorEntry(chip.dram(), {buffers[0]}, 1, t, 0, b, DataFormat::Float16_b, error));
}

// The same two-core pipeline with the binaries pushed into the cores' DRAM
// caches and epoch command queues (docs/device-model.md, "Binaries cache and
// epoch commands"): the firmware loads them from DRAM, the epoch info is the
// commands', the harts start when the images have arrived, and a second run
// of the epoch hits the caches.
TEST_CASE("kernels: binaries from the DRAM cache through epoch commands", "[simchip][kernels][binaries]") {
  sim_test::TempDir dir;
  const std::string copy = kernelDir(dir, "copy", "core_copy.s");
  Chip chip(grayskull());
  Expected<BinariesLayout> layout = BinariesLayout::forSoc(grayskull());
  REQUIRE(layout);
  std::string error;
  BinariesHost host(*layout);
  const Queue in{0, 0x10000, 3, 2};
  const Queue out{5, 0x20000, 3, 2};
  auto blobOf = [](int x, int y, std::vector<Stream> streams) {
    CoreBlob b;
    b.x = static_cast<uint32_t>(x);
    b.y = static_cast<uint32_t>(y);
    b.streams = std::move(streams);
    return std::vector<blob::HexSegment>{{c::kOverlayBlobBase / 4, blob::encodeCoreBlob(b)}};
  };
  const uint64_t inAddr = dramNocAddress(grayskull(), 0, in.address);
  const std::vector<blob::HexSegment> first =
      blobOf(1, 1, {streamOf(1, 1, 8, {dramToKernel(2, kBuf0, 2, inAddr, 3, 2), dramToKernel(2, kBuf0, 2, inAddr, 3, 2),
                                        dramToKernel(2, kBuf0, 2, inAddr, 3, 2)}),
                    streamOf(1, 1, 24, {packerToRemote(6, kBuf1, 3, {sname(2, 2, 8)})})});
  const std::vector<blob::HexSegment> second =
      blobOf(2, 2, {streamOf(2, 2, 8, {remoteToKernel(6, kBuf0, 2, {sname(1, 1, 24)})}),
                    streamOf(2, 2, 24, {packerToDram(6, kBuf1, 3, dramNocAddress(grayskull(), 5, out.address), 3, 2)})});

  for (int runIndex = 0; runIndex < 2; ++runIndex) {
    INFO("run " << runIndex);
    QueueHeader hin;
    hin.wrPtr = 3;
    REQUIRE(writeQueueHeader(chip.dram(), in.channel, in.address, hin));
    REQUIRE(writeQueueHeader(chip.dram(), out.channel, out.address, QueueHeader{}));
    for (uint32_t s = 0; s < 3; ++s)
      for (uint32_t t = 0; t < 2; ++t) writeDramTile(chip.dram(), in, s, t, 60 + 2 * s + t);
    EpochRun run;
    run.options.epoch.inputCount = 0;  // the commands say 6
    for (auto [noc, name, blob] : {std::tuple{CoreCoord{1, 1}, "first", &first}, std::tuple{CoreCoord{2, 2}, "second", &second}}) {
      auto encode = [&, blob = blob](std::vector<uint8_t>& bytes, std::string& why) {
        BinariesImage image;
        if (!readKernelDir(copy, image, why)) return false;
        image.blob = *blob;
        bytes = encodeBinaries(image);
        return true;
      };
      REQUIRE(host.deploy(chip.dram(), noc, name, 3, 6, encode, error));
      EpochCore ec;
      ec.noc = noc;
      ec.name = name;
      ec.fromEpochCommand = true;
      run.cores.push_back(ec);
    }
    ChipRunResult r = runEpoch(chip, run);
    INFO(r.message);
    REQUIRE(r.stop == ChipStop::Done);
    CHECK(r.ok());
    for (uint32_t s = 0; s < 3; ++s)
      for (uint32_t t = 0; t < 2; ++t) CHECK(isPattern(readDramTile(chip.dram(), out, s, t), 60 + 2 * s + t));
    CHECK(readQueueHeader(chip.dram(), out.channel, out.address).wrPtr == 3);
    // Both images read from DRAM before the harts started.
    CHECK(r.binariesReadBytes == host.counters().pushedBytes);
    CHECK(r.binariesCycles > 120);  // at least the DRAM latency
    REQUIRE(r.cores.size() == 2);
    for (const HartReport& h : r.cores[0].harts.harts) CHECK(h.cycles >= 256);  // started a round late (or more)
  }
  CHECK(host.counters().pushes == 2);
  CHECK(host.counters().hits == 2);
  CHECK(host.counters().commands == 4);
}
