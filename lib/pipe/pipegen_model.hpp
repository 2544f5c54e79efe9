// The in-memory form of one temporal epoch's pipegen.yaml: what net2pipe
// writes (lib/pipe) and pipegen reads (lib/pipegen). Field names follow the
// BUDA backend's pipegen.yaml so its users can read our files and our
// pipegen can read theirs (../shared/corpus/anchor-artifacts); see
// docs/pipegen-yaml.md for the meaning of every field.
//
// Typed members hold what the Tessera stages use. Any other field met while
// reading a BUDA-written file is kept in `extra` (file order) so a reader can
// warn about it and a writer can round-trip it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera::pipe {

// Ring size (tiles) of the streams pipegen adds beside the operand buffers
// (a DRAM read or gather multicast relayed by its first destination core, a
// DRAM writer of a gather): pipegen's default, which net2pipe reserves in
// the hosting core's L1 when it fits buffers.
inline constexpr uint32_t kExtraStreamRingTiles = 8;

// BUDA buffer ids are "uniqids"; a pipe's input_list may name a buffer plus
// a tile offset as uniqid + offset (scatter buffers), so ids stay 64-bit.
using BufferId = uint64_t;
using PipeId = uint64_t;

// Where a field came from in the file (1-based; 0 = not from a file).
struct SourcePos {
  uint32_t line = 0;
  uint32_t column = 0;
};

// A key/value we do not model, verbatim as scalar or flow text.
struct ExtraField {
  std::string key;
  std::string value;
  SourcePos pos;
};

// buffer_type values BUDA writes.
enum class BufferType {
  Unpacker,      // "unpacker": an op input operand buffer on a core (operand id 0-7)
  Packer,        // "packer": an op output buffer on a core (operand id 16-23)
  Intermediate,  // "intermediate": fused-op/matmul-spill buffer (24-31), never piped
  DramIo,        // "dram_io": a queue's DRAM buffer streamed by cores
  DramProlog,    // "dram_prolog": a queue's DRAM buffer copied into L1 at epoch start
  Relay,         // "relay": a forwarding buffer on a core (post-TM relays; Tessera: on ethernet cores)
  Ethernet,      // "ethernet": an ethernet_datacopy output on an ethernet core (multi-chip)
  Other,         // anything else; the text is kept in Buffer::bufferTypeText
};

// core_coordinates [255, 255]: a buffer in DRAM or host memory, not on a core.
inline constexpr uint32_t kDramCore = 255;

struct CoreCoord {
  uint32_t r = 0;  // worker grid row (logical), kDramCore for DRAM buffers
  uint32_t c = 0;
};

struct Buffer {
  BufferId uniqid = 0;         // document name buffer_<uniqid>
  std::string comment;         // text after '#' on the document line (op/queue, core, role)
  SourcePos pos;
  std::string mdOpName;        // md_op_name: op or queue name
  BufferType bufferType = BufferType::Other;
  std::string bufferTypeText;  // buffer_type as written
  uint32_t id = 0;             // id: operand index (0-7 in, 16-23 out, 24-31 intermediate) or 0
  uint32_t epochTiles = 0;     // epoch_tiles: tiles through this buffer in the epoch
  uint32_t tilesPerInput = 0;  // tiles_per_input: tiles of one input (microbatch entry)
  uint32_t chipId = 0;         // chip_id: [c]
  CoreCoord core;              // core_coordinates: [r, c]
  uint32_t sizeTiles = 0;      // size_tiles: L1 (or DRAM slot) capacity in tiles
  uint32_t scatterGatherNumTiles = 0;  // scatter_gather_num_tiles: chunk granularity
  bool isScatter = false;      // is_scatter
  uint32_t replicate = 0;      // replicate: scatter buffer copies (uniqid + k*offset)
  uint32_t tileSize = 0;       // tile_size: bytes per tile incl. header
  uint32_t tileClearGranularity = 0;  // tile_clear_granularity
  uint32_t overlayBlobSize = 0;       // overlay_blob_size (0 = default)
  bool dramIoFlagIsRemote = false;    // dram_io_flag_is_remote
  bool dramBufFlag = false;           // dram_buf_flag: prologue/epilogue DRAM buffer
  bool dramBufStreaming = false;      // dram_buf_streaming
  bool writeDramBufFlag = false;      // write_dram_buf_flag: epilogue write-back
  uint32_t dramChan = 0;              // dram_chan
  uint32_t dramSubChan = 0;           // dram_sub_chan
  uint64_t dramAddr = 0;              // dram_addr: byte address in the channel (queue header first)
  uint32_t qSlots = 0;                // q_slots: queue entries
  bool dramIoFlag = false;            // dram_io_flag: streamed DRAM queue
  bool dramIoAllowOverwrite = false;  // dram_io_allow_overwrite
  bool dramIoSkipFlowCtrl = false;    // dram_io_skip_flow_ctrl
  bool dramRamFlag = false;           // dram_ram_flag: ram (random access) rather than queue
  bool useShadowRdPtr = false;        // use_shadow_rd_ptr
  uint32_t prefetchType = 0;          // prefetch_type: 0 pre-TM, 1 post-TM prologue
  uint32_t ublockRt = 0, ublockCt = 0;        // ublock_rt, ublock_ct
  uint32_t mblockM = 0, mblockN = 0, mblockK = 0;  // mblock_m, mblock_n, mblock_k
  bool untilizedOutput = false;               // untilized_output
  uint32_t untilizedOutputFullRDim = 0;       // untilized_output_full_r_dim
  uint32_t untilizedOutputFullCDim = 0;       // untilized_output_full_c_dim
  uint32_t untilizedOutputRDim = 0;           // untilized_output_r_dim
  uint32_t untilizedOutputCDim = 0;           // untilized_output_c_dim
  uint32_t untilizedOutputZDim = 0;           // untilized_output_z_dim
  std::optional<std::string> dataFormat;      // Tessera addition: data_format (BUDA omits it)
  // Tessera addition: ethernet_chan, the channel of the ethernet core a
  // relay or ethernet buffer sits on (core_coordinates are then that
  // core's NOC [y, x]; docs/cluster.md "The data path").
  std::optional<uint32_t> ethernetChan;
  // Tessera addition: pcie_relay, a relay of a chain between chips without
  // ethernet (grayskull) on a worker core: its stream sends to, or receives
  // from, its partner on the other chip through the PCIe cores
  // (docs/cluster.md "Through the host").
  bool pcieRelay = false;
  bool chainRelay() const { return ethernetChan.has_value() || pcieRelay; }
  // Added by net2pipe (lib/pipe): padding buffers (pad TMs, input_N_pad).
  bool isPadding = false;                     // is_padding: every tile read from it is a constant tile
  std::optional<double> paddingValue;         // Tessera addition: padding_value (the constant; 0 when absent)
  std::vector<ExtraField> extra;
};

