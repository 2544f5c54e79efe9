// blob.yaml writer: the BUDA shape (`dram_blob:`, then `phase_<n>:` maps of
// `chip_<c>__y_<y>__x_<x>__stream_id_<s>:` -> fields, BUDA field names) of a
// blob::BlobYaml (lib/blob/blob_model.hpp). Every field it writes is listed
// in docs/blob-yaml.md; schemas/blob.schema.json accepts the result.
#pragma once
#include "blob/blob_model.hpp"

#include <map>
#include <string>

namespace tessera::pipegen {

// `chip_<c>__y_<y>__x_<x>__stream_id_<s>`.
std::string streamKey(const blob::StreamName& n);

struct BlobYamlHeader {
  std::string graphName;
  uint32_t epoch = 0;
  std::string device;  // soc descriptor name
  std::string source;  // the pipegen.yaml file name (no directories)
};

// The whole file. `comments` (optional) describe streams (op/queue, role,
// core): written after the stream's key. Phase `n` of every stream is
// written under `phase_<n>`. Deterministic: streams in name order.
std::string writeBlobYaml(const blob::BlobYaml& blob, const std::map<blob::StreamName, std::string>& comments = {},
                          const BlobYamlHeader* header = nullptr);

} // namespace tessera::pipegen
