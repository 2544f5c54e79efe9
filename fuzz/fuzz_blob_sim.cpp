// Differential libFuzzer target: blob.yaml -> blobgen's encoding -> the
// simulated chip's stream engine. A blob.yaml that blobgen accepts (it reads
// against grayskull_10x12, every core blob encodable and within the overlay
// region) gives blobs the chip must either run or reject with a named fault:
// the run ends done, fault (with a category and a message), hang or at the
// cycle limit, never in a crash, a sanitizer report or a hang of the
// simulator itself. The cores run no kernels, so operand streams wait for a
// packer or a kernel pop that never comes: those runs end as hangs, which is
// an answer too. DRAM starts empty (unwritten queue headers read as 0).
//
// Build and run: fuzz/run-fuzz.sh SECONDS blob-sim (docs/fuzzing.md).
#include "blob/blob_binary.hpp"
#include "blob/blob_yaml_reader.hpp"
#include "device/device_contract.h"
#include "fuzz_reader_common.hpp"
#include "sim/chip.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {

using namespace tessera;

// Enough rounds for the small blobs of the seeds to finish; a fuzzed
// num_iters_in_epoch of 2^32 stops here (cycle-limit) instead of timing out.
constexpr uint64_t kMaxCycles = 1 << 18;
// Each core's blob is decoded, configured and stepped: bound the work per input.
constexpr size_t kMaxCores = 32;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const SocDescriptor grayskull = loadBundledDescriptor("grayskull_10x12");
  SourceBuffer source("blob.yaml", std::string(reinterpret_cast<const char*>(data), size));
  DiagnosticEngine diags;
  blob::BlobReadOptions options;
  options.device = &grayskull;
  auto yaml = blob::readBlobYaml(source, diags, options, nullptr);
  fuzz::checkDiagnostics("fuzz-blob-sim", yaml.has_value(), source, diags);
  if (!yaml) return 0;
  const bool verbose = std::getenv("FUZZ_BLOB_SIM_VERBOSE") != nullptr;
  std::vector<blob::CoreBlob> cores = blob::splitByCore(*yaml, 0);
  if (verbose) std::cerr << "  " << cores.size() << " core blobs\n";
  if (cores.empty() || cores.size() > kMaxCores) return 0;
  std::vector<std::vector<uint32_t>> words;
  for (const blob::CoreBlob& core : cores) {
    if (!blob::checkEncodable(core).empty()) return 0;  // blobgen rejects the file
    blob::EncodedBlob encoded = blob::encodeCoreBlobWithin(core, contract::kOverlayBlobSize);
    if (encoded.info.bytes > contract::kOverlayBlobSize) return 0;  // blob-size: rejected too
    words.push_back(std::move(encoded.words));
  }

  sim::Chip chip(grayskull);
  chip.beginEpoch();
  for (size_t i = 0; i < cores.size(); ++i) {
    std::string error;
    const CoreCoord noc{static_cast<int>(cores[i].x), static_cast<int>(cores[i].y)};
    // Not a worker (an ethernet, DRAM or PCIe core): the loader would not place it either.
    if (!chip.loadBlobWords(noc, words[i], error) && error.empty())
      fuzz::invariantBroken("fuzz-blob-sim", "a blob the chip refused to load, without a reason");
  }
  sim::ChipRunOptions run;
  run.maxCycles = kMaxCycles;
  const sim::ChipRunResult result = chip.runEpoch(run);
  // FUZZ_BLOB_SIM_VERBOSE=1: what each input reached (the seeds' coverage, by hand).
  if (std::getenv("FUZZ_BLOB_SIM_VERBOSE"))
    std::cerr << "  " << cores.size() << " cores, " << sim::chipStopName(result.stop) << " at cycle " << result.cycles
              << ", " << result.streams.tilesMoved() << " tile transfers: "
              << result.message.substr(0, result.message.find('\n')) << "\n";
  if (result.message.empty()) fuzz::invariantBroken("fuzz-blob-sim", "a run ended without a report");
  if (result.stop == sim::ChipStop::Fault && (result.faultCategory.empty() || result.faultCore.empty()))
    fuzz::invariantBroken("fuzz-blob-sim", "a fault without a category or a core");
  if (result.stop == sim::ChipStop::Done && result.cycles > kMaxCycles + 1000000)
    fuzz::invariantBroken("fuzz-blob-sim", "a run reported done far past its cycle limit");
  return 0;
}
