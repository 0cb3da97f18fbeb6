#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "sim/parallel_for.hpp"

using namespace mrplan;

TEST(ParallelFor, EveryIndexOnceOnAtMostItsThreads) {
  for (const unsigned threads : {1u, 3u, 16u}) {
    std::vector<std::atomic<int>> seen(1000);
    std::atomic<unsigned> most_worker{0};
    parallel_for(seen.size(), threads, [&](size_t k, unsigned w) {
      ++seen[k];
      for (unsigned m = most_worker; w > m && !most_worker.compare_exchange_weak(m, w);) {
      }
    });
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
    EXPECT_LT(most_worker.load(), threads);
  }
  EXPECT_EQ(threads_for(3, 16), 3u);  // one thread an index at most
  EXPECT_EQ(threads_for(0, 16), 1u);
  EXPECT_EQ(threads_for(100, 0), 1u);
  int calls = 0;
  parallel_for(0, 4, [&](size_t, unsigned) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, TheFirstErrorStopsTheRestAndIsRethrown) {
  for (const unsigned threads : {1u, 4u}) {
    size_t ran = 0;  // on one thread, exactly the indices up to the error run
    std::atomic<size_t> ran_any{0};
    try {
      parallel_for(100000, threads, [&](size_t k, unsigned) {
        threads == 1 ? ++ran : ++ran_any;
        if (k == 10) throw std::runtime_error("index 10 failed");
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "index 10 failed");
    }
    if (threads == 1) {
      EXPECT_EQ(ran, 11u);  // the indices not yet taken were not run
    }
  }
}
