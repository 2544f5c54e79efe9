// The golden target's range evaluation: the same values whatever the thread
// count and range size, inputs shared by every entry stacked per range, and
// a failure reported from one evaluation of all entries.
#include "loader/entry_ranges.hpp"

#include "golden/ops.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <string>

using tessera::formats::Tensor;
using namespace tessera::loader;

namespace {

Tensor ramp(int64_t w, int64_t z, int64_t r, int64_t c, float base) {
  Tensor t(w, z, r, c);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = base + static_cast<float>(i);
  return t;
}

// out[w] = in0[w] * 2 + in1[w or 0]: entry by entry, so a range split cannot
// change a value; records the w of every call.
struct Recorder {
  std::vector<int64_t> calls;
  Tensor operator()(std::span<const Tensor> in) {
    calls.push_back(in[0].w);
    Tensor out(in[0].w, in[0].z, in[0].r, in[0].c);
    const size_t per = static_cast<size_t>(in[0].z * in[0].r * in[0].c);
    for (size_t i = 0; i < out.data.size(); ++i) {
      const size_t j = in[1].w == 1 ? i % per : i;
      out.data[i] = in[0].data[i] * 2 + in[1].data[j];
    }
    return out;
  }
};

Tensor expected(const Tensor& a, const Tensor& b) {
  Tensor out(a.w, a.z, a.r, a.c);
  const size_t per = static_cast<size_t>(a.z * a.r * a.c);
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = a.data[i] * 2 + b.data[b.w == 1 ? i % per : i];
  return out;
}

} // namespace

TEST_CASE("evalByEntries: every thread count gives the values of one evaluation", "[loader][entry-ranges]") {
  const Tensor a = ramp(7, 2, 1, 3, 0.5f), b = ramp(7, 2, 1, 3, 100.0f);
  for (unsigned threads : {1u, 2u, 3u, 7u, 16u}) {
    std::mutex m;
    std::vector<int64_t> widths;
    Tensor out = evalByEntries({a, b}, threads, [&](std::span<const Tensor> in) {
      {
        std::lock_guard lock(m);
        widths.push_back(in[0].w);
      }
      return Recorder{}(in);
    });
    const Tensor want = expected(a, b);
    CHECK(out.w == 7);
    CHECK(out.data == want.data);
    int64_t sum = 0;
    for (int64_t w : widths) sum += w;
    CHECK(sum == 7);  // each entry evaluated once
    CHECK(widths.size() == std::min<size_t>(threads, 7));
  }
}

TEST_CASE("evalByEntries: a whole input goes to every range as it is", "[loader][entry-ranges]") {
  const Tensor a = ramp(6, 1, 2, 2, 1.0f), weight = ramp(1, 1, 2, 2, -3.0f);
  Tensor out = evalByEntries({a, weight}, 3, Recorder{}, {false, true});
  CHECK(out.data == expected(a, weight).data);
}

TEST_CASE("evalByEntries: RawUInt32 words travel with the first range's inputs", "[loader][entry-ranges]") {
  Tensor words = ramp(4, 1, 1, 2, 0.0f);
  for (size_t i = 0; i < words.data.size(); ++i) words.rawBits.push_back(0xf0000000u + static_cast<uint32_t>(i));
  std::mutex m;
  std::vector<uint32_t> seen(8, 0);
  evalByEntries({words}, 2, [&](std::span<const Tensor> in) {
    REQUIRE(in[0].rawBits.size() == in[0].data.size());
    std::lock_guard lock(m);
    for (size_t i = 0; i < in[0].rawBits.size(); ++i) seen[static_cast<size_t>(in[0].data[i])] = in[0].rawBits[i];
    return in[0];
  });
  for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == 0xf0000000u + i);
}

TEST_CASE("evalByEntries: a failure is reported from one evaluation of every entry", "[loader][entry-ranges]") {
  const Tensor a = ramp(8, 1, 1, 1, 0.0f), b = ramp(8, 1, 1, 1, 0.0f);
  // Fails when entry 5 is in the call; the message names the entries it saw.
  auto failing = [](std::span<const Tensor> in) -> Tensor {
    for (float v : in[0].data)
      if (v == 5.0f)
        throw tessera::golden::GoldenError("saw " + std::to_string(in[0].w) + " entries, first " +
                                           std::to_string(in[0].data.front()));
    return in[0];
  };
  for (unsigned threads : {1u, 2u, 4u}) {
    try {
      evalByEntries({a, b}, threads, failing);
      FAIL("no error");
    } catch (const tessera::golden::GoldenError& e) {
      CHECK(std::string(e.what()) == "saw 8 entries, first 0.000000");
    }
  }
}

TEST_CASE("evalInRanges: a repeated input is stacked per range, values as one evaluation", "[loader][entry-ranges]") {
  const Tensor a = ramp(10, 1, 2, 2, 0.25f), weight = ramp(1, 1, 2, 2, 7.0f);
  const Tensor want = expected(a, weight);
  // rangeBytes of 3 entries of the weight: ranges of 3, 3, 3, 1.
  const size_t weightBytes = weight.data.size() * sizeof(float);
  for (size_t rangeBytes : {weightBytes * 3, weightBytes * 100, size_t{1}}) {
    for (unsigned threads : {1u, 2u}) {
      std::mutex m;
      std::vector<int64_t> stackedWidths;
      Tensor out = evalInRanges({a, weight}, {false, true}, {false, false}, 10, threads,
                                [&](std::span<const Tensor> in) {
                                  {
                                    std::lock_guard lock(m);
                                    stackedWidths.push_back(in[1].w);
                                    REQUIRE(in[1].w == in[0].w);  // the weight stacked to the range's entries
                                  }
                                  return Recorder{}(in);
                                },
                                rangeBytes);
      CHECK(out.w == 10);
      CHECK(out.data == want.data);
      int64_t sum = 0;
      for (int64_t w : stackedWidths) sum += w;
      CHECK(sum == 10);
      if (rangeBytes == weightBytes * 3 && threads == 1) CHECK(stackedWidths == std::vector<int64_t>{3, 3, 3, 1});
      if (rangeBytes == weightBytes * 100 && threads == 1) CHECK(stackedWidths == std::vector<int64_t>{10});
    }
  }
}

TEST_CASE("evalInRanges: a whole input is never stacked", "[loader][entry-ranges]") {
  const Tensor a = ramp(5, 1, 1, 4, 0.0f), weight = ramp(1, 1, 1, 4, 9.0f);
  Tensor out = evalInRanges({a, weight}, {false, true}, {false, true}, 5, 2, [&](std::span<const Tensor> in) {
    REQUIRE(in[1].w == 1);
    return Recorder{}(in);
  });
  CHECK(out.data == expected(a, weight).data);
}
