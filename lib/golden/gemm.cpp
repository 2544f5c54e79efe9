#include "golden/gemm.hpp"

#include <Eigen/Core>

namespace tessera::golden {

void gemmAccumulate(float* c, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t m, int64_t k,
                    int64_t n) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Strided = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
  Eigen::Map<RowMajor> acc(c, m, n);
  Strided lhs(a, m, k, Eigen::OuterStride<>(lda));
  Strided rhs(b, k, n, Eigen::OuterStride<>(ldb));
  acc.noalias() += lhs * rhs;
}

const char* gemmIsa() {
#if defined(__AVX512F__)
  return "AVX-512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "AVX2+FMA";
#else
  return "SSE2";
#endif
}

} // namespace tessera::golden
