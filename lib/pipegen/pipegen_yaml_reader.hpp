// pipegen.yaml reader: the `---`-separated documents net2pipe writes (ours,
// lib/pipe/pipegen_yaml_writer.hpp, and the BUDA backend's, as in
// ../shared/corpus/anchor-artifacts) into the model of lib/pipe/pipegen_model.hpp.
//
// Every problem is a diagnostic with the file position of the offending
// node (rule ids in brackets, docs/pipegen.md lists them all):
//   [yaml-syntax]      not YAML
//   [pipegen-yaml]     a document or field of the wrong shape: not a map,
//                      missing required field, wrong type, value out of range,
//                      duplicate buffer or pipe id, uniqid/id not matching
//                      the document name
//   [unknown-buffer]   a pipe names a buffer id that no buffer document
//                      defines (or an offset beyond the buffer's period)
//   [unknown-field]    warning: a field neither Tessera nor BUDA writes
//                      (kept in `extra`)
// BUDA fields Tessera does not model are kept in `extra` silently.
#pragma once
#include "pipe/pipegen_model.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <optional>
#include <string_view>

namespace tessera::pipegen {

// Parses the whole file. Returns nullopt when any error was reported (the
// reader still reports every problem it can find, not only the first).
// `epoch` is stored in the result (the file does not name it).
std::optional<pipe::PipegenYaml> readPipegenYaml(const SourceBuffer& source, DiagnosticEngine& diags,
                                                 uint32_t epoch = 0);

// Buffer period helpers shared by the reader's checks and the stream builder
// (docs/pipegen.md, "Passes and periods"); `d` as in pipe::Dialect.
//
// Tiles one input_list entry names: scatter_gather_num_tiles; for a
// non-scatter buffer in the Tessera dialect tiles_per_input (its whole
// input; scatter_gather_num_tiles when tiles_per_input is 0).
uint64_t entryTiles(const pipe::Buffer& b, pipe::Dialect d);
// Tiles of one period: scatter_gather_num_tiles * replicate for is_scatter
// buffers (replicate 0 counts as 1), entryTiles otherwise.
uint64_t periodTiles(const pipe::Buffer& b, pipe::Dialect d);
// Tiles through the buffer in the epoch: epoch_tiles, times replicate for a
// scatter buffer in the BUDA dialect.
uint64_t epochTotalTiles(const pipe::Buffer& b, pipe::Dialect d);

} // namespace tessera::pipegen
