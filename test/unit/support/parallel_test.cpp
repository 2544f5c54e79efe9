// parallelFor and WorkerPool carry a call's exception back to the caller
// (an exception escaping a worker thread would abort the process), skip the
// calls not yet started, and are usable again afterwards.
#include "support/parallel.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <new>
#include <stdexcept>
#include <vector>

using tessera::WorkerPool;

TEST_CASE("parallelFor rethrows a call's exception on the calling thread", "[parallel]") {
  for (unsigned jobs : {1u, 2u, 4u}) {
    std::atomic<size_t> calls{0};
    auto run = [&] {
      tessera::parallelFor(1000, jobs, [&](size_t i) {
        ++calls;
        if (i == 3) throw std::bad_alloc();
      });
    };
    CHECK_THROWS_AS(run(), std::bad_alloc);
    // Index 3 ran; with at most `jobs` calls in flight when it threw, the
    // rest of the 1000 were skipped.
    CHECK(calls.load() >= 4);
    CHECK(calls.load() < 1000);
  }
}

TEST_CASE("parallelFor without a throw calls every index once", "[parallel]") {
  std::vector<std::atomic<int>> seen(257);
  tessera::parallelFor(seen.size(), 3, [&](size_t i) { ++seen[i]; });
  for (auto& s : seen) CHECK(s.load() == 1);
}

TEST_CASE("WorkerPool rethrows and then runs the next call in full", "[parallel]") {
  WorkerPool pool(2);
  CHECK_THROWS_WITH(pool.parallelFor(100, [](size_t i) {
                      if (i == 10) throw std::runtime_error("index 10");
                    }),
                    "index 10");
  std::vector<std::atomic<int>> seen(100);
  pool.parallelFor(seen.size(), [&](size_t i) { ++seen[i]; });
  for (auto& s : seen) CHECK(s.load() == 1);
}
