#include <gtest/gtest.h>

#include "tests/support/error_of.hpp"
#include "tests/support/scratch_data.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "exec/cosmo_fields.hpp"
#include "exec/datagen.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/loader.hpp"
#include "model/errors.hpp"

using namespace mrplan;
using mrplan::testing::error_of;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) { return mrplan::testing::scratch_dir(name); }


std::vector<float> all_rows(const std::string& file, const std::string& ds) {
  H5File h(file, H5File::Mode::read);
  const auto d = h.dims(ds);
  size_t n = 1;
  for (auto v : d) n *= v;
  std::vector<float> out(n);
  h.read_rows(ds, 0, d[0], out.data());
  return out;
}

}  // namespace

TEST(Datagen, DeterministicBySeedAndInTheMrtLayout) {
  const auto dir = scratch("datagen");
  DatagenOptions o;
  o.samples = 6, o.size = 8, o.samples_per_file = 4, o.progress = false, o.seed = 3;
  o.out_dir = (dir / "a").string();
  const auto rep = generate_dataset(o);
  EXPECT_EQ(rep.files, 2);
  o.out_dir = (dir / "b").string();
  generate_dataset(o);
  o.out_dir = (dir / "c").string(), o.seed = 4;
  generate_dataset(o);
  const auto a = all_rows((dir / "a/cosmo_0000.h5").string(), "3Dmap");
  EXPECT_EQ(a, all_rows((dir / "b/cosmo_0000.h5").string(), "3Dmap"));
  EXPECT_NE(a, all_rows((dir / "c/cosmo_0000.h5").string(), "3Dmap"));
  H5File h((dir / "a/cosmo_0001.h5").string(), H5File::Mode::read);
  EXPECT_EQ(h.dims("3Dmap"), (std::vector<uint64_t>{2, 8, 8, 8, 4}));
  EXPECT_EQ(h.dims("unitPar"), (std::vector<uint64_t>{2, 4}));
  for (float v : a) EXPECT_GE(v, 0.f);  // particle counts
  for (float u : all_rows((dir / "a/cosmo_0000.h5").string(), "unitPar")) {
    EXPECT_GE(u, -1.f);
    EXPECT_LE(u, 1.f);
  }
  fs::remove_all(dir);
}

TEST(Datagen, Sigma8ControlsTheFluctuations) {
  // the labels must shape the field: a larger sigma8 gives a larger variance of log(1 + counts)
  CosmoFieldGenerator gen(16, CosmoCounts::mini);
  auto spread = [&](double s8) {
    std::vector<int16_t> out(16 * 16 * 16 * 4);
    gen.sample({0.3, s8, 0.95, 0.7}, 11, out.data());
    double m = 0, v = 0;
    const size_t n = out.size() / 4;
    for (size_t i = 0; i < n; ++i) m += std::log1p(out[i * 4 + 3]);
    m /= n;
    for (size_t i = 0; i < n; ++i) v += std::pow(std::log1p(out[i * 4 + 3]) - m, 2);
    return v / n;
  };
  EXPECT_GT(spread(0.9), 1.1 * spread(0.6));
}

