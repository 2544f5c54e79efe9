// How the processes running a sim::Cluster talk (docs/device-model.md,
// "Cluster", "Threads and MPI ranks"). Every process (rank) holds the whole
// cluster but runs only its own chips: chip c is on rank c mod K. The
// cluster's round logic (cluster.cpp) is one piece of code for both kinds:
//
//   LocalTransport   one process, every chip local: nothing crosses, the
//                    chips' rounds run on threads (the default);
//   MPI              K processes started by mpirun (cluster_mpi.cpp): each
//                    round's packets to other ranks' chips and every chip's
//                    round summary cross in one all-to-all.
//
// Every call is collective: every rank makes the same calls in the same order.
#pragma once
#include "device/cluster.hpp"
#include "sim/chip.hpp"
#include "sim/stream_engine.hpp"
#include "support/expected.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

class ClusterTransport {
public:
  virtual ~ClusterTransport() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // The rank that runs chip `chip`.
  int rankOf(ChipId chip) const { return static_cast<int>(chip % static_cast<uint32_t>(ranks())); }
  bool isLocal(ChipId chip) const { return rankOf(chip) == rank(); }
  // Every rank's `mine`, by rank.
  virtual std::vector<std::vector<uint8_t>> allGather(std::span<const uint8_t> mine) = 0;
  // `out[r]` (one per rank; this rank's own is not sent) to rank r; returns
  // what every rank sent this one, by rank.
  virtual std::vector<std::vector<uint8_t>> exchange(const std::vector<std::vector<uint8_t>>& out) = 0;
};

// One process: rank 0 of 1.
class LocalTransport final : public ClusterTransport {
public:
  int rank() const override { return 0; }
  int ranks() const override { return 1; }
  std::vector<std::vector<uint8_t>> allGather(std::span<const uint8_t> mine) override {
    return {std::vector<uint8_t>(mine.begin(), mine.end())};
  }
  std::vector<std::vector<uint8_t>> exchange(const std::vector<std::vector<uint8_t>>& out) override { return out; }
};

// The MPI transport: MPI_Init when made, MPI_Finalize when destroyed (once
// per process). A failure when this build has no MPI or MPI is already up.
Expected<std::unique_ptr<ClusterTransport>> makeMpiTransport();
bool haveMpi();

// Every chip's bytes on every rank: on entry `perChip` holds this rank's
// chips' entries (others are ignored), on return every rank's.
void shareByChip(ClusterTransport& net, std::map<ChipId, std::vector<uint8_t>>& perChip);

// Byte forms of what the ranks share (little-endian; the ranks run one
// build, so plain structs of numbers go as their bytes). Readers throw
// std::runtime_error on malformed input: the bytes come from another rank of
// the same build, a mismatch is a bug, not a user error.
class WireWriter {
public:
  std::vector<uint8_t> bytes;
  void u8(uint8_t v) { bytes.push_back(v); }
  void u32(uint32_t v);
  void u64(uint64_t v);
  void str(const std::string& s);
  void raw(const void* p, size_t n);
};
class WireReader {
public:
  explicit WireReader(std::span<const uint8_t> in) : in_(in) {}
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  std::string str();
  void raw(void* p, size_t n);
  bool done() const { return at_ == in_.size(); }
  size_t& at() { return at_; }
  std::span<const uint8_t> rest() const { return in_.subspan(at_); }

private:
  std::span<const uint8_t> in_;
  size_t at_ = 0;
};

void writeChipResult(WireWriter& w, const ChipRunResult& r);
ChipRunResult readChipResult(WireReader& r);
void writeEthSetup(WireWriter& w, const EthSetup& s);
EthSetup readEthSetup(WireReader& r);

}  // namespace tessera::sim
