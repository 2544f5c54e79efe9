#include "loader/foreign_pipes.hpp"

#include "hlk/config.hpp"
#include "netlist/enums.hpp"
#include "pipe/pipegen_yaml_writer.hpp"
#include "pipegen/pipegen_yaml_reader.hpp"
#include "support/file_io.hpp"

#include <algorithm>
#include <compare>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

namespace tessera::loader {

namespace fs = std::filesystem;

namespace {

struct ForeignFile {
  std::string path;
  pipe::PipegenYaml doc;
};

// DIR/temporal_epoch_<N>/pipegen.yaml or DIR/temporal_epoch_<N>/overlay/pipegen.yaml.
std::optional<std::string> pipegenFileOf(const fs::path& epochDir) {
  for (const fs::path& p : {epochDir / "pipegen.yaml", epochDir / "overlay" / "pipegen.yaml"}) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return std::nullopt;
}

// Every temporal_epoch_<N> of `dir`, read, in epoch order. "" or the error.
std::string readForeignFiles(const std::string& dir, std::vector<ForeignFile>& files) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "--pipes-from '" + dir + "': not a directory";
  std::map<uint32_t, std::string> byEpoch;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    unsigned epoch = 0;
    char tail = 0;
    if (!e.is_directory() || std::sscanf(name.c_str(), "temporal_epoch_%u%c", &epoch, &tail) != 1) continue;
    if (auto file = pipegenFileOf(e.path())) byEpoch.emplace(epoch, *file);
  }
  if (ec) return "--pipes-from '" + dir + "': " + ec.message();
  if (byEpoch.empty())
    return "--pipes-from '" + dir + "': no temporal_epoch_<N>/pipegen.yaml (nor temporal_epoch_<N>/overlay/pipegen.yaml)";
  for (const auto& [epoch, path] : byEpoch) {
    auto text = readFile(path);
    if (!text) return "cannot read '" + path + "': " + text.error();
    SourceBuffer source(path, std::move(*text));
    DiagnosticEngine diags;
    auto doc = pipegen::readPipegenYaml(source, diags, epoch);
    if (!doc) {
      std::ostringstream os;
      printDiagnostics(os, source, diags, PrintOptions{1});
      return os.str();
    }
    files.push_back(ForeignFile{path, std::move(*doc)});
  }
  return {};
}

// One operand buffer of an op on one core: how fitKernelBuffers finds the
// file's buffer for an operand of our kernel.
struct OperandSlot {
  std::string op;
  uint32_t operand;
  uint32_t r, c;
  auto operator<=>(const OperandSlot&) const = default;
};

// The data format of each buffer: the operand's format in our kernel's
// configuration, a queue's df, else that of the buffer a pipe links it to.
class KernelFit {
public:
  KernelFit(const netlist::Netlist& nl, const netlist::ValidationTarget& target) : nl_(nl), target_(target) {
    for (const auto& g : nl.graphs)
      for (const auto& op : g.ops) ops_.emplace(op.name, &op);
    for (const auto& q : nl.queues) queues_.emplace(q.name, &q);
  }

  std::string fill(pipe::PipegenYaml& doc, const std::string& path) {
    std::map<pipe::BufferId, size_t> index;
    for (size_t i = 0; i < doc.buffers.size(); ++i) {
      pipe::Buffer& b = doc.buffers[i];
      index.emplace(b.uniqid, i);
      if (!b.dataFormat)
        if (auto df = own(b)) b.dataFormat = std::string(netlist::dataFormatName(*df));
    }
    // A pipe entry may name a scatter buffer's uniqid plus an offset: the
    // buffer is the one with the largest uniqid not above it.
    auto bufferOf = [&](pipe::BufferId id) -> pipe::Buffer* {
      auto it = index.upper_bound(id);
      return it == index.begin() ? nullptr : &doc.buffers[std::prev(it)->second];
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (const pipe::Pipe& p : doc.pipes) {
        std::vector<pipe::Buffer*> linked;
        for (pipe::BufferId id : p.inputList) linked.push_back(bufferOf(id));
        for (const auto& dest : p.outputList)
          for (pipe::BufferId id : dest) linked.push_back(bufferOf(id));
        auto known = std::find_if(linked.begin(), linked.end(), [](const pipe::Buffer* b) { return b && b->dataFormat; });
        if (known == linked.end()) continue;
        for (pipe::Buffer* b : linked)
          if (b && !b->dataFormat) {
            b->dataFormat = (*known)->dataFormat;
            changed = true;
          }
      }
    }
    for (const pipe::Buffer& b : doc.buffers)
      if (!b.dataFormat)
        return path + ": buffer_" + std::to_string(b.uniqid) + " (md_op_name '" + b.mdOpName +
               "'): no data format: it is not an operand of that op's kernel nor a queue of the netlist, and no "
               "pipe links it to one";
    return {};
  }

