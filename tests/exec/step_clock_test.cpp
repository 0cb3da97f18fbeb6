#include "exec/step_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <stdexcept>
#include <thread>

using namespace mrplan;

TEST(StepClock, HostIntervalsAreTheGapsBetweenMarks) {
  StepClock clock(-1, 4);
  EXPECT_FALSE(clock.on_device());
  const auto t0 = std::chrono::steady_clock::now();
  clock.mark(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.mark(1);
  clock.mark(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  clock.mark(3);
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto iv = clock.intervals_s();
  ASSERT_EQ(iv.size(), 3u);
  EXPECT_GE(iv[0], 0.020);
  EXPECT_GE(iv[1], 0.0);
  EXPECT_GE(iv[2], 0.005);
  EXPECT_LE(std::accumulate(iv.begin(), iv.end(), 0.0), total_s);
}

TEST(StepClock, RefusesTooFewPointsAndAMissingGpu) {
  EXPECT_THROW(StepClock(-1, 1), std::invalid_argument);
  // no GPU on the test machines: either the CUDA runtime says so or the build has none
  try {
    StepClock gpu(0, 2);
    GTEST_SKIP() << "a GPU is present";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("step timer"), std::string::npos) << e.what();
  }
}
