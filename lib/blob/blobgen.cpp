// blobgen: read blob.yaml, split it per core, check and encode every core's
// overlay blob, then write them all (or nothing); and --dump.
#include "blob/blobgen.hpp"

#include "blob/blob_binary.hpp"
#include "blob/blob_yaml_reader.hpp"
#include "device/device_contract.h"
#include "device/soc_descriptor.hpp"
#include "device/device_cache.hpp"
#include "support/diagnostics.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"
#include "support/parallel.hpp"
#include "support/source.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>

namespace tessera::blob {

namespace {

const char* const kTool = "blobgen";

std::string hexStr(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The 1-based line of word `index` of the first segment of a .hex text (the
// segment's @ line is skipped); 0 when not found.
uint32_t lineOfWord(const std::string& text, uint64_t index) {
  uint32_t line = 0;
  bool inSegment = false;
  uint64_t seen = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + pos, end - pos);
    pos = end + 1;
    ++line;
    size_t first = l.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    if (l[first] == '@') {
      if (inSegment) return 0;
      inSegment = true;
      continue;
    }
    if (seen++ == index) return line;
  }
  return 0;
}

int runDump(const BlobgenOptions& opts, std::ostream& out, std::ostream& err, const PrintOptions& print) {
  auto text = readFile(opts.inputs.front());
  if (!text) {
    toolError(err, opts.inputs.front()) << "cannot read: " << text.error() << "\n";
    return 1;
  }
  SourceBuffer source(opts.inputs.front(), std::move(*text));
  DiagnosticEngine diags;
  auto segments = readHex(source.text());
  if (!segments) {
    // "line N: message"
    const std::string& error = segments.error();
    uint32_t line = 0;
    std::string message = error;
    if (size_t colon = error.find(": "); error.rfind("line ", 0) == 0 && colon != std::string::npos) {
      std::from_chars(error.data() + 5, error.data() + colon, line);
      message = error.substr(colon + 2);
    }
    diags.error("blob-hex", SourceLoc{line, line ? 1u : 0u}, message);
    printDiagnostics(err, source, diags, print);
    return 1;
  }
  const uint32_t base = contract::kOverlayBlobBase / 4;
  if (segments->size() != 1 || (*segments)[0].wordAddress != base) {
    std::string found = segments->empty() ? "no @address line"
                        : segments->size() > 1
                            ? std::to_string(segments->size()) + " segments"
                            : "@" + hexStr((*segments)[0].wordAddress).substr(2);
    diags.error("blob-hex", SourceLoc{1, 1},
                "expected one segment at word address " + hexStr(base) + " (L1 byte address " +
                    hexStr(contract::kOverlayBlobBase) + ", the overlay blob region), found " + found);
    printDiagnostics(err, source, diags, print);
    return 1;
  }
  const std::vector<uint32_t>& words = (*segments)[0].words;
  std::vector<uint8_t> bytes = wordsToBytes(words);
  auto blob = decodeCoreBlob(bytes);
  if (!blob) {
    const std::string& error = blob.error();
    // "offset 0x<o>: ..." -> the line of that word.
    uint32_t line = 0;
    if (size_t colon = error.find(':'); error.rfind("offset 0x", 0) == 0 && colon != std::string::npos) {
      uint64_t offset = 0;
      std::from_chars(error.data() + 9, error.data() + colon, offset, 16);
      line = lineOfWord(source.text(), offset / 4);
      if (line == 0) line = source.lineCount();  // past the last word: point at the end
    }
    diags.error("blob-decode", SourceLoc{line, line ? 1u : 0u}, "invalid overlay blob: " + error);
    printDiagnostics(err, source, diags, print);
    return 1;
  }
  // size_bytes: the blob's own total (header word 2; decoding checked it).
  std::string dump = dumpCoreBlob(*blob, words[kHdrTotalBytes], words[kHdrVersion]);
  if (opts.output.empty()) {
    out << dump;
    return 0;
  }
  if (auto written = writeFileAtomic(opts.output, dump); !written) {
    toolError(err, opts.output) << "cannot write: " << written.error() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

std::string hexFileName(uint32_t epoch, uint32_t chip, uint32_t y, uint32_t x) {
  return "pipegen_epoch" + std::to_string(epoch) + "_" + std::to_string(chip) + "_" + std::to_string(y) + "_" +
         std::to_string(x) + ".hex";
}

namespace {

std::string endpointText(uint32_t chip, uint32_t chan) {
  return "chip " + std::to_string(chip) + " channel " + std::to_string(chan);
}

// Several chips: every stream is on a chip of the cluster, and a phase that
// crosses a link (eth_sender / eth_receiver) names the stream at the other
// end of its ethernet core's link.
void checkCluster(const BlobYaml& yaml, const SocDescriptor& device, const ClusterDescriptor& cluster,
                  BlobYamlSourceMap& map, DiagnosticEngine& diags) {
  auto chanOf = [&](const StreamName& n) -> std::optional<uint32_t> {
    for (size_t k = 0; k < device.ethCores.size(); ++k)
      if (device.ethCores[k].x == static_cast<int64_t>(n.x) && device.ethCores[k].y == static_cast<int64_t>(n.y))
        return static_cast<uint32_t>(k);
    return std::nullopt;
  };
  auto peerOf = [&](EthEndpoint e) -> std::optional<EthEndpoint> {
    for (const EthLink& l : cluster.links) {
      if (l.a == e) return l.b;
      if (l.b == e) return l.a;
    }
    return std::nullopt;
  };
  for (const Stream& s : yaml.streams) {
    const SourceLoc loc = map.streams[s.name];
    if (!cluster.hasChip(s.name.chip)) {
      diags.error("blob-core", loc,
                  "stream " + streamNameString(s.name) + ": chip " + std::to_string(s.name.chip) +
                      " is not a chip of cluster '" + cluster.name + "' (" + std::to_string(cluster.chipCount()) +
                      " chips)");
      continue;
    }
    for (const StreamPhase& p : s.phases)
      for (const auto& [flag, list, name] : {std::tuple{p.ethSender, &p.dest, "eth_sender to"},
                                             std::tuple{p.ethReceiver, &p.src, "eth_receiver from"}}) {
        if (!flag || list->size() != 1) continue;  // the reader checked the shape
        const StreamName& other = list->front();
        const std::optional<uint32_t> mine = chanOf(s.name), theirs = chanOf(other);
        if (!mine) continue;  // the reader reported a flag off an ethernet core
        const auto peer = peerOf({s.name.chip, *mine});
        if (peer && theirs && peer->chip == other.chip && peer->chan == *theirs) continue;
        diags.error("blob-ethernet", loc,
                    streamNameString(s.name) + " phase_" + std::to_string(p.phaseId) + ": " + name + " " +
                        streamNameString(other) + ", which is not at the other end of this core's link in cluster '" +
                        cluster.name + "' (" + endpointText(s.name.chip, *mine) +
                        (peer ? " is linked to " + endpointText(peer->chip, peer->chan) : " has no link") + ")");
      }
  }
}

// One blob.yaml of temporal epoch `epoch` into opts.outDir (created once
// everything is encoded): every core's blob, or nothing. Messages to `err`, the --stats line to
// `out`. Returns the exit code.
int encodeOne(const BlobgenOptions& opts, const SocDescriptor& device, const ClusterDescriptor* cluster,
              const std::string& deviceFile,
              const std::string& input, uint32_t epoch, std::ostream& out, std::ostream& err) {
  PrintOptions print{opts.maxErrors, false, opts.noWarnings};
  auto text = readFile(input);
  if (!text) {
    toolError(err, input) << "cannot read blob.yaml: " << text.error() << "\n";
    return 1;
  }
  SourceBuffer source(input, std::move(*text));
  DiagnosticEngine diags;
  BlobReadOptions readOptions;
  readOptions.device = &device;
  BlobYamlSourceMap sourceMap;
  std::optional<BlobYaml> yaml = readBlobYaml(source, diags, readOptions, &sourceMap);
  // A blob.yaml does not say which default cluster its netlist had: the
  // cluster checks need --cluster.
  if (yaml && cluster) {
    const size_t before = diags.errorCount();
    checkCluster(*yaml, device, *cluster, sourceMap, diags);
    if (diags.errorCount() != before) yaml.reset();
  }

  // Per core: the encodability and size checks, then the words.
  struct Output {
    std::string path;
    std::string text;
  };
  std::vector<Output> outputs;
  size_t streams = 0, phases = 0;
  uint64_t largest = 0;
  std::string largestCore;
  if (yaml) {
    std::vector<CoreBlob> cores = splitByCore(*yaml, epoch);
    for (const CoreBlob& core : cores) {
      const std::string coreName = coreNameString(core.chip, core.y, core.x);
      const SourceLoc loc = core.streams.empty() ? SourceLoc{} : sourceMap.streams[core.streams.front().name];
      if (std::string problem = checkEncodable(core); !problem.empty()) {
        diags.error("blob-encode", loc, "core " + coreName + " (epoch " + std::to_string(epoch) + "): " + problem);
        continue;
      }
      EncodedBlob encoded = encodeCoreBlobWithin(core, contract::kOverlayBlobSize);
      const BlobSizeInfo& info = encoded.info;
      const uint64_t size = info.bytes;
      if (size > contract::kOverlayBlobSize) {
        diags.error("blob-size", loc,
                    "overlay blob of core " + coreName + " (epoch " + std::to_string(epoch) + ") needs " +
                        std::to_string(size) + " bytes, over the limit of " +
                        std::to_string(contract::kOverlayBlobSize) + " bytes")
            .note("the overlay blob region is L1 " + hexStr(contract::kOverlayBlobBase) + "-" +
                  hexStr(contract::kOverlayBlobBase + contract::kOverlayBlobSize) + " (kOverlayBlobSize)")
            .note("this core has " + std::to_string(info.streams) + " streams, " + std::to_string(info.phases) +
                  " phases" +
                  (info.loops ? " in " + std::to_string(info.records) + " phase records and " +
                                    std::to_string(info.loops) + " loop records"
                              : std::string()) +
                  " (" + std::to_string(kPhaseRecordWords * 4) + " bytes each), " +
                  std::to_string(info.configs) + " distinct phase configs (" +
                  std::to_string(kConfigRecordWords * 4) + " bytes each), " + std::to_string(info.refs) +
                  " src/dest entries and " + std::to_string(info.chunkWords) + " chunk list entries")
            .note(info.loops ? "that is with phase loops (layout version 6): the phases that are left do not repeat "
                               "with constant steps"
                             : "phase loops (layout version 6) do not make it smaller: no run of phases repeats "
                               "with constant steps (phase id, src_tile_offset, src_freed_tiles, chunk offsets)");
        continue;
      }
      const uint64_t corePhases = info.phases;
      streams += core.streams.size();
      phases += corePhases;
      if (size > largest) {
        largest = size;
        largestCore = coreName;
      }
      HexSegment seg{contract::kOverlayBlobBase / 4, std::move(encoded.words)};
      outputs.push_back(Output{(std::filesystem::path(opts.outDir) / hexFileName(epoch, core.chip, core.y, core.x)).string(),
                               writeHex({seg})});
    }
  }
  if (printDiagnostics(err, source, diags, print) > 0 || !yaml) return 1;

  // Everything is encoded: write it all, or nothing.
  std::error_code ec;
  std::filesystem::create_directories(opts.outDir, ec);
  if (ec) {
    toolError(err, opts.outDir) << "cannot create directory: " << ec.message() << "\n";
    return 1;
  }
  std::vector<std::string> written;
  for (const Output& o : outputs) {
    if (auto wrote = writeFileAtomic(o.path, o.text); !wrote) {
      toolError(err, o.path) << "cannot write: " << wrote.error() << "\n";
      for (const std::string& w : written) std::filesystem::remove(w, ec);
      return 1;
    }
    written.push_back(o.path);
  }
  // Blobs of this epoch left from an earlier run that no longer has them.
  {
    std::set<std::string> mine;
    for (const Output& o : outputs) mine.insert(std::filesystem::path(o.path).filename().string());
    const std::string prefix = "pipegen_epoch" + std::to_string(epoch) + "_";
    std::vector<std::filesystem::path> stale;
    for (const auto& entry : std::filesystem::directory_iterator(opts.outDir, ec)) {
      std::string name = entry.path().filename().string();
      if (name.rfind(prefix, 0) == 0 && name.size() > 4 && name.substr(name.size() - 4) == ".hex" && !mine.count(name))
        stale.push_back(entry.path());
    }
    for (const auto& p : stale) std::filesystem::remove(p, ec);
  }
  if (!opts.depfile.empty()) {
    std::vector<std::string> targets;
    for (const Output& o : outputs) targets.push_back(o.path);
    if (targets.empty()) targets.push_back(opts.outDir);
    if (auto written = writeDepfile(opts.depfile, targets, {input, deviceFile, opts.cluster}); !written) {
      toolError(err, opts.depfile) << "cannot write depfile: " << written.error() << "\n";
      return 1;
    }
  }
  if (opts.stats)
    out << kTool << ": epoch " << epoch << ", " << device.name << ": " << outputs.size() << " blobs, " << streams
        << " streams, " << phases << " phases; largest " << largest << " bytes"
        << (largestCore.empty() ? "" : " (" + largestCore + ")") << ", limit " << contract::kOverlayBlobSize << "\n";
  return 0;
}

}  // namespace

int runBlobgen(const BlobgenOptions& opts, std::ostream& out, std::ostream& err) {
  PrintOptions print{opts.maxErrors, false, opts.noWarnings};
  if (opts.inputs.empty()) {
    toolError(err, kTool) << "no input\n";
    return 2;
  }
  if (opts.dump) {
    if (opts.inputs.size() > 1) {
      toolError(err, kTool) << "--dump takes one .hex file\n";
      return 2;
    }
    if (!opts.cluster.empty()) {
      toolError(err, kTool) << "--dump takes a .hex file and prints it; --cluster does not apply\n";
      return 2;
    }
    if (!opts.outDir.empty() || !opts.depfile.empty() || opts.epoch) {
      toolError(err, kTool) << "--dump takes a .hex file and prints it; -o/--out-dir, --epoch and --depfile "
             "do not apply (use --output to write the text to a file)\n";
      return 2;
    }
    return runDump(opts, out, err, print);
  }
  if (opts.outDir.empty()) {
    toolError(err, kTool) << "-o/--out-dir is required (or --dump FILE.hex)\n"
        << "Run with --help for usage.\n";
    return 2;
  }
  if (!opts.output.empty()) {
    toolError(err, kTool) << "--output applies to --dump only\n";
    return 2;
  }
  if (opts.inputs.size() > 1 && (opts.epoch || !opts.depfile.empty())) {
    toolError(err, kTool) << "--epoch and --depfile take one input; with several, each epoch comes from its "
                    "path (temporal_epoch_<E>)\n";
    return 2;
  }
  std::optional<Arch> arch;
  if (!parseArchOption(opts.arch, kTool, err, arch)) return 2;
  DeviceCache devices;
  if (!opts.device.empty())
    if (int rc = devices.loadExplicit(opts.device, kTool, err, print)) return rc;
  const SocDescriptor& device = devices.explicitOr(arch.value_or(Arch::Grayskull));
  const ClusterDescriptor* cluster = nullptr;  // --cluster, parsed once for every input
  if (!opts.cluster.empty()) {
    if (int rc = devices.loadCluster(opts.cluster, kTool, err, print)) return rc;
    cluster = devices.clusterFor(device.arch, device, 1);
    if (!cluster) return 1;  // its errors are printed
  }

  // Every input's epoch (their blobs share -o): distinct, or they would
  // overwrite each other.
  std::vector<uint32_t> epochs;
  std::map<uint32_t, size_t> byEpoch;
  for (size_t i = 0; i < opts.inputs.size(); ++i) {
    epochs.push_back(opts.epoch ? *opts.epoch : epochFromPath(opts.inputs[i]).value_or(0));
    if (auto [it, added] = byEpoch.emplace(epochs.back(), i); !added) {
      toolError(err, kTool) << opts.inputs[it->second] << " and " << opts.inputs[i] << " are both temporal epoch "
          << epochs.back() << " (from their paths): their blobs would overwrite each other\n";
      return 2;
    }
  }
  return runPerInput(opts.inputs.size(), opts.jobs ? opts.jobs : defaultJobs(), out, err,
                     [&](size_t i, std::ostream& o, std::ostream& e) {
                       return encodeOne(opts, device, cluster, devices.explicitFile(), opts.inputs[i], epochs[i], o, e);
                     });
}


}  // namespace tessera::blob
