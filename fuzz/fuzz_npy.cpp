// libFuzzer target for the .npy reader (lib/host/npy.cpp): the loader's
// --inputs and --outputs files.
//
// One input: parseNpy. It either throws NpyError (a named problem) or gives
// a tensor whose shape matches its data; anything else (another exception,
// a crash) is a finding. A tensor that reads is written back (encodeNpy) and
// must read back with the same shape.
//
// Build and run: fuzz/run-fuzz.sh SECONDS npy (docs/fuzzing.md).
#include "host/npy.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {
[[noreturn]] void invariantBroken(const char* what) {
  std::cerr << "fuzz-npy: invariant broken: " << what << "\n";
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  formats::Tensor t;
  try {
    t = host::parseNpy(bytes, "fuzz.npy");
  } catch (const host::NpyError& e) {
    if (std::string(e.what()).empty()) invariantBroken("NpyError without a message");
    return 0;
  }
  if (t.w < 0 || t.z < 0 || t.r < 0 || t.c < 0 || uint64_t(t.w * t.z * t.r * t.c) != t.data.size())
    invariantBroken("tensor shape does not match its data");
  if (!t.rawBits.empty() && t.rawBits.size() != t.data.size()) invariantBroken("rawBits and data sizes differ");
  formats::Tensor back;
  try {
    back = host::parseNpy(host::encodeNpy(t), "again.npy");
  } catch (const host::NpyError& e) {
    invariantBroken((std::string("encodeNpy output does not read back: ") + e.what()).c_str());
  }
  if (!back.sameShape(t)) invariantBroken("encodeNpy/parseNpy changed the shape");
  return 0;
}