TEST(Coarsen, SumAndMeanOfBlocksMatchClosedForm) {
  const auto dir = scratch("coarsen");
  fs::create_directories(dir / "in");
  std::vector<float> x(1 * 4 * 4 * 4 * 2);
  std::iota(x.begin(), x.end(), 0.f);
  std::vector<float> y{0.5f, -0.5f, 0.f, 1.f};
  {
    H5File h((dir / "in/a.h5").string(), H5File::Mode::create);
    h.write("3Dmap", {1, 4, 4, 4, 2}, x.data());
    h.write("unitPar", {1, 4}, y.data());
  }
  for (const std::string op : {"sum", "mean"}) {
    const CoarsenOptions o{.in_dir = (dir / "in").string(), .out_dir = (dir / op).string(), .op = coarsen_op_from_name(op, "test"), .threads = 1, .progress = false};
    const auto rep = coarsen_dataset(o);
    EXPECT_EQ(rep.files, 1);
    const auto out = all_rows((dir / op / "a.h5").string(), "3Dmap");
    ASSERT_EQ(out.size(), 2u * 2 * 2 * 2);
    // block (0,0,0), channel c: voxels (x,y,z) in {0,1}^3 at index ((x*4+y)*4+z)*2+c
    for (int c = 0; c < 2; ++c) {
      double s = 0;
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
          for (int z = 0; z < 2; ++z) s += x[((a * 4 + b) * 4 + z) * 2 + c];
      EXPECT_FLOAT_EQ(out[c], op == "sum" ? s : s / 8);
    }
    EXPECT_EQ(all_rows((dir / op / "a.h5").string(), "unitPar"), y);
  }
  // without --op, the layout's own: CosmoFlow's counts add up
  const auto deflt = coarsen_dataset({.in_dir = (dir / "in").string(), .out_dir = (dir / "default").string(), .op = std::nullopt, .threads = 1, .progress = false});
  EXPECT_EQ(deflt.op, CoarsenOp::sum);
  EXPECT_EQ(all_rows((dir / "default/a.h5").string(), "3Dmap"), all_rows((dir / "sum/a.h5").string(), "3Dmap"));
  EXPECT_EQ(layout_for("deepcam").coarsen, CoarsenOp::mean);
  EXPECT_EQ(layout_for("neuron-inverter").coarsen, CoarsenOp::mean);
  EXPECT_NE(error_of([&] { coarsen_dataset({.in_dir = (dir / "in").string(), .out_dir = (dir / "x").string(), .factor = 3, .op = CoarsenOp::sum, .progress = false}); })
                .find("factor 3 does not divide axis 1 of size 4"),
            std::string::npos);
  // a CosmoFlow folder named as another workload's: the message names the workload to pass
  EXPECT_NE(error_of([&] { coarsen_dataset({.in_dir = (dir / "in").string(), .out_dir = (dir / "x").string(), .op = std::nullopt, .progress = false, .workload = "deepcam"}); })
                .find("climate/data: not found: the file holds cosmoflow-mrt samples (3Dmap), not deepcam's: pass --workload cosmoflow-mrt"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(Loader, BadFilesGiveOneClearMessage) {
  const auto dir = scratch("badfiles");
  std::vector<float> x(2 * 4 * 4 * 4 * 4, 1.f), y(2 * 4, 0.f);
  auto make = [&](const std::string& sub, const std::string& data_name, bool nan, float label) {
    fs::create_directories(dir / sub);
    auto xx = x;
    auto yy = y;
    if (nan) xx[5] = NAN;
    yy[1] = label;
    H5File h((dir / sub / "f.h5").string(), H5File::Mode::create);
    h.write(data_name, {2, 4, 4, 4, 4}, xx.data());
    h.write("unitPar", {2, 4}, yy.data());
  };
  const DataLayout L = layout_for("cosmoflow-mrt");
  make("wrongname", "density", false, 0.f);
  EXPECT_NE(error_of([&] { SampleStore s((dir / "wrongname").string(), L); }).find("f.h5: 3Dmap: dataset not found"), std::string::npos);
  std::vector<float> bx(4 * 4 * 4 * 4), by(4);
  make("nan", "3Dmap", true, 0.f);
  SampleStore nan_store((dir / "nan").string(), L);
  EXPECT_NE(error_of([&] { nan_store.read(0, bx.data(), by.data()); }).find("3Dmap: row 0 holds NaN"), std::string::npos);
  make("label", "3Dmap", false, 3.f);
  SampleStore label_store((dir / "label").string(), L);
  EXPECT_NE(error_of([&] { label_store.read(0, bx.data(), by.data()); }).find("unitPar: row 0 label 1 = 3 is outside [-1, 1]"),
            std::string::npos);
  // values a bit flip or a bad converter leaves: a negative count (log1p: NaN), a finite 3e38
  for (const auto& [sub, value, says] : {std::tuple{"negative", -4.f, "3Dmap: row 1 holds the count -4: counts are >= 0"},
                                         std::tuple{"huge", 3e38f, "3Dmap: row 1 holds 3e+38: beyond 1e15, float32 training overflows"}}) {
    fs::create_directories(dir / sub);
    auto xx = x;
    xx[x.size() / 2 + 3] = value;
    {
      H5File h((dir / sub / "f.h5").string(), H5File::Mode::create);
      h.write("3Dmap", {2, 4, 4, 4, 4}, xx.data());
      h.write("unitPar", {2, 4}, y.data());
    }
    SampleStore bad((dir / sub).string(), L);
    EXPECT_NE(error_of([&] { bad.read(1, bx.data(), by.data()); }).find(says), std::string::npos) << sub;
  }
  // a second file unlike the first: both named
  fs::create_directories(dir / "mixed");
  fs::copy_file(dir / "label/f.h5", dir / "mixed/a.h5");
  {
    std::vector<float> small(2 * 2 * 2 * 2 * 4, 1.f);
    H5File h((dir / "mixed/b.h5").string(), H5File::Mode::create);
    h.write("3Dmap", {2, 2, 2, 2, 4}, small.data());
    h.write("unitPar", {2, 4}, y.data());
  }
  EXPECT_NE(error_of([&] { SampleStore s((dir / "mixed").string(), L); }).find("b.h5: 3Dmap: samples are 2x2x2x4 but " + (dir / "mixed/a.h5").string() + " holds 4x4x4x4"),
            std::string::npos);
  fs::create_directories(dir / "trunc");
  std::ofstream(dir / "trunc" / "f.h5") << "\x89HDF\r\n\x1a\n truncated";
  EXPECT_NE(error_of([&] { SampleStore s((dir / "trunc").string(), L); }).find("not a readable HDF5 file"), std::string::npos);
  EXPECT_NE(error_of([&] { SampleStore s((dir / "none").string(), L); }).find("data folder not found"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Loader, RestrictedShufflingKeepsEachRankInItsGroup) {
  const int64_t n = 64;
  const int ranks = 4, batch = 4;
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::set<int64_t> seen;
    std::set<int64_t> groups;
    for (int r = 0; r < ranks; ++r) {
      const auto ids = restricted_shuffle(n, r, ranks, batch, 9, epoch);
      EXPECT_EQ(ids.size(), 16u);
      const int64_t g = ids.front() / 16;
      groups.insert(g);
      for (auto id : ids) {
        EXPECT_EQ(id / 16, g);  // one group per rank
        EXPECT_TRUE(seen.insert(id).second);  // no sample twice in an epoch
      }
    }
    EXPECT_EQ(groups.size(), 4u);
  }
  EXPECT_EQ(restricted_shuffle(n, 1, ranks, batch, 9, 2), restricted_shuffle(n, 1, ranks, batch, 9, 2));
  EXPECT_NE(restricted_shuffle(n, 1, ranks, batch, 9, 2), restricted_shuffle(n, 1, ranks, batch, 9, 3));
}

TEST(Loader, BatchPoolRefillsOnlyWhatNobodyHoldsAndPrefetchesTheSameBatches) {
  BatchPool pool(2);
  const std::vector<int64_t> xs{2, 3}, ys{2, 1};
  const void* first = nullptr;
  {
    const Batch a = pool.take(xs, ys);
    first = a.x.data_ptr();
    const Batch b = pool.take(xs, ys);  // a is still held
    EXPECT_NE(b.x.data_ptr(), first);
  }
  EXPECT_EQ(pool.take(xs, ys).x.data_ptr(), first);  // let go: refilled, not allocated
  {
    const auto view = pool.take(xs, ys).x.view({6});  // a view keeps the storage: not free
    EXPECT_NE(pool.take(xs, ys).x.data_ptr(), view.data_ptr());
  }
  EXPECT_NE(pool.take({4, 3}, ys).x.data_ptr(), first);  // another shape gets its own
  {  // beyond capacity it allocates rather than waits
    const Batch a = pool.take(xs, ys), b = pool.take(xs, ys), c = pool.take(xs, ys);
    EXPECT_NE(c.x.data_ptr(), a.x.data_ptr());
    EXPECT_NE(c.x.data_ptr(), b.x.data_ptr());
  }
  // a pooled prefetcher, over two epochs, yields exactly the batches of an unpooled one
  const auto dir = scratch("pool");
  DatagenOptions o;
  o.samples = 12, o.size = 8, o.samples_per_file = 4, o.progress = false, o.seed = 5, o.out_dir = dir.string();
  generate_dataset(o);
  const SampleStore store(dir.string(), layout_for("cosmoflow-mrt"));
  BatchPool batches(2 + 3);
  for (int epoch = 0; epoch < 2; ++epoch) {
    const auto ids = restricted_shuffle(12, 0, 1, 2, 7, epoch);
    Prefetcher plain(store, ids, 2, 2), pooled(store, ids, 2, 2, false, &batches);
    int n = 0;
    while (auto p = plain.next()) {
      const auto q = pooled.next();
      ASSERT_TRUE(q);
      EXPECT_TRUE(torch::equal(p->x, q->x));
      EXPECT_TRUE(torch::equal(p->y, q->y));
      ++n;
    }
    EXPECT_FALSE(pooled.next());
    EXPECT_EQ(n, 6);
  }
  fs::remove_all(dir);
}
