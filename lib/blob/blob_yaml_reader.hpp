// blob.yaml reader: Tessera's (written by lib/pipegen) and the BUDA
// backend's pipegen2 output alike, into the BlobYaml model, with
// file:line:col diagnostics; then the split into one CoreBlob per core.
// The rules (BUDA flag normalization, multicast rectangles, dram_blob merge)
// are in docs/blobgen.md, "Reading blob.yaml".
#pragma once

#include "blob/blob_model.hpp"
#include "device/soc_descriptor.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::blob {

// `chip_<c>__y_<y>__x_<x>__stream_id_<s>`; nullopt for any other spelling or
// a number over 32 bits.
std::optional<StreamName> parseStreamName(std::string_view text);
std::string streamNameString(const StreamName& name);
// `chip_<c>__y_<y>__x_<x>` of a core.
std::string coreNameString(uint32_t chip, uint32_t y, uint32_t x);

// Where things were written, for diagnostics of later stages (blobgen's size
// check): the key of the first phase map of every stream.
struct BlobYamlSourceMap {
  std::map<StreamName, SourceLoc> streams;
};

struct BlobReadOptions {
  // Worker cores: multicast rectangles expand to the workers inside them,
  // and every stream, src and dest must name a worker. Null: no worker
  // checks, rectangles expand to every NOC coordinate inside them.
  const SocDescriptor* device = nullptr;
};

// Parses a whole blob.yaml. Problems are reported on `diags` (rules
// blob-yaml, blob-stream-name, blob-field, blob-phase-id, blob-duplicate,
// blob-phase-role, blob-mcast, blob-core, blob-dram, blob-dangling; warnings
// blob-unknown-key, blob-phase-role); returns nullopt when there was an
// error. Never throws.
std::optional<BlobYaml> readBlobYaml(const SourceBuffer& source, DiagnosticEngine& diags,
                                     const BlobReadOptions& options = {}, BlobYamlSourceMap* sourceMap = nullptr);

// One CoreBlob per core that has at least one stream, sorted by (chip, y, x);
// each with its streams sorted by id.
std::vector<CoreBlob> splitByCore(const BlobYaml& yaml, uint32_t epoch);

// DataFormatCode names (device_contract.h order) for the `data_format` field:
// "Float16_b" -> 2. nullopt for an unknown name.
std::optional<uint32_t> dataFormatCode(std::string_view name);

}  // namespace tessera::blob
