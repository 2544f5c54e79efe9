// The MPI transport of sim::Cluster (cluster_transport.hpp): the ranks of
// MPI_COMM_WORLD, started by `mpirun -np K loader run --mpi ...`. Only the
// thread that made it calls MPI (the chips' worker threads never do).
#include "sim/cluster_transport.hpp"

#include <climits>
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

  std::vector<std::vector<uint8_t>> exchange(const std::vector<std::vector<uint8_t>>& out) override {
    const size_t k = static_cast<size_t>(ranks_);
    std::vector<int> sendSizes(k, 0), sendOffsets(k, 0), recvSizes(k, 0), recvOffsets(k, 0);
    std::vector<uint8_t> send;
    for (size_t r = 0; r < k && r < out.size(); ++r) {
      if (static_cast<int>(r) == rank_) continue;
      sendOffsets[r] = count(send.size());
      sendSizes[r] = count(out[r].size());
      send.insert(send.end(), out[r].begin(), out[r].end());
    }
    MPI_Alltoall(sendSizes.data(), 1, MPI_INT, recvSizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (size_t r = 0; r < k; ++r) {
      recvOffsets[r] = count(total);
      total += static_cast<size_t>(recvSizes[r]);
    }
    std::vector<uint8_t> recv(total);
    MPI_Alltoallv(send.data(), sendSizes.data(), sendOffsets.data(), MPI_BYTE, recv.data(), recvSizes.data(),
                  recvOffsets.data(), MPI_BYTE, MPI_COMM_WORLD);
    return split(recv, recvSizes, recvOffsets);
  }

private:
  static std::vector<std::vector<uint8_t>> split(const std::vector<uint8_t>& all, const std::vector<int>& sizes,
                                                 const std::vector<int>& offsets) {
    std::vector<std::vector<uint8_t>> parts(sizes.size());
    for (size_t r = 0; r < sizes.size(); ++r)
      parts[r].assign(all.begin() + offsets[r], all.begin() + offsets[r] + sizes[r]);
    return parts;
  }
  int rank_ = 0, ranks_ = 1;
};

}  // namespace

bool haveMpi() { return true; }

std::unique_ptr<ClusterTransport> makeMpiTransport(std::string& error) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    error = "MPI is already initialised in this process";
    return nullptr;
  }
  return std::make_unique<MpiTransport>();
}

#else

bool haveMpi() { return false; }

std::unique_ptr<ClusterTransport> makeMpiTransport(std::string& error) {
  error = "this build has no MPI (install OpenMPI: scripts/setup.sh, then configure again)";
  return nullptr;
}

#endif

}  // namespace tessera::sim
