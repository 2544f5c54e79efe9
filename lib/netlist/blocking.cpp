#include "netlist/blocking.hpp"

namespace tessera::netlist {
namespace {

int64_t orOne(const Field<int64_t>& f) { return f.present() ? f.value : 1; }
Dim2 orOnes(const Field<Dim2>& f) { return f.present() ? f.value : Dim2{1, 1}; }

template <class Node> formats::Blocking blockingFrom(const Node& n) {
  const Dim2 grid = orOnes(n.gridSize), mblock = orOnes(n.mblock), ublock = orOnes(n.ublock);
  formats::Blocking b;
  b.gridR = grid.r;
  b.gridC = grid.c;
  b.t = orOne(n.t);
  b.mblockR = mblock.r;
  b.mblockC = mblock.c;
  b.ublockR = ublock.r;
  b.ublockC = ublock.c;
  b.order = n.order();
  if (n.tileDim.present())
    b.tile = formats::TileShape{static_cast<uint32_t>(n.tileDim.value.r), static_cast<uint32_t>(n.tileDim.value.c)};
  return b;
}

} // namespace

formats::Blocking blockingOf(const Queue& q) { return blockingFrom(q); }
formats::Blocking blockingOf(const Op& op) { return blockingFrom(op); }

} // namespace tessera::netlist
