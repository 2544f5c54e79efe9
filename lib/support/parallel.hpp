// A small worker pool for tools that take many independent inputs (hlkc's
// kernels, pipegen's and blobgen's epochs).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace tessera {

// The default of a tool's -j: the CPUs this process may run on (its
// affinity mask, as nproc counts them; at least 1).
unsigned defaultJobs();

// Calls fn(i) once for every i in [0, n), on up to `jobs` threads (the
// calling thread is one of them); returns when all calls have returned. fn
// must not throw; results go wherever fn puts them (per index, so the
// caller can report them in input order whatever the schedule).
template <class Fn>
void parallelFor(size_t n, unsigned jobs, Fn&& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> pool;
  const size_t threads = std::min<size_t>(std::max(1u, jobs), n);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace tessera
