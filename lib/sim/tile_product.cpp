// The 32x32x32 tile product of the coprocessor's matmul, the simulator's
// hottest arithmetic (one call per product term per tile pair). Every variant
// gives the same bits: each output value is a float dot product summed from 0
// with k ascending (one multiply, then one add: no FMA), then added to acc.
// The variants differ only in how many of those independent sums run side by
// side. This file is compiled with -ffp-contract=off (lib/sim/CMakeLists.txt):
// in C++ GCC contracts a*b+c into an FMA wherever the target has one (the
// AVX-512 variant's does), which would round once instead of twice.
#include "sim/tile_product.hpp"

#include "support/cpu_features.hpp"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace tessera::sim::copmath {
namespace {

// Plain loops: any CPU.
void addProductScalar(const Tile& lhs, const Tile& rhs, Tile& acc) {
  for (size_t i = 0; i < kDim; ++i) {
    std::array<float, kDim> dot{};
    for (size_t k = 0; k < kDim; ++k) {
      const float l = lhs[i * kDim + k];
      const float* r = &rhs[k * kDim];
      for (size_t j = 0; j < kDim; ++j) dot[j] += l * r[j];
    }
    float* out = &acc[i * kDim];
    for (size_t j = 0; j < kDim; ++j) out[j] = out[j] + dot[j];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define TESSERA_TILE_PRODUCT_X86 1
typedef float V8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));

// Unaligned vector load and add-then-store, as macros: helper functions
// taking or returning vectors would change the ABI outside the target code.
#define TESSERA_LOAD(V, v, p) \
  V v;                        \
  std::memcpy(&v, (p), sizeof v)
#define TESSERA_ADD_STORE(V, p, d) \
  do {                             \
    TESSERA_LOAD(V, o_, p);        \
    o_ = o_ + (d);                 \
    std::memcpy((p), &o_, sizeof o_); \
  } while (0)

// Two rows at a time, 8 lanes: 8 running sums in registers (one row's four
// left the adder waiting on its own latency), each rhs row loaded once for both.
__attribute__((target("avx2"))) void addProductAvx2(const Tile& lhs, const Tile& rhs, Tile& acc) {
  for (size_t i = 0; i < kDim; i += 2) {
    V8 a0{}, a1{}, a2{}, a3{}, b0{}, b1{}, b2{}, b3{};
    for (size_t k = 0; k < kDim; ++k) {
      const float* r = &rhs[k * kDim];
      TESSERA_LOAD(V8, r0, r);
      TESSERA_LOAD(V8, r1, r + 8);
      TESSERA_LOAD(V8, r2, r + 16);
      TESSERA_LOAD(V8, r3, r + 24);
      const V8 la = V8{} + lhs[i * kDim + k];
      const V8 lb = V8{} + lhs[(i + 1) * kDim + k];
      a0 += la * r0; a1 += la * r1; a2 += la * r2; a3 += la * r3;
      b0 += lb * r0; b1 += lb * r1; b2 += lb * r2; b3 += lb * r3;
    }
    float* o = &acc[i * kDim];
    TESSERA_ADD_STORE(V8, o, a0);
    TESSERA_ADD_STORE(V8, o + 8, a1);
    TESSERA_ADD_STORE(V8, o + 16, a2);
    TESSERA_ADD_STORE(V8, o + 24, a3);
    TESSERA_ADD_STORE(V8, o + 32, b0);
    TESSERA_ADD_STORE(V8, o + 40, b1);
    TESSERA_ADD_STORE(V8, o + 48, b2);
    TESSERA_ADD_STORE(V8, o + 56, b3);
  }
}

// Eight rows at a time, 16 lanes: a row is two registers, so 16 running sums
// (with four the adds waited on their own latency) and each rhs row loaded
// once for eight rows. The lhs value is broadcast as it is: `V16{} + x` cost
// a scalar add per row and k, and a -0 that stays -0 changes no bit (a zero
// product's sign is lost in a sum that starts from +0). Named registers, not
// arrays: GCC kept an array of vectors in memory.
__attribute__((target("avx512f"))) void addProductAvx512(const Tile& lhs, const Tile& rhs, Tile& acc) {
  for (size_t i = 0; i < kDim; i += 8) {
    V16 a0{}, b0{}, a1{}, b1{}, a2{}, b2{}, a3{}, b3{}, a4{}, b4{}, a5{}, b5{}, a6{}, b6{}, a7{}, b7{};
    const float* l = &lhs[i * kDim];
    for (size_t k = 0; k < kDim; ++k) {
      const float* r = &rhs[k * kDim];
      TESSERA_LOAD(V16, r0, r);
      TESSERA_LOAD(V16, r1, r + 16);
#define TESSERA_ROW(m)                                                  \
  {                                                                     \
    const V16 x = reinterpret_cast<V16>(_mm512_set1_ps(l[(m) * kDim + k])); \
    a##m += x * r0;                                                     \
    b##m += x * r1;                                                     \
  }
      TESSERA_ROW(0) TESSERA_ROW(1) TESSERA_ROW(2) TESSERA_ROW(3)
      TESSERA_ROW(4) TESSERA_ROW(5) TESSERA_ROW(6) TESSERA_ROW(7)
#undef TESSERA_ROW
    }
    float* o = &acc[i * kDim];
#define TESSERA_STORE_ROW(m)                      \
  TESSERA_ADD_STORE(V16, o + (m) * kDim, a##m);   \
  TESSERA_ADD_STORE(V16, o + (m) * kDim + 16, b##m);
    TESSERA_STORE_ROW(0) TESSERA_STORE_ROW(1) TESSERA_STORE_ROW(2) TESSERA_STORE_ROW(3)
    TESSERA_STORE_ROW(4) TESSERA_STORE_ROW(5) TESSERA_STORE_ROW(6) TESSERA_STORE_ROW(7)
#undef TESSERA_STORE_ROW
  }
}
#undef TESSERA_LOAD
#undef TESSERA_ADD_STORE
#endif

using ProductFn = void (*)(const Tile&, const Tile&, Tile&);

ProductFn pickProduct() {
#ifdef TESSERA_TILE_PRODUCT_X86
  if (cpuHasAvx512f()) return addProductAvx512;
  if (cpuHasAvx2()) return addProductAvx2;
#endif
  return addProductScalar;
}

} // namespace

void addProduct(const Tile& lhs, const Tile& rhs, Tile& acc) {
  static const ProductFn fn = pickProduct();
  fn(lhs, rhs, acc);
}

void addProductReference(const Tile& lhs, const Tile& rhs, Tile& acc) { addProductScalar(lhs, rhs, acc); }

} // namespace tessera::sim::copmath
