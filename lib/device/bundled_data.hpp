// Internal: the descriptor files embedded at build time by
// cmake/embed_files.cmake (generated bundled_descriptors_data.cpp).
#pragma once
#include <cstddef>

namespace tessera::detail {

struct EmbeddedFile {
  const char* name;          // file stem
  const unsigned char* data; // file bytes, followed by one NUL not counted in size
  size_t size;
};

extern const EmbeddedFile kBundledDescriptors[];
extern const size_t kBundledDescriptorCount; // entries sorted by name

} // namespace tessera::detail