  // The kernels are ours, so the buffers no pipe touches (intermediates and
  // partial sums, operands 24-31) are sized for our kernel's schedule, and
  // ones our kernel has and the file lacks are added on every core the file
  // places the op on; an input buffer holds at least what our kernel needs to
  // make progress. Without this our fused kernels wait on a full
  // intermediate BUDA sized for its own kernel.
  void fitKernelBuffers(pipe::PipegenYaml& doc) {
    pipe::BufferId next = 0;
    std::map<OperandSlot, pipe::Buffer*> byOperand;
    std::map<std::string, std::vector<const pipe::Buffer*>> opCores; // one buffer per core: the packer
    for (pipe::Buffer& b : doc.buffers) {
      next = std::max(next, b.uniqid + std::max<uint32_t>(1, b.replicate));
      byOperand[{b.mdOpName, b.id, b.core.r, b.core.c}] = &b;
      if (b.bufferType == pipe::BufferType::Packer && ops_.count(b.mdOpName)) opCores[b.mdOpName].push_back(&b);
    }
    std::vector<pipe::Buffer> added;
    for (const auto& [opName, packers] : opCores) {
      const hlk::KernelConfig* cfg = config(*ops_.at(opName));
      if (!cfg) continue;
      for (const hlk::OperandInfo& o : cfg->operands) {
        const bool internal = o.role == hlk::OperandRole::Intermediate || o.role == hlk::OperandRole::Spill;
        if (!internal && o.role != hlk::OperandRole::Input) continue;
        const auto tiles = static_cast<uint32_t>(o.minTiles);
        for (const pipe::Buffer* packer : packers) {
          auto it = byOperand.find({opName, static_cast<uint32_t>(o.operand), packer->core.r, packer->core.c});
          if (it != byOperand.end()) {
            pipe::Buffer& b = *it->second;
            if (internal) b.sizeTiles = b.scatterGatherNumTiles = b.epochTiles = tiles;
            else if (!b.isScatter) b.sizeTiles = std::max(b.sizeTiles, tiles);
            continue;
          }
          if (!internal) continue; // a missing input is the file's to explain (pipegen reports it)
          pipe::Buffer b;
          b.uniqid = next++;
          b.comment = "Op " + opName + ": kernel intermediate buf " + std::to_string(o.operand - 24) +
                      " (added for our kernel by loader --pipes-from)";
          b.mdOpName = opName;
          b.bufferType = pipe::BufferType::Intermediate;
          b.bufferTypeText = "intermediate";
          b.id = static_cast<uint32_t>(o.operand);
          b.chipId = packer->chipId;
          b.core = packer->core;
          b.sizeTiles = b.scatterGatherNumTiles = b.epochTiles = tiles;
          b.tileSize = netlist::tileSizeBytes(o.df); // 32x32: BUDA's files are for grayskull
          b.dataFormat = std::string(netlist::dataFormatName(o.df));
          added.push_back(std::move(b));
        }
      }
    }
    for (pipe::Buffer& b : added) doc.buffers.push_back(std::move(b));
  }

private:
  std::optional<netlist::DataFormat> own(const pipe::Buffer& b) {
    if (auto q = queues_.find(b.mdOpName); q != queues_.end() && q->second->df.present()) return q->second->df.value;
    auto op = ops_.find(b.mdOpName);
    if (op == ops_.end()) return std::nullopt;
    const hlk::KernelConfig* cfg = config(*op->second);
    if (!cfg) return std::nullopt;
    for (const hlk::OperandInfo& o : cfg->operands)
      if (o.operand == static_cast<int>(b.id)) return o.df;
    // An operand our kernel does not have (BUDA keeps a gradient op's
    // accumulator on operand 24): the format BUDA's operand numbering gives it.
    const netlist::Op& o = *op->second;
    if (b.id < 16 && b.id < o.inDf.size() && o.inDf[b.id].present()) return o.inDf[b.id].value;
    if (b.id >= 16 && b.id < 24 && o.outDf.present()) return o.outDf.value;
    if (b.id >= 24 && b.id < 32 && o.intermedDf.present()) return o.intermedDf.value;
    return std::nullopt;
  }

  const hlk::KernelConfig* config(const netlist::Op& op) {
    auto [it, fresh] = configs_.try_emplace(&op);
    if (fresh) {
      DiagnosticEngine ignored; // an op without a kernel fails in net2hlks, reported there
      it->second = hlk::configureOp(nl_, op, target_, ignored);
    }
    return it->second ? &*it->second : nullptr;
  }

  const netlist::Netlist& nl_;
  const netlist::ValidationTarget& target_;
  std::map<std::string, const netlist::Op*> ops_;
  std::map<std::string, const netlist::Queue*> queues_;
  std::map<const netlist::Op*, std::optional<hlk::KernelConfig>> configs_;
};

} // namespace

std::string importForeignPipes(const netlist::Netlist& nl, const netlist::ValidationTarget& target,
                               const std::string& dir, const std::vector<ForeignEpoch>& epochs) {
  std::vector<ForeignFile> files;
  if (std::string error = readForeignFiles(dir, files); !error.empty()) return error;
  KernelFit kernels(nl, target);
  for (const ForeignEpoch& e : epochs) {
    auto file = std::find_if(files.begin(), files.end(), [&](const ForeignFile& f) {
      return std::find(e.graphs.begin(), e.graphs.end(), f.doc.graphName) != e.graphs.end();
    });
    if (file == files.end()) {
      std::string graphs;
      for (const std::string& g : e.graphs) graphs += (graphs.empty() ? "'" : ", '") + g + "'";
      return "--pipes-from '" + dir + "': no pipegen.yaml has the graph_name of temporal epoch " +
             std::to_string(e.epoch) + " (" + graphs + ")";
    }
    pipe::PipegenYaml doc = file->doc;
    kernels.fitKernelBuffers(doc);
    if (std::string error = kernels.fill(doc, file->path); !error.empty()) return error;
    const std::string text = pipe::writePipegenYaml(doc);
    std::error_code ec;
    fs::create_directories(fs::path(e.output).parent_path(), ec);
    if (auto written = writeIfChanged(e.output, text); !written)
      return "cannot write '" + e.output + "': " + written.error();
  }
  return {};
}

} // namespace tessera::loader
