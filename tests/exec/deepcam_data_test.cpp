// DeepCAM data: the generator's layout and labels, coarsening that keeps the masks, the reader's
// min-max normalisation and its refusals.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "exec/climate_fields.hpp"
#include "exec/data_layout.hpp"
#include "exec/datagen.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/loader.hpp"
#include "exec/objective.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/scratch_data.hpp"

using namespace mrplan;
using mrplan::testing::error_of;
using mrplan::testing::make_two_resolutions;
using mrplan::testing::scratch_dir;
namespace fs = std::filesystem;

namespace {

struct DeepcamData : ::testing::Test {
  static fs::path dir;
  static void SetUpTestSuite() {
    dir = scratch_dir("deepcam");
    DatagenOptions o;
    o.workload = "deepcam", o.samples = 12, o.size = 32, o.seed = 5;
    make_two_resolutions(dir, o);
  }
  static void TearDownTestSuite() { fs::remove_all(dir); }
  static std::vector<float> read(const fs::path& file, const std::string& ds) {
    return H5File(file.string(), H5File::Mode::read).read_all(ds);
  }
};
fs::path DeepcamData::dir;

}  // namespace

TEST_F(DeepcamData, OneSamplePerFileInTheReferenceLayoutWithStats) {
  EXPECT_EQ(list_h5_files((dir / "res1").string()).size(), 12u);  // stats.h5 is not a sample
  H5File h((dir / "res1/data-000003.h5").string(), H5File::Mode::read);
  EXPECT_EQ(h.dims("climate/data"), (std::vector<uint64_t>{32, 48, 16}));
  EXPECT_EQ(h.dims("climate/labels_0"), (std::vector<uint64_t>{32, 48}));
  const auto lo = read(dir / "res1/stats.h5", "climate/minval"), hi = read(dir / "res1/stats.h5", "climate/maxval");
  ASSERT_EQ(lo.size(), 16u);
  std::set<float> classes;
  for (const auto& f : list_h5_files((dir / "res1").string())) {
    const auto x = read(f, "climate/data");
    for (size_t k = 0; k < x.size(); ++k) {  // the stats bound every value of every channel
      EXPECT_GE(x[k], lo[k % 16]);
      EXPECT_LE(x[k], hi[k % 16]);
    }
    for (float v : read(f, "climate/labels_0")) classes.insert(v);
  }
  EXPECT_EQ(classes, (std::set<float>{0.f, 1.f, 2.f}));  // background, vortices and filaments all occur
}

TEST_F(DeepcamData, SameSeedSameSamples) {
  ClimateFieldGenerator gen(16, 24);
  std::vector<float> a(16 * 24 * 16), b(a.size()), c(a.size());
  std::vector<int16_t> la(16 * 24), lb(la.size()), lc(la.size());
  gen.sample(7, a.data(), la.data());
  gen.sample(7, b.data(), lb.data());
  gen.sample(8, c.data(), lc.data());
  EXPECT_EQ(a, b);
  EXPECT_EQ(la, lb);
  EXPECT_NE(a, c);
}

TEST_F(DeepcamData, CoarseningAveragesTheFieldsAndKeepsTheMasks) {
  const auto dense = read(dir / "res1/data-000002.h5", "climate/data");
  const auto coarse = read(dir / "res2/data-000002.h5", "climate/data");
  H5File h((dir / "res2/data-000002.h5").string(), H5File::Mode::read);
  EXPECT_EQ(h.dims("climate/data"), (std::vector<uint64_t>{16, 24, 16}));
  EXPECT_EQ(h.dims("climate/labels_0"), (std::vector<uint64_t>{32, 48}));  // the coarse model upsamples its output
  for (int c : {0, 7, 15}) {  // pixel (3, 5) of the coarse image = mean of dense (6..7, 10..11)
    double s = 0;
    for (int i = 6; i < 8; ++i)
      for (int j = 10; j < 12; ++j) s += dense[(i * 48 + j) * 16 + c];
    EXPECT_NEAR(coarse[(3 * 24 + 5) * 16 + c], s / 4, 1e-3 * std::abs(s / 4) + 1e-12);
  }
  EXPECT_EQ(read(dir / "res2/data-000002.h5", "climate/labels_0"), read(dir / "res1/data-000002.h5", "climate/labels_0"));
  EXPECT_EQ(read(dir / "res2/stats.h5", "climate/minval"), read(dir / "res1/stats.h5", "climate/minval"));
}

