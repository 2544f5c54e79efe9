// Streams and phases per core, worked by hand for each pipe shape
// (docs/pipegen.md). Coordinates: see pipegen_test_util.hpp.
#include "pipegen_test_util.hpp"

#include "device/device_contract.h"

using namespace tessera;
using namespace tessera::pipegen;
using namespace pgtest;
using blob::StreamPhase;

namespace {

constexpr uint32_t kTop = 0x100000; // grayskull L1 size
const std::string kScatter2 = "  is_scatter: 1\n  replicate: 2\n";

void checkRemote(const StreamPhase& ph, uint32_t msgs, uint32_t iters) {
  CHECK(ph.numMsgs == msgs);
  CHECK(ph.numItersInEpoch == iters);
  CHECK(ph.msgSize == 2080);
}

} // namespace

TEST_CASE("unicast packer -> unpacker", "[pipegen][streams]") {
  // 8 tiles in chunks of 2 (the packer's period): 4 rounds of one 2-tile phase.
  Run r = run(packer(100, 0, 0, 4, 2, 8) + unpacker(200, 0, 1, 0, 4, 8) + pipeDoc(300, "[100]", "[200]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  CHECK(r.diags.warningCount() == 0);
  CHECK(streamCount(r) == 2);
  const auto* s = stream(r, 1, 1, 24);
  REQUIRE(s);
  REQUIRE(s->phases.size() == 1);
  const StreamPhase& tx = s->phases[0];
  checkRemote(tx, 2, 4);
  CHECK(tx.sourceEndpoint);
  CHECK(tx.remoteReceiver);
  CHECK_FALSE(tx.remoteSource);
  CHECK(tx.dest == std::vector<blob::StreamName>{sn(1, 2, 8)});
  CHECK(tx.srcPeriodTiles == 0); // FIFO
  CHECK(tx.bufSize == 4 * 2080);
  CHECK(tx.bufAddr == kTop - 4 * 2080);
  CHECK(tx.bufId == 100);
  CHECK(tx.pipeId == 300);
  CHECK(tx.dataFormat == 1); // 2080-byte tiles, no data_format: Float16
  const auto* d = stream(r, 1, 2, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 1);
  const StreamPhase& rx = d->phases[0];
  checkRemote(rx, 2, 4);
  CHECK(rx.remoteSource);
  CHECK(rx.localReceiver);
  CHECK(rx.src == std::vector<blob::StreamName>{sn(1, 1, 24)});
  CHECK(rx.bufAddr == kTop - 4 * 2080);
  CHECK(rx.bufId == 200);
}

TEST_CASE("gather: one phase per input chunk, in input_list order", "[pipegen][streams]") {
  Run r = run(packer(100, 0, 0, 2, 1, 4) + packer(101, 0, 1, 2, 1, 4) + unpacker(200, 1, 0, 0, 4, 8) +
              pipeDoc(300, "[100, 101]", "[200]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* d = stream(r, 2, 1, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 2);
  CHECK(d->phases[0].src == std::vector<blob::StreamName>{sn(1, 1, 24)});
  CHECK(d->phases[1].src == std::vector<blob::StreamName>{sn(1, 2, 24)});
  checkRemote(d->phases[0], 1, 4);
  checkRemote(d->phases[1], 1, 4);
  for (auto [y, x] : {std::pair{1u, 1u}, {1u, 2u}}) {
    const auto* s = stream(r, y, x, 24);
    REQUIRE(s);
    REQUIRE(s->phases.size() == 1);
    checkRemote(s->phases[0], 1, 4);
    CHECK(s->phases[0].dest == std::vector<blob::StreamName>{sn(2, 1, 8)});
  }
}

TEST_CASE("multicast: one sender phase, several dest", "[pipegen][streams]") {
  Run r = run(packer(100, 0, 0, 2, 2, 4) + unpacker(200, 0, 1, 0, 2, 4) + unpacker(201, 0, 2, 1, 2, 4) +
              pipeDoc(300, "[100]", "[200, 201]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* s = stream(r, 1, 1, 24);
  REQUIRE(s);
  REQUIRE(s->phases.size() == 1);
  checkRemote(s->phases[0], 2, 2);
  CHECK(s->phases[0].dest == std::vector<blob::StreamName>{sn(1, 2, 8), sn(1, 3, 9)});
  for (const auto* d : {stream(r, 1, 2, 8), stream(r, 1, 3, 9)}) {
    REQUIRE(d);
    REQUIRE(d->phases.size() == 1);
    checkRemote(d->phases[0], 2, 2);
    CHECK(d->phases[0].src == std::vector<blob::StreamName>{sn(1, 1, 24)});
  }
}

TEST_CASE("scatter over time: nested output_list, passes round robin", "[pipegen][streams]") {
  SECTION("even number of passes: the two-pass cycle repeats") {
    Run r = run(packer(100, 0, 0, 4, 2, 8) + unpacker(200, 0, 1, 0, 2, 4) + unpacker(201, 0, 2, 0, 2, 4) +
                pipeDoc(300, "[100]", "[[200], [201]]"));
    INFO(r.messages());
    REQUIRE(r.gen);
    CHECK(r.diags.warningCount() == 0);
    const auto* s = stream(r, 1, 1, 24);
    REQUIRE(s);
    REQUIRE(s->phases.size() == 2);
    CHECK(s->phases[0].dest == std::vector<blob::StreamName>{sn(1, 2, 8)});
    CHECK(s->phases[1].dest == std::vector<blob::StreamName>{sn(1, 3, 8)});
    checkRemote(s->phases[0], 2, 2);
    for (const auto* d : {stream(r, 1, 2, 8), stream(r, 1, 3, 8)}) {
      REQUIRE(d);
      REQUIRE(d->phases.size() == 1);
      checkRemote(d->phases[0], 2, 2);
    }
  }
  SECTION("odd number of passes: unrolled, the first group gets one more") {
    Run r = run(packer(100, 0, 0, 4, 2, 6) + unpacker(200, 0, 1, 0, 2, 4) + unpacker(201, 0, 2, 0, 2, 2) +
                pipeDoc(300, "[100]", "[[200], [201]]"));
    INFO(r.messages());
    REQUIRE(r.gen);
    CHECK(r.diags.warningCount() == 0);
    const auto* s = stream(r, 1, 1, 24);
    REQUIRE(s);
    REQUIRE(s->phases.size() == 3);
    CHECK(s->phases[0].dest == std::vector<blob::StreamName>{sn(1, 2, 8)});
    CHECK(s->phases[1].dest == std::vector<blob::StreamName>{sn(1, 3, 8)});
    CHECK(s->phases[2].dest == std::vector<blob::StreamName>{sn(1, 2, 8)});
    CHECK(s->phases[0].numItersInEpoch == 1);
    const auto* a = stream(r, 1, 2, 8);
    REQUIRE(a);
    REQUIRE(a->phases.size() == 1);
    checkRemote(a->phases[0], 2, 2);
    const auto* b = stream(r, 1, 3, 8);
    REQUIRE(b);
    checkRemote(b->phases[0], 2, 1);
  }
}

TEST_CASE("scatter buffers: windowed sends out of order", "[pipegen][streams]") {
  // Period 2 (sg 1 x replicate 2), 8 tiles = 4 periods; the pipe reads tile 1
  // then tile 0 of each period.
  Run r = run(packer(100, 0, 0, 2, 1, 4, kScatter2) + unpacker(200, 0, 1, 0, 2, 8) + pipeDoc(300, "[101, 100]", "[200]"),
              chunkPerPhase());
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* s = stream(r, 1, 1, 24);
  REQUIRE(s);
  REQUIRE(s->phases.size() == 2);
  CHECK(s->phases[0].srcPeriodTiles == 2);
  CHECK(s->phases[0].srcTileOffset == 1);
  CHECK_FALSE(s->phases[0].srcPeriodDone);
  CHECK(s->phases[1].srcTileOffset == 0);
  CHECK(s->phases[1].srcPeriodDone);
  checkRemote(s->phases[0], 1, 4);
  CHECK(s->phases[0].bufSize == 2 * 2080); // the whole period stays in the ring
  // The receiver sees 8 one-tile phases from the same sender: one phase, 8 times.
  const auto* d = stream(r, 1, 2, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 1);
  checkRemote(d->phases[0], 1, 8);
}

TEST_CASE("pipe_periodic_repeat re-sends each period", "[pipegen][streams]") {
  // A 1-tile period read twice per pass, each pass repeated twice: 2 periods x 2 passes x 2 tiles.
  Run r = run(packer(100, 0, 0, 2, 1, 2, "  is_scatter: 1\n  replicate: 1\n") + unpacker(200, 0, 1, 0, 2, 8) +
              pipeDoc(300, "[100, 100]", "[200]", "  pipe_periodic_repeat: 2\n"), chunkPerPhase());
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* s = stream(r, 1, 1, 24);
  REQUIRE(s);
  REQUIRE(s->phases.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(s->phases[i].srcTileOffset == 0);
    CHECK(s->phases[i].srcPeriodDone == (i == 3));
    checkRemote(s->phases[i], 1, 2);
  }
}

TEST_CASE("forks: one packer, several pipes", "[pipegen][streams]") {
  // Every pipe after the first gets its own fork stream on the packer's core
  // (lowest free id: 0) over the packer's buffer, with its own phases.
  auto checkFork = [](const blob::Stream* op, const blob::Stream* fork) {
    REQUIRE(op);
    REQUIRE(fork);
    for (const auto& ph : fork->phases) {
      CHECK(ph.sourceEndpoint);
      CHECK(ph.bufAddr == op->phases[0].bufAddr);
      CHECK(ph.bufSize == op->phases[0].bufSize);
    }
  };
  SECTION("the same tiles to every pipe: a stream per pipe") {
    Run r = run(packer(100, 0, 0, 2, 2, 4) + unpacker(200, 0, 1, 0, 2, 4) + unpacker(201, 0, 2, 0, 2, 4) +
                pipeDoc(300, "[100]", "[200]") + pipeDoc(301, "[100]", "[201]"));
    INFO(r.messages());
    REQUIRE(r.gen);
    const auto* s = stream(r, 1, 1, 24);
    const auto* f = stream(r, 1, 1, 0);
    checkFork(s, f);
    REQUIRE(s->phases.size() == 1);
    CHECK(s->phases[0].dest == std::vector<blob::StreamName>{sn(1, 2, 8)});
    REQUIRE(f->phases.size() == 1);
    CHECK(f->phases[0].dest == std::vector<blob::StreamName>{sn(1, 3, 8)});
    CHECK(f->phases[0].pipeId == 301);
    CHECK(stream(r, 1, 2, 8)->phases[0].pipeId == 300);
    CHECK(stream(r, 1, 3, 8)->phases[0].src == std::vector<blob::StreamName>{sn(1, 1, 0)});
  }
  SECTION("each pipe its part of the period: each stream a window") {
    Run r = run(packer(100, 0, 0, 2, 1, 4, kScatter2) + unpacker(200, 0, 1, 0, 2, 4) + unpacker(201, 0, 2, 0, 2, 4) +
                pipeDoc(300, "[100]", "[200]") + pipeDoc(301, "[101]", "[201]"));
    INFO(r.messages());
    REQUIRE(r.gen);
    const auto* s = stream(r, 1, 1, 24);
    const auto* f = stream(r, 1, 1, 0);
    checkFork(s, f);
    REQUIRE(s->phases.size() == 1);
    REQUIRE(f->phases.size() == 1);
    CHECK(s->phases[0].dest == std::vector<blob::StreamName>{sn(1, 2, 8)});
    CHECK(f->phases[0].dest == std::vector<blob::StreamName>{sn(1, 3, 8)});
    CHECK(s->phases[0].srcPeriodTiles == f->phases[0].srcPeriodTiles);
    CHECK(s->phases[0].srcTileOffset != f->phases[0].srcTileOffset);
    CHECK(s->phases[0].srcPeriodDone);
    CHECK(f->phases[0].srcPeriodDone);
  }
  SECTION("a fork into DRAM and into an op: one op reader keeps one stream, phases alternate destinations") {
    // A DRAM write never waits on a join, so no fork stream is spent on it.
    Run r = run(packer(100, 0, 0, 2, 2, 4) + unpacker(200, 0, 1, 0, 2, 4) + queue(300, 2, 2, 4, 2, 0, 0x1000) +
                pipeDoc(400, "[100]", "[200]") + pipeDoc(401, "[100]", "[300]"));
    INFO(r.messages());
    REQUIRE(r.gen);
    CHECK(streamCount(r) == 2); // no writer stream: the packer writes DRAM itself
    const auto* s = stream(r, 1, 1, 24);
    REQUIRE(s);
    REQUIRE(s->phases.size() == 2);
    CHECK(s->phases[0].remoteReceiver);
    CHECK(s->phases[0].pipeId == 400);
    CHECK(s->phases[1].dramOutput);
    CHECK(s->phases[1].pipeId == 401);
    checkRemote(s->phases[1], 2, 2);
  }
}

TEST_CASE("DRAM read straight into the operand buffer", "[pipegen][streams][dram]") {
  // Slot = period = 2 chunks of 2 tiles; 2 slots in the epoch. Contiguous
  // chunks merge into one 4-tile read that pops the slot.
  Run r = run(queue(100, 4, 2, 4, 2, 0, 0x1000, kScatter2) + unpacker(200, 0, 0, 0, 4, 8) +
              pipeDoc(300, "[100, 102]", "[200]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  CHECK(streamCount(r) == 1);
  const auto* d = stream(r, 1, 1, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 1);
  const StreamPhase& ph = d->phases[0];
  CHECK(ph.dramInput);
  CHECK(ph.localReceiver);
  CHECK_FALSE(ph.remoteSource);
  checkRemote(ph, 4, 2);
  CHECK(ph.srcPeriodTiles == 4);
  CHECK(ph.srcTileOffset == 0);
  CHECK(ph.srcPeriodDone);
  CHECK(ph.dramBufNocAddr == 0x100001000ull); // channel 0 at NOC x 1, y 0
  CHECK(ph.dramBufSizeQSlots == 2);
  CHECK(ph.dramBufSizeTiles == 4);
  REQUIRE(r.gen->blob.dramBlob.size() == 1);
  const blob::DramIo& io = r.gen->blob.dramBlob[0];
  CHECK(io.name == sn(1, 1, 8));
  CHECK(io.input);
  CHECK_FALSE(io.output);
  CHECK(io.dramBufSizeBytes == 2 * 4 * 2080);
  CHECK(io.chunkTiles == 4);
  CHECK(io.numMsgs == 8);
  CHECK(io.readerIndex == 0);
  CHECK(io.totalReaders == 1);
}

TEST_CASE("DRAM read of a broadcast: the same slot twice, popped once", "[pipegen][streams][dram]") {
  Run r = run(queue(100, 2, 2, 4, 2, 0, 0x1000) + unpacker(200, 0, 0, 0, 4, 8) + pipeDoc(300, "[100, 100]", "[200]"),
              chunkPerPhase());
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* d = stream(r, 1, 1, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 2);
  CHECK(d->phases[0].srcTileOffset == 0);
  CHECK_FALSE(d->phases[0].srcPeriodDone);
  CHECK(d->phases[1].srcTileOffset == 0);
  CHECK(d->phases[1].srcPeriodDone);
  checkRemote(d->phases[1], 2, 2);
}

TEST_CASE("DRAM multicast goes through a reader stream", "[pipegen][streams][dram]") {
  Run r = run(queue(100, 2, 2, 4, 2, 1, 0x2000) + unpacker(200, 0, 0, 0, 2, 4) + unpacker(201, 0, 1, 0, 2, 4) +
              pipeDoc(300, "[100]", "[200, 201]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* rd = stream(r, 1, 1, 0); // first free stream on the first receiver's core
  REQUIRE(rd);
  REQUIRE(rd->phases.size() == 1);
  const StreamPhase& ph = rd->phases[0];
  CHECK(ph.dramInput);
  CHECK(ph.remoteReceiver);
  CHECK(ph.dest == std::vector<blob::StreamName>{sn(1, 1, 8), sn(1, 2, 8)});
  CHECK(ph.dramBufNocAddr == 0x18100002000ull); // channel 1 at NOC x 1, y 6
  checkRemote(ph, 2, 2);
  // Ring: min(8, largest phase) = 2 tiles, below the operand buffer.
  CHECK(ph.bufSize == 2 * 2080);
  CHECK(ph.bufAddr == kTop - 2 * 2080 - 2 * 2080);
  CHECK(stream(r, 1, 1, 8)->phases[0].bufAddr == kTop - 2 * 2080);
  for (const auto* d : {stream(r, 1, 1, 8), stream(r, 1, 2, 8)}) {
    REQUIRE(d);
    CHECK(d->phases[0].remoteSource);
    CHECK(d->phases[0].src == std::vector<blob::StreamName>{sn(1, 1, 0)});
  }
}

TEST_CASE("DRAM readers sharing a queue", "[pipegen][streams][dram]") {
  Run r = run(queue(100, 2, 2, 4, 2, 0, 0x1000) + unpacker(200, 0, 0, 0, 2, 4) + unpacker(201, 0, 1, 0, 2, 4) +
              pipeDoc(300, "[100]", "[200]") + pipeDoc(301, "[100]", "[201]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  REQUIRE(r.gen->blob.dramBlob.size() == 2);
  for (const auto& io : r.gen->blob.dramBlob) {
    CHECK(io.totalReaders == 2);
    CHECK(io.readerIndex == (io.name == sn(1, 1, 8) ? 0u : 1u));
  }
}

TEST_CASE("DRAM write from a packer", "[pipegen][streams][dram]") {
  Run r = run(packer(100, 0, 0, 2, 2, 4) + queue(200, 2, 2, 4, 4, 0, 0x3000) + pipeDoc(300, "[100]", "[200]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* s = stream(r, 1, 1, 24);
  REQUIRE(s);
  REQUIRE(s->phases.size() == 1);
  CHECK(s->phases[0].sourceEndpoint);
  CHECK(s->phases[0].dramOutput);
  CHECK(s->phases[0].dramBufNocAddr == 0x100003000ull);
  checkRemote(s->phases[0], 2, 2);
  REQUIRE(r.gen->blob.dramBlob.size() == 1);
  const blob::DramIo& io = r.gen->blob.dramBlob[0];
  CHECK(io.output);
  CHECK(io.dramBufSizeQSlots == 4);
  CHECK(io.dramBufSizeTiles == 2);
  CHECK(io.dramBufSizeBytes == 4 * 2 * 2080);
  CHECK(io.chunkTiles == 2);
  CHECK(io.numMsgs == 4);
}

TEST_CASE("DRAM write of a gather goes through a writer stream", "[pipegen][streams][dram]") {
  Run r = run(packer(100, 0, 0, 2, 1, 2) + packer(101, 0, 1, 2, 1, 2) + queue(200, 2, 2, 4, 1, 0, 0x3000) +
              pipeDoc(300, "[100, 101]", "[200]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* w = stream(r, 1, 1, 0);
  REQUIRE(w);
  REQUIRE(w->phases.size() == 2);
  CHECK(w->phases[0].remoteSource);
  CHECK(w->phases[0].dramOutput);
  CHECK(w->phases[0].src == std::vector<blob::StreamName>{sn(1, 1, 24)});
  CHECK(w->phases[1].src == std::vector<blob::StreamName>{sn(1, 2, 24)});
  checkRemote(w->phases[1], 1, 2);
  CHECK(stream(r, 1, 2, 24)->phases[0].dest == std::vector<blob::StreamName>{sn(1, 1, 0)});
}

TEST_CASE("relay buffers are folded into their readers", "[pipegen][streams]") {
  // The relay holds tiles 4-7 then 0-3 of a prologue buffer (period 8); the
  // unpacker reads the relay twice: it reads the prologue directly, twice.
  std::string prolog = buffer(100, "dram_prolog", 0, "[0, 0]", 4, 4, 4,
                              "  is_scatter: 1\n  replicate: 2\n  dram_buf_flag: 1\n  dram_chan: 0\n  dram_addr: 4096\n"
                              "  q_slots: 1\n");
  Run r = run(prolog + buffer(110, "prolog_relay", 0, "[0, 0]", 8, 8, 8) + unpacker(200, 0, 0, 1, 8, 16) +
              pipeDoc(300, "[104, 100]", "[110]") + pipeDoc(301, "[110]", "[200]"), chunkPerPhase());
  INFO(r.messages());
  REQUIRE(r.gen);
  CHECK(r.diags.warningCount() == 0);
  CHECK(streamCount(r) == 1);
  const auto* d = stream(r, 1, 1, 9);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 2);
  CHECK(d->phases[0].dramInput);
  CHECK(d->phases[0].srcTileOffset == 4);
  CHECK(d->phases[1].srcTileOffset == 0);
  CHECK_FALSE(d->phases[1].srcPeriodDone); // prologue data stays for the next epoch
  checkRemote(d->phases[0], 4, 2);
  CHECK(d->phases[0].dramBufNocAddr == 0x100001000ull);
  CHECK(d->phases[0].pipeId == 301);
}

TEST_CASE("intermediate buffers get a stream that moves nothing", "[pipegen][streams]") {
  Run r = run(buffer(100, "intermediate", 24, core(0, 0), 4, 4, 8));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* s = stream(r, 1, 1, 32);
  REQUIRE(s);
  REQUIRE(s->phases.size() == 1);
  CHECK(s->phases[0].intermediate);
  CHECK(s->phases[0].numMsgs == 8);
  CHECK(s->phases[0].bufSize == 4 * 2080);
  CHECK(r.diags.warningCount() == 0);
}

TEST_CASE("L1 allocation, top down, and out of memory", "[pipegen][l1]") {
  SECTION("operand streams by id from the top") {
    Run r = run(packer(100, 0, 0, 3, 1, 4) + unpacker(200, 0, 0, 1, 2, 4) + unpacker(201, 0, 0, 0, 5, 4) +
                pipeDoc(300, "[100]", "[200, 201]"));
    INFO(r.messages());
    REQUIRE(r.gen);
    CHECK(stream(r, 1, 1, 8)->phases[0].bufAddr == kTop - 5 * 2080);
    CHECK(stream(r, 1, 1, 9)->phases[0].bufAddr == kTop - 7 * 2080);
    CHECK(stream(r, 1, 1, 24)->phases[0].bufAddr == kTop - 10 * 2080);
    REQUIRE(r.gen->l1.size() == 3);
  }
  SECTION("441 tiles fit above 0x20000, 442 do not") {
    Run ok = run(packer(100, 0, 1, 2, 1, 4) + unpacker(200, 0, 0, 0, 441, 4) + pipeDoc(300, "[100]", "[200]"));
    INFO(ok.messages());
    REQUIRE(ok.gen);
    CHECK(stream(ok, 1, 1, 8)->phases[0].bufAddr == 0x200E0);
    Run bad = run(packer(100, 0, 0, 2, 1, 4) + unpacker(200, 0, 0, 0, 442, 4) + pipeDoc(300, "[100]", "[200]"));
    CHECK_FALSE(bad.gen);
    REQUIRE(bad.has("out-of-l1"));
    const Diagnostic& d = bad.diags.diagnostics().front();
    CHECK(d.message == "core [0, 0] is out of L1: its buffers need 923520 bytes, 917504 are available "
                       "(0x20000-0x100000); buffer_200 ('op200', operand 0) does not fit");
    CHECK(d.loc.line == 15); // buffer_200's document
    REQUIRE(d.notes.size() == 2);
    CHECK(d.notes[0].message == "buffer_200 ('op200', operand 0): 919360 bytes (442 tiles of 2080)");
    CHECK(d.notes[1].message == "buffer_100 ('op100', operand 16): 4160 bytes (2 tiles of 2080)");
  }
}

TEST_CASE("extra streams come from a pool; a core can run out", "[pipegen][streams]") {
  // Two packers gathered into N queues: every pipe needs a writer stream, on
  // the first packer's core, else the second's. Each core has ids 0-7 and
  // 40-63 outside the operand range: 32, so 64 writers fit and 65 do not.
  auto make = [](int n) {
    std::string s = packer(100, 0, 0, 2, 1, 2) + packer(101, 0, 1, 2, 1, 2);
    for (int i = 0; i < n; ++i) {
      s += queue(1000 + i, 2, 2, 4, 2, 0, 0x100000 * (i + 1));
      s += pipeDoc(5000 + i, "[100, 101]", "[" + std::to_string(1000 + i) + "]");
    }
    return s;
  };
  Run ok = run(make(64));
  INFO(ok.messages());
  REQUIRE(ok.gen);
  for (auto [x, id] : {std::pair{1u, 0u}, {1u, 7u}, {1u, 40u}, {1u, 63u}, {2u, 0u}, {2u, 63u}}) {
    const auto* w = stream(ok, 1, x, id);
    REQUIRE(w);
    CHECK(w->phases[0].dramOutput);
  }
  CHECK_FALSE(stream(ok, 1, 1, 8));
  // Each writer writes its own pipe's queue (queue i at 0x100000 * (i + 1)),
  // though one multicast feeds them all.
  CHECK(stream(ok, 1, 1, 0)->phases[0].dramBufNocAddr == 0x100100000ull);
  CHECK(stream(ok, 1, 1, 1)->phases[0].dramBufNocAddr == 0x100200000ull);
  CHECK(stream(ok, 1, 2, 63)->phases[0].dramBufNocAddr == 0x104000000ull);
  CHECK(stream(ok, 1, 2, 63)->phases[0].pipeId == 5063);
  CHECK(ok.gen->blob.dramBlob.size() == 64);
  const auto* p = stream(ok, 1, 1, 24);
  REQUIRE(p);
  REQUIRE(p->phases.size() == 1);
  CHECK(p->phases[0].dest.size() == 64); // one multicast to every writer
  CHECK(p->phases[0].dest[0] == sn(1, 1, 0));
  CHECK(p->phases[0].dest[32] == sn(1, 2, 0));
  Run bad = run(make(65));
  CHECK_FALSE(bad.gen);
  REQUIRE(bad.has("out-of-streams"));
  CHECK(bad.diags.diagnostics().front().message ==
        "pipe 5064: core [0, 0] has no free overlay stream for the DRAM writer this pipe needs (32 streams outside "
        "the operand range 8-39, all in use on every core of the pipe)");
}

TEST_CASE("stage errors", "[pipegen][errors]") {
  SECTION("tile sizes differ") {
    std::string u = unpacker(200, 0, 1, 0, 2, 4);
    u.replace(u.find("2080"), 4, "1120");
    Run r = run(packer(100, 0, 0, 2, 1, 4) + u + pipeDoc(300, "[100]", "[200]"));
    CHECK(r.has("pipegen-pipe"));
  }
  SECTION("inputs with different periods") {
    Run r = run(packer(100, 0, 0, 2, 1, 4) + packer(101, 0, 1, 2, 1, 8) + unpacker(200, 1, 0, 0, 2, 8) +
                pipeDoc(300, "[100, 101]", "[200]"));
    REQUIRE(r.has("pipegen-pipe"));
    CHECK(r.diags.diagnostics().front().message ==
          "pipe 300: inputs carry different numbers of periods in the epoch (4 and 8)");
  }
  SECTION("pipe_consumer_repeat") {
    Run r = run(packer(100, 0, 0, 2, 1, 4) + unpacker(200, 0, 1, 0, 2, 4) +
                pipeDoc(300, "[100]", "[200]", "  pipe_consumer_repeat: 2\n"));
    CHECK(r.has("unsupported"));
  }
  SECTION("DRAM to DRAM") {
    Run r = run(queue(100, 1, 1, 1, 1, 0, 0) + queue(200, 1, 1, 1, 1, 0, 64) + pipeDoc(300, "[100]", "[200]"));
    CHECK(r.has("unsupported"));
  }
  SECTION("a core outside the grid") {
    Run r = run(packer(100, 10, 0, 2, 1, 4));
    REQUIRE(r.has("pipegen-buffer"));
    CHECK(r.diags.diagnostics().front().message.find("outside the 10x12 worker grid") != std::string::npos);
  }
  SECTION("two buffers on one operand") {
    Run r = run(unpacker(200, 0, 0, 0, 2, 4) + unpacker(201, 0, 0, 0, 2, 4));
    REQUIRE(r.has("pipegen-buffer"));
    CHECK(r.diags.diagnostics().front().notes.size() == 1);
  }
  SECTION("an unpacker cannot be a pipe input") {
    Run r = run(unpacker(200, 0, 0, 0, 2, 4) + unpacker(201, 0, 1, 0, 2, 4) + pipeDoc(300, "[200]", "[201]"));
    CHECK(r.has("unsupported"));
  }
  SECTION("a DRAM channel the device does not have") {
    Run r = run(queue(100, 1, 1, 1, 1, 8, 0));
    CHECK(r.has("pipegen-buffer"));
  }
  SECTION("the unroll limit") {
    GenerateOptions o;
    o.maxUnrolledTransfers = 2;
    Run r = run(packer(100, 0, 0, 4, 2, 6) + unpacker(200, 0, 1, 0, 2, 4) + unpacker(201, 0, 2, 0, 2, 2) +
                    pipeDoc(300, "[100]", "[[200], [201]]"),
                o);
    CHECK(r.has("phase-limit"));
  }
}

TEST_CASE("warnings: epoch tiles and unconnected buffers", "[pipegen][errors]") {
  Run r = run(packer(100, 0, 0, 2, 1, 4) + unpacker(200, 0, 1, 0, 2, 6) + unpacker(201, 0, 2, 0, 2, 6) +
              pipeDoc(300, "[100]", "[200]"));
  REQUIRE(r.gen);
  CHECK(r.has("epoch-tiles"));
  CHECK(r.has("unconnected-buffer"));
}

TEST_CASE("DRAM NOC addresses use BUDA's encoding", "[pipegen]") {
  CHECK(dramNocAddress(7, 6, 0x28000000) == 0x18728000000ull);
  CHECK(dramNocAddress(1, 0, 0x10000000) == 0x110000000ull);
}

TEST_CASE("windowed packers release the longest finished prefix", "[pipegen][streams]") {
  // Period 4 (sg 1 x replicate 4) read as tiles 0, 2, 1, 3. After tile 0 it
  // can go (nothing later reads it); after 2, still only tile 0 (1 is read
  // later); after 1, tiles 0-2; then the period. The ring needs 2 slots
  // (tiles 1 and 2 while 2 is sent), not 4.
  std::string body = packer(100, 0, 0, 1, 1, 2, "  is_scatter: 1\n  replicate: 4\n") + unpacker(200, 0, 1, 0, 2, 8) +
                     pipeDoc(300, "[100, 102, 101, 103]", "[200]");
  GenerateOptions o = chunkPerPhase();
  o.releaseWindows = true;
  Run r = run(body, o);
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* s = stream(r, 1, 1, 24);
  REQUIRE(s);
  REQUIRE(s->phases.size() == 4);
  const uint32_t offsets[] = {0, 2, 1, 3}, freed[] = {1, 1, 3, 4};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(s->phases[i].srcPeriodTiles == 4);
    CHECK(s->phases[i].srcTileOffset == offsets[i]);
    CHECK(s->phases[i].srcFreedTiles == freed[i]);
    CHECK(s->phases[i].srcPeriodDone == (i == 3));
    checkRemote(s->phases[i], 1, 2);
  }
  CHECK(s->phases[0].bufSize == 2 * 2080);
  // By default (chunk lists) tiles 2 and 1 share a phase, as nothing is
  // released between them: freed 1, 3, 4 in the same ring. With
  // releaseWindows off the whole period is held and released at its end.
  Run byDefault = run(body);
  REQUIRE(byDefault.gen);
  const auto* d = stream(byDefault, 1, 1, 24);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 3);
  CHECK(d->phases[1].srcChunkOffsets == std::vector<uint32_t>{2, 1});
  CHECK(d->phases[1].srcChunkTiles == 1);
  const uint32_t freedByDefault[] = {1, 3, 4};
  for (size_t i = 0; i < 3; ++i) CHECK(d->phases[i].srcFreedTiles == freedByDefault[i]);
  CHECK(d->phases[0].bufSize == 2 * 2080);
  GenerateOptions off = chunkPerPhase();
  off.releaseWindows = false;
  Run whole = run(body, off);
  REQUIRE(whole.gen);
  const auto* w = stream(whole, 1, 1, 24);
  REQUIRE(w);
  REQUIRE(w->phases.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(w->phases[i].srcFreedTiles == (i == 3 ? 4u : 0u));
  CHECK(w->phases[0].bufSize == 4 * 2080);
}

TEST_CASE("padding tiles are one-tile rams in the DRAM padding region", "[pipegen][streams][dram]") {
  std::string pad = buffer(101, "unknown", 0, "[255, 255]", 1, 1, 1, "  is_padding: 1\n  padding_value: 2.5\n");
  Run r = run(queue(100, 1, 1, 2, 2, 0, 0x1000) + pad + unpacker(200, 0, 0, 0, 2, 4) +
              pipeDoc(300, "[100, 101]", "[200]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* d = stream(r, 1, 1, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 2);
  CHECK(d->phases[0].dramBufNocAddr == 0x100001000ull);
  CHECK_FALSE(d->phases[0].dramPadding);
  CHECK(d->phases[1].dramInput);
  CHECK(d->phases[1].dramPadding);
  CHECK(d->phases[1].paddingValue == 2.5f);
  // Channel 0 of grayskull is NOC x 1, y 0: (0 << 6 | 1) << 32, plus 0x600000.
  CHECK(d->phases[1].dramBufNocAddr == 0x100600000ull);
  CHECK(d->phases[1].dramRam);
  CHECK(d->phases[1].dramBufSizeQSlots == 1);
  CHECK(d->phases[1].dramBufSizeTiles == 1);
  CHECK_FALSE(d->phases[1].srcPeriodDone);
  checkRemote(d->phases[1], 1, 2);
  REQUIRE(r.gen->blob.dramBlob.size() == 2); // the queue, then the padding tile
  const blob::DramIo& io = r.gen->blob.dramBlob[1];
  CHECK(io.dramBufNocAddr == 0x100600000ull);
  CHECK(io.ram);
  CHECK(io.dramBufSizeBytes == 2080);
  REQUIRE(io.extra.size() == 1);
  CHECK(io.extra[0].key == "dram_padding");
}

TEST_CASE("distinct padding values get distinct tiles; queues must not overlap them", "[pipegen][streams][dram]") {
  std::string pads = buffer(101, "unknown", 0, "[255, 255]", 1, 1, 1, "  is_padding: 1\n  padding_value: 2.5\n") +
                     buffer(102, "unknown", 0, "[255, 255]", 1, 1, 1, "  is_padding: 1\n  padding_value: -1.0\n") +
                     buffer(103, "unknown", 0, "[255, 255]", 1, 1, 1, "  is_padding: 1\n  padding_value: 2.5\n");
  Run r = run(pads + unpacker(200, 0, 0, 0, 3, 6) + pipeDoc(300, "[101, 102, 103]", "[200]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* d = stream(r, 1, 1, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 3);
  // 2.5 first at 0x600000; -1.0 one header (32) + one 2080-byte tile later,
  // rounded up to 32: 0x600000 + 2112 = 0x600840; 2.5 again shares the first.
  CHECK(d->phases[0].dramBufNocAddr == 0x100600000ull);
  CHECK(d->phases[1].dramBufNocAddr == 0x100600840ull);
  CHECK(d->phases[2].dramBufNocAddr == 0x100600000ull);
  // A queue of channel 0 over those tiles is an error.
  Run bad = run(queue(100, 1, 1, 2, 2, 0, 0x600800) + pads + unpacker(200, 0, 0, 0, 3, 6) +
                pipeDoc(300, "[101, 102, 103]", "[200]"));
  CHECK_FALSE(bad.gen);
  CHECK_THAT(bad.messages(), Catch::Contains("overlaps the padding tiles at [0x600000, 0x601080)"));
  CHECK_THAT(bad.messages(), Catch::Contains("pipegen-buffer: buffer_100"));
}

TEST_CASE("gradient accumulators load and store their ram cell", "[pipegen][streams][dram]") {
  Run r = run(buffer(110, "gradient_op", 16, core(1, 0), 4, 4, 8,
                     "  dram_buf_flag: 1\n  write_dram_buf_flag: 1\n  dram_ram_flag: 1\n  dram_chan: 1\n"
                     "  dram_addr: 0x4000\n  q_slots: 1\n"));
  INFO(r.messages());
  REQUIRE(r.gen);
  CHECK(r.diags.warningCount() == 0);
  const auto* s = stream(r, 2, 1, 24);
  REQUIRE(s);
  REQUIRE(s->phases.size() == 1);
  CHECK(s->phases[0].intermediate);
  CHECK(s->phases[0].numMsgs == 4);
  CHECK(s->phases[0].dramBufNocAddr == 0x18100004000ull);
  REQUIRE(r.gen->blob.dramBlob.size() == 1);
  const blob::DramIo& io = r.gen->blob.dramBlob[0];
  CHECK(io.input);
  CHECK(io.output);
  CHECK(io.ram);
  CHECK(io.dramBufSizeTiles == 4);
  CHECK(io.numMsgs == 4);
}

TEST_CASE("prologue and epilogue buffers: no pointer updates", "[pipegen][streams][dram]") {
  std::string prolog = buffer(100, "dram_prolog", 0, "[0, 0]", 2, 2, 2,
                              "  dram_buf_flag: 1\n  dram_chan: 0\n  dram_addr: 4096\n  q_slots: 1\n");
  std::string epilog = queue(300, 2, 2, 2, 1, 0, 0x8000, "  dram_buf_flag: 1\n  write_dram_buf_flag: 1\n");
  Run r = run(prolog + unpacker(200, 0, 0, 0, 2, 8) + pipeDoc(400, "[100]", "[200]") + packer(110, 0, 1, 2, 2, 4) +
              epilog + pipeDoc(401, "[110]", "[300]"));
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* d = stream(r, 1, 1, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 1);
  CHECK(d->phases[0].dramRam);
  CHECK_FALSE(d->phases[0].srcPeriodDone);
  checkRemote(d->phases[0], 2, 4); // 8 tiles from a 2-tile constant slot
  const auto* w = stream(r, 1, 2, 24);
  REQUIRE(w);
  CHECK(w->phases[0].dramOutput);
  CHECK(w->phases[0].dramRam);
}

TEST_CASE("dialects: a non-scatter entry is one chunk (BUDA) or one input (Tessera)", "[pipegen][streams]") {
  // Two packers of 2 tiles per input in 1-tile chunks, 2 inputs, gathered.
  auto make = [](const std::string& more) {
    return packer(100, 0, 0, 2, 1, 4, "  tiles_per_input: 2\n" + more) +
           packer(101, 0, 1, 2, 1, 4, "  tiles_per_input: 2\n" + more) +
           unpacker(200, 1, 0, 0, 4, 8, "  tiles_per_input: 4\n" + more) + pipeDoc(300, "[100, 101]", "[200]");
  };
  SECTION("BUDA: chunks interleave, 4 passes of 1 + 1 tiles") {
    Run r = run(make(""));
    INFO(r.messages());
    REQUIRE(r.gen);
    const auto* d = stream(r, 2, 1, 8);
    REQUIRE(d);
    REQUIRE(d->phases.size() == 2);
    checkRemote(d->phases[0], 1, 4);
    CHECK(d->phases[0].src == std::vector<blob::StreamName>{sn(1, 1, 24)});
    CHECK(d->phases[1].src == std::vector<blob::StreamName>{sn(1, 2, 24)});
  }
  SECTION("Tessera (data_format present): whole inputs, 2 passes of 2 + 2 tiles") {
    Run r = run(make("  data_format: Float16_b\n"));
    INFO(r.messages());
    REQUIRE(r.gen);
    CHECK(r.doc->dialect == pipe::Dialect::Tessera);
    const auto* d = stream(r, 2, 1, 8);
    REQUIRE(d);
    REQUIRE(d->phases.size() == 2);
    checkRemote(d->phases[0], 2, 2);
    CHECK(d->phases[0].src == std::vector<blob::StreamName>{sn(1, 1, 24)});
    CHECK(d->phases[0].dataFormat == 2);
    checkRemote(d->phases[1], 2, 2);
  }
  SECTION("Tessera: a scatter buffer's epoch_tiles counts every tile") {
    // 4 tiles per input in chunks of 2: epoch_tiles 8 = 2 inputs (BUDA would say 4).
    Run r = run(queue(100, 4, 2, 8, 2, 0, 0x1000, kScatter2 + "  tiles_per_input: 4\n  data_format: Float16\n") +
                unpacker(200, 0, 0, 0, 4, 8, "  data_format: Float16\n") + pipeDoc(300, "[102, 100]", "[200]"),
                chunkPerPhase());
    INFO(r.messages());
    REQUIRE(r.gen);
    const auto* d = stream(r, 1, 1, 8);
    REQUIRE(d);
    REQUIRE(d->phases.size() == 2);
    checkRemote(d->phases[0], 2, 2);
    CHECK(d->phases[0].srcTileOffset == 2);
    CHECK(d->phases[1].srcPeriodDone);
  }
}

TEST_CASE("chunk lists (the default) fold a transposed read into one phase", "[pipegen][streams][dram]") {
  // A 2x2-tile prologue read column by column: tiles 0, 2, 1, 3. Without
  // chunk lists: 4 phases (no two chunks are contiguous); with them: one
  // 4-tile phase listing the offsets.
  std::string body = buffer(100, "dram_prolog", 0, "[255, 255]", 4, 1, 4,
                            "  is_scatter: 1\n  replicate: 4\n  dram_buf_flag: 1\n  dram_chan: 0\n"
                            "  dram_addr: 4096\n  q_slots: 1\n") +
                     unpacker(200, 0, 0, 0, 4, 8) + pipeDoc(300, "[100, 102, 101, 103]", "[200]");
  Run plain = run(body, chunkPerPhase());
  REQUIRE(plain.gen);
  REQUIRE(stream(plain, 1, 1, 8));
  CHECK(stream(plain, 1, 1, 8)->phases.size() == 4);
  Run r = run(body);
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* d = stream(r, 1, 1, 8);
  REQUIRE(d);
  REQUIRE(d->phases.size() == 1);
  checkRemote(d->phases[0], 4, 2);
  CHECK(d->phases[0].srcChunkOffsets == std::vector<uint32_t>{0, 2, 1, 3});
  CHECK(d->phases[0].srcChunkTiles == 1);
  CHECK(d->phases[0].srcTileOffset == 0);
  CHECK_FALSE(d->phases[0].srcPeriodDone);
  // DRAM transfers stay within a chunk: 1 tile, not the phase's 4.
  CHECK(d->phases[0].dramChunkTiles == 1);
}

TEST_CASE("send order: two packers, two readers gathering them in crossed orders", "[pipegen][streams][order]") {
  // P (buffer 100, core [0, 0]) and Q (110, [0, 1]), one-tile buffers with
  // 4-tile periods (so each keeps one stream for both readers). Reader A
  // takes P's tile 1, Q's 0, P's 3, Q's 2; reader B takes Q's tile 1, P's 0,
  // Q's 3, P's 2. By tile offset P would serve B first (tile 0) and Q would
  // serve A first: A waits for P, P for B, B for Q, Q for A (a hang). By the
  // readers' clock each packer first serves the reader that takes its tile
  // first in its input: P serves A, Q serves B.
  const std::string kScatter4 = "  is_scatter: 1\n  replicate: 4\n";
  Run r = run(packer(100, 0, 0, 1, 1, 8, kScatter4) + packer(110, 0, 1, 1, 1, 8, kScatter4) +
                  unpacker(200, 1, 0, 0, 2, 16) + unpacker(201, 1, 1, 0, 2, 16) +
                  pipeDoc(300, "[101, 110, 103, 112]", "[200]") + pipeDoc(301, "[111, 100, 113, 102]", "[201]"),
              chunkPerPhase());
  INFO(r.messages());
  REQUIRE(r.gen);
  const auto* p = stream(r, 1, 1, 24);
  const auto* q = stream(r, 1, 2, 24);
  REQUIRE(p);
  REQUIRE(q);
  REQUIRE(p->phases.size() == 4);
  REQUIRE(q->phases.size() == 4);
  // A is [1, 0] (NOC 2-1), B is [1, 1] (NOC 2-2); their operand-0 streams.
  const std::vector<blob::StreamName> a{sn(2, 1, 8)}, b{sn(2, 2, 8)};
  CHECK(p->phases[0].dest == a);
  CHECK(p->phases[0].srcTileOffset == 1);
  CHECK(p->phases[1].dest == b);
  CHECK(p->phases[1].srcTileOffset == 0);
  CHECK(q->phases[0].dest == b);
  CHECK(q->phases[0].srcTileOffset == 1);
  CHECK(q->phases[1].dest == a);
  CHECK(q->phases[1].srcTileOffset == 0);
}
