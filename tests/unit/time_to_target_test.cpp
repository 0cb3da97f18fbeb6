#include <gtest/gtest.h>

#include "model/time_to_target.hpp"

using namespace mrplan;

TEST(TimeToTarget, RunStartToRunStop) {
  EXPECT_DOUBLE_EQ(trained_time_s({{"init_start", 0}, {"run_start", 1000}, {"epoch_stop", 4000}, {"run_stop", 6500}, {"eval_accuracy", 9000}}), 5.5);
}

TEST(TimeToTarget, ToTheLastLineWithoutRunStopAndZeroWithoutRunStart) {
  EXPECT_DOUBLE_EQ(trained_time_s({{"run_start", 1000}, {"epoch_stop", 4000}}), 3.0);
  EXPECT_DOUBLE_EQ(trained_time_s({{"init_start", 0}, {"epoch_stop", 4000}}), 0.0);
}

TEST(TimeToTarget, TheGapsBetweenAKillAndItsResumeAreNotCounted) {
  // trained 1..4 s, killed, resumed at 100 s and trained to 103 s, killed, resumed at 200 s, done at 201 s
  EXPECT_DOUBLE_EQ(trained_time_s({{"run_start", 1000}, {"epoch_stop", 4000}, {kResumeKey, 100000}, {"epoch_stop", 103000},
                                   {kResumeKey, 200000}, {"run_stop", 201000}}),
                   3.0 + 3.0 + 1.0);
}

TEST(TimeToTarget, MergedLinesOutOfOrderCountToTheLatest) {
  EXPECT_DOUBLE_EQ(trained_time_s({{"run_start", 0}, {"epoch_stop", 5000}, {"epoch_stop", 3000}, {kResumeKey, 9000}, {"run_stop", 10000}}), 6.0);
}
