// A small worker pool for tools that take many independent inputs (hlkc's
// kernels, pipegen's and blobgen's epochs).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <cstddef>
#include <exception>
#include <ostream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace tessera {

// The default of a tool's -j: the CPUs this process may run on (its
// affinity mask, as nproc counts them; at least 1).
unsigned defaultJobs();

// What the first of several threads' calls threw, kept to rethrow on the
// calling thread once all have stopped (an exception escaping a std::thread
// would end the process). After a throw the remaining indices are skipped.
class FirstException {
public:
  template <class Fn>
  void run(Fn&& fn) {
    if (failed_.load()) return;
    try {
      fn();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_ = true;
    }
  }
  bool failed() const { return failed_.load(); }
  // Rethrows what was kept, if anything, and clears it for the next round.
  void rethrow() {
    failed_ = false;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

private:
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

// Calls fn(i) once for every i in [0, n), on up to `jobs` threads (the
// calling thread is one of them); returns when all calls have returned.
// Results go wherever fn puts them (per index, so the caller can report them
// in input order whatever the schedule). When a call throws, the calls not
// yet started are skipped and the exception is rethrown here.
template <class Fn>
void parallelFor(size_t n, unsigned jobs, Fn&& fn) {
  std::atomic<size_t> next{0};
  FirstException thrown;
  auto worker = [&] {
    for (size_t i = next++; i < n && !thrown.failed(); i = next++) thrown.run([&] { fn(i); });
  };
  std::vector<std::thread> pool;
  const size_t threads = std::min<size_t>(std::max(1u, jobs), n);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  thrown.rethrow();
}

// parallelFor's threads kept for many short calls (the simulated cluster
// runs every chip's round this way, thousands of rounds an epoch): the same
// contract, without starting and joining threads per call. One caller at a
// time.
class WorkerPool {
public:
  explicit WorkerPool(unsigned jobs);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  unsigned jobs() const { return static_cast<unsigned>(threads_.size()) + 1; }
  // Calls fn(i) once for every i in [0, n); returns when all have returned;
  // a call's exception is rethrown here, as parallelFor does.
  void parallelFor(size_t n, const std::function<void(size_t)>& fn);

private:
  void work();
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0;
  std::atomic<size_t> next_{0};
  std::atomic<uint64_t> generation_{0};  // one per call
  std::atomic<unsigned> busy_{0};        // workers still in the current call
  FirstException thrown_;                // of the current call
  bool stop_ = false;
};

// A tool run over several inputs: job(i, out, err) returns input i's exit
// code and writes its stdout and stderr text; each input's text is printed
// in input order once all are done, so the output does not depend on the
// schedule. Returns the worst exit code.
template <class Job>
int runPerInput(size_t n, unsigned jobs, std::ostream& out, std::ostream& err, Job&& job) {
  std::vector<std::ostringstream> outs(n), errs(n);
  std::vector<int> codes(n, 0);
  parallelFor(n, jobs, [&](size_t i) { codes[i] = job(i, outs[i], errs[i]); });
  int rc = 0;
  for (size_t i = 0; i < n; ++i) {
    out << outs[i].str();
    err << errs[i].str();
    rc = std::max(rc, codes[i]);
  }
  return rc;
}

}  // namespace tessera
