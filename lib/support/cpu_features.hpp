// What the host CPU can run, for kernels that pick an AVX-512 or AVX2 body
// at run time. Asked once per process (__builtin_cpu_init first: a caller
// that runs during static initialisation would otherwise read zeros).
#pragma once

namespace tessera {

#if defined(__x86_64__) && defined(__GNUC__)
inline bool cpuHasAvx512f() {
  static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f") != 0);
  return yes;
}
inline bool cpuHasAvx2() {
  static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") != 0);
  return yes;
}
#else
inline bool cpuHasAvx512f() { return false; }
inline bool cpuHasAvx2() { return false; }
#endif

} // namespace tessera
