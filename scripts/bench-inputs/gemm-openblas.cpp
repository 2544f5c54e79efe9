// scripts/bench-gemm.sh: the per-tile HiFi3 product (2 terms, k = 32 per call, 64-row panels)
// through OpenBLAS sgemm, one thread; speed only (no rounding, not the reference order).
#include <cblas.h>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
int main() {
  struct S { long m, k, n; };
  std::mt19937 rng(1); std::normal_distribution<float> nd;
  openblas_set_num_threads(1);
  for (S s : {S{128, 768, 768}, S{128, 768, 3072}, S{128, 3072, 768}, S{128, 64, 128}}) {
    std::vector<float> a0(s.m*s.k), a1(s.m*s.k), b0(s.k*s.n), b1(s.k*s.n), c(s.m*s.n);
    for (auto* v : {&a0,&a1,&b0,&b1}) for (float& x : *v) x = nd(rng);
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      for (long r0 = 0; r0 < s.m; r0 += 64)
        for (long t = 0; t < s.k / 32; ++t)
          for (int term = 0; term < 2; ++term) {
            const float* a = (term ? a1 : a0).data(); const float* b = (term ? b1 : b0).data();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 64, s.n, 32, 1.0f, a + r0*s.k + t*32, s.k,
                        b + t*32*s.n, s.n, 1.0f, c.data() + r0*s.n, s.n);
          }
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("m %4ld k %4ld n %4ld  openblas per panel+tile %8.3f ms  %6.1f GFLOP/s (no rounding)\n", s.m, s.k, s.n,
                best*1e3, 4.0*s.m*s.k*s.n/best*1e-9);
  }
}
