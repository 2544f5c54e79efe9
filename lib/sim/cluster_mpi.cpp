// The MPI transport of sim::Cluster (cluster_transport.hpp): the ranks of
// MPI_COMM_WORLD, started by `mpirun -np K loader run --mpi ...`. Only the
// thread that made it calls MPI (the chips' worker threads never do).
#include "sim/cluster_transport.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#ifdef TESSERA_HAVE_MPI
#include <mpi.h>
#endif

namespace tessera::sim {

#ifdef TESSERA_HAVE_MPI

namespace {

int count(size_t n) {
  if (n > static_cast<size_t>(INT_MAX)) throw std::runtime_error("cluster transport: a message over 2 GiB");
  return static_cast<int>(n);
}

class MpiTransport final : public ClusterTransport {
public:
  MpiTransport() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
  }
  ~MpiTransport() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }

  std::vector<std::vector<uint8_t>> allGather(std::span<const uint8_t> mine) override {
    int n = count(mine.size());
    std::vector<int> sizes(static_cast<size_t>(ranks_)), offsets(static_cast<size_t>(ranks_));
    MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int r = 0; r < ranks_; ++r) {
      offsets[static_cast<size_t>(r)] = count(total);
      total += static_cast<size_t>(sizes[static_cast<size_t>(r)]);
    }
    std::vector<uint8_t> all(total);
    MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD);
    return split(all, sizes, offsets);
  }

  // One round's exchange in one collective: every message goes in a
  // fixed-size slot of an MPI_Alltoall (its length first); what does not fit
  // follows point to point, which only the two ranks concerned wait for.
  // (An MPI_Alltoall of sizes and an MPI_Alltoallv of bytes would be two
  // synchronisations per round.)
  std::vector<std::vector<uint8_t>> exchange(const std::vector<std::vector<uint8_t>>& out) override {
    const size_t k = static_cast<size_t>(ranks_);
    std::vector<uint8_t> send(k * slot_, 0), recv(k * slot_, 0);
    for (size_t r = 0; r < k; ++r) {
      const size_t n = r < out.size() && static_cast<int>(r) != rank_ ? out[r].size() : 0;
      uint8_t* at = send.data() + r * slot_;
      for (int i = 0; i < 8; ++i) at[i] = static_cast<uint8_t>(uint64_t{n} >> (8 * i));
      if (n) std::memcpy(at + 8, out[r].data(), std::min(n, slot_ - 8));
    }
    MPI_Alltoall(send.data(), count(slot_), MPI_BYTE, recv.data(), count(slot_), MPI_BYTE, MPI_COMM_WORLD);
    std::vector<std::vector<uint8_t>> in(k);
    std::vector<MPI_Request> requests;
    for (size_t r = 0; r < k; ++r) {
      const size_t n = r < out.size() && static_cast<int>(r) != rank_ ? out[r].size() : 0;
      if (n > slot_ - 8) {
        requests.emplace_back();
        MPI_Isend(out[r].data() + (slot_ - 8), count(n - (slot_ - 8)), MPI_BYTE, static_cast<int>(r), kTag,
                  MPI_COMM_WORLD, &requests.back());
      }
    }
    for (size_t r = 0; r < k; ++r) {
      const uint8_t* at = recv.data() + r * slot_;
      uint64_t n = 0;
      for (int i = 0; i < 8; ++i) n |= uint64_t{at[i]} << (8 * i);
      in[r].resize(n);
      std::memcpy(in[r].data(), at + 8, std::min<size_t>(n, slot_ - 8));
      if (n > slot_ - 8)
        MPI_Recv(in[r].data() + (slot_ - 8), count(n - (slot_ - 8)), MPI_BYTE, static_cast<int>(r), kTag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (!requests.empty()) MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    return in;
  }

private:
  static std::vector<std::vector<uint8_t>> split(const std::vector<uint8_t>& all, const std::vector<int>& sizes,
                                                 const std::vector<int>& offsets) {
    std::vector<std::vector<uint8_t>> parts(sizes.size());
    for (size_t r = 0; r < sizes.size(); ++r)
      parts[r].assign(all.begin() + offsets[r], all.begin() + offsets[r] + sizes[r]);
    return parts;
  }
  static constexpr int kTag = 17;
  int rank_ = 0, ranks_ = 1;
  // A round message's slot: room for a round summary of many chips and a
  // few tiles (a 2080-byte tile is about 2.2 KB with its header).
  // TESSERA_MPI_SLOT=<bytes> changes it (tests take the overflow path).
  size_t slot_ = slotBytes();
  static size_t slotBytes() {
    const char* env = std::getenv("TESSERA_MPI_SLOT");
    const long v = env ? std::strtol(env, nullptr, 10) : 0;
    return v >= 16 ? static_cast<size_t>(v) : size_t{32} * 1024;
  }
};

}  // namespace

bool haveMpi() { return true; }

Expected<std::unique_ptr<ClusterTransport>> makeMpiTransport() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return Failure{"MPI is already initialised in this process"};
  return std::unique_ptr<ClusterTransport>(std::make_unique<MpiTransport>());
}

#else

bool haveMpi() { return false; }

Expected<std::unique_ptr<ClusterTransport>> makeMpiTransport() {
  return Failure{"this build has no MPI (install OpenMPI: scripts/setup.sh, then configure again)"};
}

#endif

}  // namespace tessera::sim