TEST_F(DeepcamData, ReaderNormalisesChannelFirstWithPixelLabels) {
  const SampleStore store((dir / "res2").string(), layout_for("deepcam"));
  EXPECT_EQ(store.size(), 12);
  EXPECT_EQ(store.sample_shape(), (std::vector<int64_t>{16, 16, 24}));
  EXPECT_EQ(store.label_shape(), (std::vector<int64_t>{32, 48}));
  std::vector<float> x(16 * 16 * 24), y(32 * 48);
  store.read(4, x.data(), y.data());
  for (float v : x) {  // min-max with the dense stats: block means stay inside [0, 1]
    EXPECT_GE(v, -1e-5f);
    EXPECT_LE(v, 1 + 1e-5f);
  }
  const auto raw = read(dir / "res2/data-000004.h5", "climate/data");
  const auto lo = read(dir / "res2/stats.h5", "climate/minval"), hi = read(dir / "res2/stats.h5", "climate/maxval");
  const int c = 6, pix = 5 * 24 + 7;  // channel-first in memory, channel-last on disk
  EXPECT_NEAR(x[c * 16 * 24 + pix], (raw[pix * 16 + c] - lo[c]) / (hi[c] - lo[c]), 1e-5);
  EXPECT_EQ(y, read(dir / "res2/data-000004.h5", "climate/labels_0"));
}

TEST_F(DeepcamData, BadLabelsAndMissingStatsAreRefusedByName) {
  const auto bad = dir / "bad";
  fs::create_directories(bad);
  fs::copy_file(dir / "res1/stats.h5", bad / "stats.h5", fs::copy_options::overwrite_existing);
  {
    auto x = read(dir / "res1/data-000000.h5", "climate/data");
    auto y = read(dir / "res1/data-000000.h5", "climate/labels_0");
    y[9] = 3.f;
    H5File h((bad / "data-000000.h5").string(), H5File::Mode::create);
    h.write("climate/data", {32, 48, 16}, x.data());
    h.write("climate/labels_0", {32, 48}, y.data());
  }
  const SampleStore store(bad.string(), layout_for("deepcam"));
  std::vector<float> x(16 * 32 * 48), y(32 * 48);
  EXPECT_NE(error_of([&] { store.read(0, x.data(), y.data()); }).find("climate/labels_0: row 0 pixel 9 = 3 is not a class number in 0..2"),
            std::string::npos);
  fs::remove(bad / "stats.h5");
  EXPECT_NE(error_of([&] { SampleStore s(bad.string(), layout_for("deepcam")); }).find("stats.h5: not found here or one folder up"),
            std::string::npos);
  EXPECT_NE(error_of([&] { SampleStore s((dir / "res1").string(), layout_for("cosmoflow-mrt")); }).find("3Dmap: dataset not found"),
            std::string::npos);
}

TEST_F(DeepcamData, ClassWeightsAreFrequencyToTheMinusOneEighth) {
  const SampleStore store((dir / "res1").string(), layout_for("deepcam"));
  double count[3] = {0, 0, 0};
  std::vector<float> x(16 * 32 * 48), y(32 * 48);
  for (int64_t id = 0; id < 10; ++id) {
    store.read(id, x.data(), y.data());
    for (float v : y) count[static_cast<int>(v)] += 1;
  }
  const auto o = make_objective(layout_for("deepcam"), store, 10);
  ASSERT_EQ(o.class_weights.numel(), 3);
  for (int c = 0; c < 3; ++c)
    EXPECT_NEAR(o.class_weights[c].item<double>(), std::pow(count[c] / (10 * 32 * 48), -0.125), 1e-5);
}
