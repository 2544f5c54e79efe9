// `loader run --pipes-from DIR`: the pipegen.yaml files another net2pipe
// wrote (BUDA's, or ours from another build) go through our pipegen, blobgen
// and the simulated chip in place of our net2pipe's.
//
// Our device contract needs one fact BUDA's files leave out: the data format
// of every buffer. Our firmware fills each kernel operand's format from the
// overlay blob, where BUDA compiles it into the kernel. The import takes it
// from the netlist (the operand's format in our kernel's configuration, a
// queue's df) and, for buffers that are neither (relays), from the buffer a
// pipe links them to. The copy keeps the source's tile counting: a BUDA file
// is marked `dialect: buda` (docs/pipegen-yaml.md, "Importing another
// net2pipe's files").
#pragma once

#include "netlist/model.hpp"
#include "netlist/validator.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::loader {

// One temporal epoch of our net2pipe's index (epochs.yaml) to take from DIR.
struct ForeignEpoch {
  uint32_t epoch = 0;
  std::vector<std::string> graphs; // the epoch's graphs, as epochs.yaml lists them
  std::string output;              // where the annotated pipegen.yaml goes
};

// For every epoch, finds the file of DIR whose graph_name is one of the
// epoch's graphs (DIR/temporal_epoch_<N>/pipegen.yaml, as anchor-artifacts
// and BUDA's net2pipe lay them out, or .../overlay/pipegen.yaml, as ours
// does), adds the data formats and writes it to `output` (atomically, only
// when its bytes change). Returns "" or the first error, which names the file
// and the buffer or epoch.
std::string importForeignPipes(const netlist::Netlist& nl, const netlist::ValidationTarget& target,
                               const std::string& dir, const std::vector<ForeignEpoch>& epochs);

} // namespace tessera::loader
