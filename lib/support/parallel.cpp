#include "support/parallel.hpp"

#include <sched.h>

namespace tessera {

unsigned defaultJobs() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

WorkerPool::WorkerPool(unsigned jobs) {
  for (unsigned t = 1; t < std::max(1u, jobs); ++t) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

// Calls are short (a simulated round): a waiting side first polls a little,
// yielding, before it sleeps on the condition variable.
constexpr int kPolls = 256;

void WorkerPool::parallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (threads_.empty() || n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // After a throw the remaining indices are skipped (next_ jumps past n).
  auto call = [&](size_t i) {
    thrown_.run([&] { fn(i); });
    if (thrown_.failed()) next_ = n;
  };
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    busy_ = static_cast<unsigned>(threads_.size());
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (size_t i = next_++; i < n; i = next_++) call(i);
  for (int p = 0; p < kPolls && busy_.load() != 0; ++p) std::this_thread::yield();
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return busy_.load() == 0; });
  fn_ = nullptr;
  thrown_.rethrow();
}

void WorkerPool::work() {
  uint64_t seen = 0;
  for (;;) {
    for (int p = 0; p < kPolls && generation_.load() == seen; ++p) std::this_thread::yield();
    const std::function<void(size_t)>* fn = nullptr;
    size_t n = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
      if (stop_) return;
      seen = generation_.load();
      fn = fn_;
      n = n_;
    }
    for (size_t i = next_++; i < n; i = next_++) {
      thrown_.run([&] { (*fn)(i); });
      if (thrown_.failed()) next_ = n;
    }
    if (busy_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.notify_one();
    }
  }
}

}  // namespace tessera
