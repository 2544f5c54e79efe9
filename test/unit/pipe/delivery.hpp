// Test support for the pipe tests: what the pipes of one compiled epoch
// deliver, read the way docs/pipegen-yaml.md defines input_list (chunks of
// scatter buffers at offsets, whole inputs of other buffers, constant
// padding tiles, pipe_periodic_repeat), with relay and ethernet buffers
// holding what their one writing pipe delivers to them. Every producer's
// tile holds its own code, so a misplaced tile shows up by name.
#pragma once

#include "formats/blocking.hpp"
#include "netlist/blocking.hpp"
#include "pipe/net2pipe.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tessera::pipe::testing {

// Producer `id`'s tile (t, r, c) as one exactly representable float.
inline float code(int64_t id, int64_t t, int64_t r, int64_t c) {
  return static_cast<float>(id * 1000000 + t * 10000 + r * 100 + c);
}

// A tensor of `b`'s shape whose every tile holds producer `id`'s code.
inline formats::Tensor codedTensor(int64_t id, const formats::Blocking& b) {
  formats::Tensor x(1, b.t, b.rowTiles() * 32, b.colTiles() * 32);
  for (int64_t t = 0; t < b.t; ++t)
    for (int64_t r = 0; r < x.r; ++r)
      for (int64_t c = 0; c < x.c; ++c) x.at(0, t, r, c) = code(id, t, r / 32, c / 32);
  return x;
}

class Delivery {
public:
  // Producer ids: queues then ops, in netlist order. Queue cells stream
  // the queue's tiles in the cell's order; packers the op's own output
  // tiles in its order on each core (an op's packers are its cores,
  // row-major).
  Delivery(const netlist::Netlist& nl, const std::vector<QueueBufferInfo>& queueBuffers, const PipegenYaml& y)
      : y_(y) {
    int64_t id = 1;
    for (const auto& q : nl.queues) ids_[q.name] = id++;
    for (const auto& g : nl.graphs)
      for (const auto& op : g.ops) ids_[op.name] = id++;
    for (const Buffer& b : y.buffers) byId_[b.uniqid] = &b;
    for (const auto& q : nl.queues) {
      const formats::Blocking qb = netlist::blockingOf(q);
      for (const QueueBufferInfo& info : queueBuffers)
        if (info.queue == q.name) {
          std::vector<float>& s = streams_[info.uniqid];
          for (const auto& tc : formats::coreTileOrder(qb, info.cellR, info.cellC))
            s.push_back(code(ids_[q.name], tc.t, tc.rt, tc.ct));
        }
    }
    for (const auto& g : nl.graphs)
      for (const auto& op : g.ops) {
        const formats::Blocking ob = netlist::blockingOf(op);
        int64_t core = 0;
        for (const Buffer& b : y.buffers) {
          if (b.mdOpName != op.name || b.bufferType != BufferType::Packer) continue;
          std::vector<float>& s = streams_[b.uniqid];
          for (const auto& tc : formats::coreTileOrder(ob, core / ob.gridC, core % ob.gridC))
            s.push_back(code(ids_[op.name], tc.t, tc.rt, tc.ct));
          ++core;
        }
      }
  }

  int64_t idOf(const std::string& name) const { return ids_.at(name); }

  // What `dest` receives for one input.
  std::vector<float> received(BufferId dest) const {
    for (const Pipe& p : y_.pipes)
      for (size_t slot = 0; slot < p.outputList.size(); ++slot)
        for (BufferId o : p.outputList[slot])
          if (o == dest) return delivered(p, slot);
    FAIL("no pipe writes " << dest);
    return {};
  }

  // What output list `slot` of `p` receives for one input: of the
  // max(1, pipe_periodic_repeat) passes over the list, pass k goes to slot
  // k % (number of lists) (docs/pipegen-yaml.md); every pass of an input
  // reads the same tiles (each source's period is one input).
  std::vector<float> delivered(const Pipe& p, size_t slot) const {
    std::vector<float> out;
    const uint32_t passes = std::max<uint32_t>(1, p.pipePeriodicRepeat);
    const uint32_t slots = static_cast<uint32_t>(p.outputList.size());
    for (uint32_t rep = 0; rep < passes; ++rep) {
      if (rep % slots != slot) continue;
      for (BufferId e : p.inputList) {
        auto it = byId_.upper_bound(e);
        REQUIRE(it != byId_.begin());
        const Buffer& b = *std::prev(it)->second;
        if (b.isPadding) {
          out.push_back(static_cast<float>(b.paddingValue.value_or(0.0)));
          continue;
        }
        const std::vector<float>& s = stream(b);
        REQUIRE(s.size() == b.tilesPerInput);
        const uint64_t offset = e - b.uniqid;
        const uint64_t count = b.isScatter ? b.scatterGatherNumTiles : b.tilesPerInput;
        REQUIRE(offset + count <= s.size());
        out.insert(out.end(), s.begin() + static_cast<std::ptrdiff_t>(offset),
                   s.begin() + static_cast<std::ptrdiff_t>(offset + count));
      }
    }
    return out;
  }

private:
  // A source's tiles for one input; a relay or ethernet buffer's are what
  // its writing pipe delivers to it (worked out once).
  const std::vector<float>& stream(const Buffer& b) const {
    auto it = streams_.find(b.uniqid);
    if (it != streams_.end()) return it->second;
    REQUIRE((b.bufferType == BufferType::Relay || b.bufferType == BufferType::Ethernet));
    std::vector<float> s = received(b.uniqid);
    return streams_.emplace(b.uniqid, std::move(s)).first->second;
  }

  const PipegenYaml& y_;
  std::map<std::string, int64_t> ids_;
  std::map<BufferId, const Buffer*> byId_;
  mutable std::map<BufferId, std::vector<float>> streams_;
};

} // namespace tessera::pipe::testing
