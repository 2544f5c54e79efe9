// pipegen.yaml text from the in-memory model (pipegen_model.hpp): the
// `graph_name` document, then one `buffer_<uniqid>` document per buffer and
// one `pipe_<id>` document per pipe, in the model's order, each field in the
// order the BUDA backend's net2pipe writes it (docs/pipegen-yaml.md).
#pragma once
#include "pipe/pipegen_model.hpp"

#include <string>

namespace tessera::pipe {

// BUDA spelling of a buffer type ("unpacker", "dram_io", ...); Other gives
// the buffer's bufferTypeText.
std::string bufferTypeName(const Buffer& b);

// The whole file. Deterministic: the same model gives the same bytes. Fields
// kept in `extra` are written where BUDA writes a field of that name, the
// others after the known fields, in their order.
std::string writePipegenYaml(const PipegenYaml& doc);

} // namespace tessera::pipe
