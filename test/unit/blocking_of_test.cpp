// netlist::blockingOf: the tile blocking lib/formats uses, read from the
// fields of a queue or an op. Expected values are the fields set here.
#include "netlist/blocking.hpp"

#include <catch2/catch.hpp>

using tessera::UblockOrder;
using tessera::formats::Blocking;
using tessera::netlist::blockingOf;

TEST_CASE("blockingOf reads queue and op fields", "[netlist][blocking]") {
  const tessera::SourceLoc here{1, 1};
  tessera::netlist::Queue q;
  q.gridSize.set({2, 3}, here);
  q.t.set(4, here);
  q.mblock.set({5, 6}, here);
  q.ublock.set({7, 8}, here);
  q.ublockOrder.set(UblockOrder::C, here);
  const Blocking b = blockingOf(q);
  CHECK(b.gridR == 2);
  CHECK(b.gridC == 3);
  CHECK(b.t == 4);
  CHECK(b.mblockR == 5);
  CHECK(b.mblockC == 6);
  CHECK(b.ublockR == 7);
  CHECK(b.ublockC == 8);
  CHECK(b.order == UblockOrder::C);

  tessera::netlist::Op op;
  op.gridSize.set({1, 2}, here);
  op.gridTranspose.set(true, here); // logical layout: ignored
  op.mblock.set({3, 4}, here);
  op.ublock.set({1, 1}, here);
  const Blocking ob = blockingOf(op);
  CHECK(ob.gridR == 1);
  CHECK(ob.gridC == 2);
  CHECK(ob.t == 1); // absent -> 1
  CHECK(ob.order == UblockOrder::R);
}
