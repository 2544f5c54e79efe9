// blobgen as a library: blob.yaml -> one overlay blob (.hex) per worker core
// with streams, and the --dump mode (.hex -> readable text). The tool
// (tools/blobgen/main.cpp) only parses flags. Manual: docs/blobgen.md.
#pragma once

#include "blob/blob_model.hpp"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tessera::blob {

struct BlobgenOptions {
  std::vector<std::string> inputs;  // blob.yaml of one epoch or several (or, with dump, one .hex file)
  std::string outDir;       // required unless dump; several inputs share it (file names carry the epoch)
  unsigned jobs = 0;        // inputs encoded at a time; 0: the machine's cores
  std::string output;       // dump only: write the text here instead of stdout
  std::optional<uint32_t> epoch;  // default: from a temporal_epoch_<E> path component, else 0 (one input only)
  std::string arch;         // default grayskull
  std::string device;       // SoC descriptor file or bundled name; overrides arch
  std::string cluster;      // cluster descriptor file; empty: no cluster checks (a blob.yaml cannot name its default)
  std::string depfile;      // one input only
  bool dump = false;
  bool stats = false;       // one summary line on stdout
  size_t maxErrors = 20;
  bool noWarnings = false;
};

// `pipegen_epoch<E>_<chip>_<y>_<x>.hex`, BUDA's name for a core's blob.
std::string hexFileName(uint32_t epoch, uint32_t chip, uint32_t y, uint32_t x);

// The tool: returns the exit code (0 written, 1 invalid input or write
// failure, 2 usage error).
int runBlobgen(const BlobgenOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::blob
