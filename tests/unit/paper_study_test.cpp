#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "calibrate/mrt_paper_study.hpp"
#include "calibrate/mrt_paper_tables.hpp"

using namespace mrplan;

TEST(PaperStudy, EveryRowHasAFinitePrediction) {
  const auto rows = mrt_paper_study();
  EXPECT_EQ(rows.size(), mrt_paper_values().size());
  int held_out = 0;
  for (const auto& r : rows) {
    EXPECT_TRUE(std::isfinite(r.predicted)) << r.paper.table << " " << r.paper.dataset << " " << r.paper.quantity;
    EXPECT_GE(r.predicted, 0);
    held_out += !r.paper.used_for_calibration();
  }
  EXPECT_GT(held_out, 40);
}

TEST(PaperStudy, CalibrationRowsAreTheSmallestGpuCounts) {
  std::set<std::string> cal_tables;
  for (const auto& v : mrt_paper_values()) {
    if (v.used_for_calibration()) cal_tables.insert(v.table);
    EXPECT_EQ(v.used_for_calibration(), (v.app == "cosmoflow" && v.gpus == 32) || (v.app == "deepcam" && v.gpus == 64));
  }
  // Tables II and VI are entirely held out
  EXPECT_FALSE(cal_tables.count("II"));
  EXPECT_FALSE(cal_tables.count("VI"));
}
