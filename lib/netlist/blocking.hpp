// The tile blocking (grid, t, mblock, ublock, ublock order, tile_dim) of a
// queue or an op of the netlist, as lib/formats tilizes and untilizes it.
#pragma once
#include "formats/blocking.hpp"
#include "netlist/model.hpp"

namespace tessera::netlist {

formats::Blocking blockingOf(const Queue& q);
formats::Blocking blockingOf(const Op& op); // grid as declared (grid_transpose ignored: logical layout)

} // namespace tessera::netlist
