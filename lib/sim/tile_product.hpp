// The coprocessor's tile product (internal to lib/sim; see tile_product.cpp).
#pragma once
#include "sim/coprocessor_math.hpp"

namespace tessera::sim::copmath {

// acc[i][j] = acc[i][j] + (sum over k of lhs[i][k] * rhs[k][j]): the dot
// product summed in float from 0, k ascending, one rounding per multiply and
// per add. Picks the widest vector variant the CPU has; all give the same bits.
void addProduct(const Tile& lhs, const Tile& rhs, Tile& acc);
// The plain-loop variant, for tests comparing the fast ones with it.
void addProductReference(const Tile& lhs, const Tile& rhs, Tile& acc);

} // namespace tessera::sim::copmath