// One destination of a pipe: for a flat output_list each entry is one
// output buffer; a nested output_list ([[a], [b, c]]) is a time-multiplexed
// (periodic) pipe (several buffers in one inner list = multicast).
// Pass semantics (what pipegen implements, checked against the blob.yaml the
// BUDA backend's pipegen2 wrote for the anchors, e.g. the hstack/vstack and
// packer_serial_fork netlists): one PASS of a pipe sends every input_list
// entry once, in order; entry = uniqid + offset names the
// scatter_gather_num_tiles tiles at tile `offset` of the current PERIOD of
// that buffer (period = scatter_gather_num_tiles * replicate tiles for
// is_scatter buffers, scatter_gather_num_tiles otherwise; a repeated entry
// re-sends the same tiles). Each pass goes WHOLE to one inner output list,
// round robin: pass k to inner list k % N (NOT the input list split into
// parts). pipe_periodic_repeat R > 1: R consecutive passes read the same
// periods before the inputs move to their next period. docs/pipegen.md.
// net2pipe writes nested lists for multicasts of the same list that share
// one stream (R = slots x the list's repeats) and for readers that take
// successive periods of a packer, one slot each (R = the list's repeats;
// docs/net2pipe.md).
struct Pipe {
  PipeId id = 0;
  std::string comment;
  SourcePos pos;
  std::vector<BufferId> inputList;                 // input_list: chunks in send order
  std::vector<std::vector<BufferId>> outputList;   // output_list (flat list = one inner list)
  bool outputListNested = false;                   // written as [[...], ...]
  uint32_t pipePeriodicRepeat = 0;                 // pipe_periodic_repeat
  uint32_t pipeConsumerRepeat = 1;                 // pipe_consumer_repeat
  uint32_t incomingNocId = 0, outgoingNocId = 0;   // incoming_noc_id, outgoing_noc_id
  uint32_t incomingVc = 0, outgoingVc = 0;         // incoming_vc, outgoing_vc
  // mcast_core_rc: [chip, r, c] of the destination core(s), one per inner
  // output list when nested.
  std::vector<std::vector<uint32_t>> mcastCoreRc;
  std::vector<uint32_t> dramPipeTotalReaders;      // dram_pipe_total_readers
  std::vector<uint32_t> dramPipeReaderIndex;       // dram_pipe_reader_index
  std::vector<uint32_t> outputPaddingList;         // output_padding_list
  // mmio_pipe (BUDA's field): the pipe crosses chips through PCIe, not
  // ethernet (chips without ethernet, grayskull): its inputs are on one chip,
  // its outputs DRAM buffers of another, written through the writer's PCIe
  // core (docs/cluster.md, "Through the host").
  bool mmioPipe = false;
  std::vector<ExtraField> extra;
};

// Two readings of the same fields (added by pipegen; not a field of the
// file). They differ in two places only:
// - an input_list entry naming a NON-scatter buffer: BUDA (its net2pipe and
//   pipegen2) sends scatter_gather_num_tiles tiles per entry (a gather of
//   two packers interleaves them chunk by chunk; the buffer's period is one
//   chunk); Tessera's net2pipe (docs/pipegen-yaml.md) sends the buffer's
//   whole input, tiles_per_input tiles (the period is one input);
// - epoch_tiles of a scatter buffer: BUDA counts one of its `replicate`
//   chunks' share (tiles in the epoch = epoch_tiles x replicate); Tessera
//   counts every tile.
// pipegen's reader picks Tessera when the file's buffers carry data_format
// (only Tessera writes it), BUDA otherwise.
enum class Dialect { Buda, Tessera };

struct PipegenYaml {
  std::string graphName;          // graph_name (first document)
  // cluster_chips (first document; Tessera addition, several chips): the
  // chips of the cluster net2pipe routed over. Without --cluster pipegen
  // checks links against the arch's default topology for that many chips,
  // which an epoch using fewer chips cannot tell. 0: not given (one chip).
  uint32_t clusterChips = 0;
  uint32_t epoch = 0;             // temporal epoch (from the directory, not a field)
  std::vector<Buffer> buffers;    // file order
  std::vector<Pipe> pipes;        // file order
  Dialect dialect = Dialect::Tessera; // see above (added by pipegen)
};

}  // namespace tessera::pipe
