// Replays fuzz inputs through a fuzz harness without libFuzzer: the ctest
// `fuzz-replay-<target>` tests run every seed and every kept regression
// input (fuzz/seeds/<target>/, fuzz/regressions/<target>/) through the
// target's LLVMFuzzerTestOneInput in the normal build, so a fixed finding
// that comes back fails ctest (docs/fuzzing.md). A harness signals a broken
// invariant with abort(); a crash, an uncaught exception or a hang (ctest's
// timeout) fails the test too.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " FILE...\n";
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::cerr << argv[i] << ": cannot read\n";
      return 2;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::cerr << "replay " << argv[i] << " (" << bytes.size() << " bytes)\n";
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::cerr << "replayed " << (argc - 1) << " inputs\n";
  return 0;
}
