/* A small integer workload compiled twice: for rv32im (rv32_program.c, run on
 * the simulated hart) and into the host unit test, which compares the two
 * results word by word. Valid C and C++; no undefined behaviour (no signed
 * overflow, no division by zero, no INT_MIN / -1) so both compilers must
 * agree. */
#ifndef TESSERA_TEST_RV32_WORKLOAD_H
#define TESSERA_TEST_RV32_WORKLOAD_H
#include <stdint.h>

#define WL_SORT_N 96
#define WL_CRC_BYTES 300
#define WL_DIV_N 48
/* out[]: sorted values, CRC32, signed quotients/remainders, unsigned
 * quotients/remainders, a checksum of a multiply-heavy loop. */
#define WL_OUT_WORDS (WL_SORT_N + 1 + 4 * WL_DIV_N + 1)

static uint32_t wl_next(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return *state;
}

/* Shell sort with the gaps 40, 13, 4, 1: exercises signed compares and
 * indexed loads/stores. */
static void wl_sort(int32_t* a, int n) {
  static const int gaps[4] = {40, 13, 4, 1};
  for (int g = 0; g < 4; ++g) {
    const int gap = gaps[g];
    for (int i = gap; i < n; ++i) {
      const int32_t v = a[i];
      int j = i;
      while (j >= gap && a[j - gap] > v) {
        a[j] = a[j - gap];
        j -= gap;
      }
      a[j] = v;
    }
  }
}

/* Bitwise CRC-32 (reflected polynomial 0xEDB88320), byte loads and shifts. */
static uint32_t wl_crc32(const uint8_t* p, int n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (int i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

static void wl_run(uint32_t* out, uint32_t seed) {
  uint32_t s = seed;
  int32_t values[WL_SORT_N];
  for (int i = 0; i < WL_SORT_N; ++i) values[i] = (int32_t)(wl_next(&s) >> 1) - 0x20000000;
  wl_sort(values, WL_SORT_N);
  for (int i = 0; i < WL_SORT_N; ++i) out[i] = (uint32_t)values[i];

  uint8_t bytes[WL_CRC_BYTES];
  for (int i = 0; i < WL_CRC_BYTES; ++i) bytes[i] = (uint8_t)(wl_next(&s) >> 24);
  out[WL_SORT_N] = wl_crc32(bytes, WL_CRC_BYTES);

  uint32_t* d = out + WL_SORT_N + 1;
  for (int i = 0; i < WL_DIV_N; ++i) {
    /* Divisors of every magnitude and both signs, never 0 or -1. */
    int32_t a = (int32_t)wl_next(&s);
    int32_t b = (int32_t)(wl_next(&s) >> (i % 31));
    if (b == 0 || b == -1) b = 7;
    if (i % 3 == 0) b = -b;
    uint32_t ua = wl_next(&s);
    uint32_t ub = (wl_next(&s) >> (i % 32)) | 1u;
    d[4 * i + 0] = (uint32_t)(a / b);
    d[4 * i + 1] = (uint32_t)(a % b);
    d[4 * i + 2] = ua / ub;
    d[4 * i + 3] = ua % ub;
  }

  uint32_t acc = 1;
  for (int i = 0; i < 1000; ++i) {
    uint64_t wide = (uint64_t)acc * (uint64_t)(wl_next(&s) | 1u);
    acc = (uint32_t)(wide >> 32) ^ (uint32_t)wide ^ (uint32_t)i;
  }
  out[WL_OUT_WORDS - 1] = acc;
}

#endif
