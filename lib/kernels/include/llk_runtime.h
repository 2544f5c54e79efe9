// The few C runtime functions clang may call on its own in freestanding code:
// memcpy/memmove/memset for aggregate copies and large zero-initialisations.
// Byte loops: kernels copy little, and code space matters more than speed.
// -ffreestanding implies -fno-builtin, so these loops are not turned back
// into calls to themselves. Unused ones are dropped by --gc-sections.
#pragma once

extern "C" {

void* memcpy(void* dst, const void* src, __SIZE_TYPE__ n) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  const unsigned char* s = static_cast<const unsigned char*>(src);
  for (__SIZE_TYPE__ i = 0; i < n; ++i) d[i] = s[i];
  return dst;
}

void* memmove(void* dst, const void* src, __SIZE_TYPE__ n) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  const unsigned char* s = static_cast<const unsigned char*>(src);
  if (d < s) {
    for (__SIZE_TYPE__ i = 0; i < n; ++i) d[i] = s[i];
  } else {
    for (__SIZE_TYPE__ i = n; i > 0; --i) d[i - 1] = s[i - 1];
  }
  return dst;
}

void* memset(void* dst, int value, __SIZE_TYPE__ n) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  for (__SIZE_TYPE__ i = 0; i < n; ++i) d[i] = static_cast<unsigned char>(value);
  return dst;
}

} // extern "C"
