// The kernel templates of net2hlks: lib/kernels/bodies/<name>.h (real C++
// files, compiled by hlkc with every kernel of their family), embedded at
// build time so the tools need no source tree.
#pragma once

#include "device/bundled_data.hpp"

#include <string_view>

namespace tessera::detail {
extern const EmbeddedFile kKernelBodies[];
extern const size_t kKernelBodyCount; // entries sorted by name
} // namespace tessera::detail

namespace tessera::hlk {

// The text of lib/kernels/bodies/<name>.h. Every name is a constant of this
// library, so a missing one is a build defect (std::logic_error).
std::string_view kernelBody(std::string_view name);

} // namespace tessera::hlk
