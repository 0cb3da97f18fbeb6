#include <gtest/gtest.h>

#include "model/builtin_workloads.hpp"
#include "model/errors.hpp"
#include "model/layer_table.hpp"
#include "model/workload_yaml.hpp"

using namespace mrplan;

namespace {
int64_t params_at(const std::string& name, int64_t factor) {
  auto spec = builtin_workload(name);
  return resolve(spec, coarsened_spatial(spec, factor), 1).total_params();
}
}  // namespace

// Totals verified with PyTorch (issue 2).
TEST(Workload, CosmoflowMrtParameterTotals) {
  EXPECT_EQ(params_at("cosmoflow-mrt", 1), 9440668);
  EXPECT_EQ(params_at("cosmoflow-mrt", 2), 5770652);
}
TEST(Workload, CosmoflowMlperfParameterTotals) {
  EXPECT_EQ(params_at("cosmoflow-mlperf", 1), 8907556);
  EXPECT_EQ(params_at("cosmoflow-mlperf", 2), 5237540);
}
TEST(Workload, NeuronInverterParameterTotals) {
  EXPECT_EQ(params_at("neuron-inverter", 1), 2988843);
  EXPECT_EQ(params_at("neuron-inverter", 2), 1786083);
}
TEST(Workload, DeepcamIsAbout56MParametersAndSameAtCoarse) {
  const auto dense = params_at("deepcam", 1);
  EXPECT_GT(dense, 54'000'000);
  EXPECT_LT(dense, 58'000'000);
  EXPECT_EQ(params_at("deepcam", 2), dense);  // fully convolutional: no weight changes shape
}
TEST(Workload, DeepcamOutputMatchesLabelsAtBothResolutions) {
  auto spec = builtin_workload("deepcam");
  auto dense = resolve(spec, coarsened_spatial(spec, 1), 1);
  EXPECT_EQ(dense.layers.back().out_shape, (std::vector<int64_t>{3, 768, 1152}));
  auto coarse = resolve(spec, coarsened_spatial(spec, 2), 1, 4.0, 2);
  EXPECT_EQ(coarse.layers.back().out_shape, (std::vector<int64_t>{3, 768, 1152}));
  EXPECT_EQ(coarse.layers.back().kind, OpKind::upsample);
}
TEST(Workload, CosmoflowFlattenSizes) {
  auto spec = builtin_workload("cosmoflow-mrt");
  for (auto [factor, flat] : {std::pair{1, 2048}, std::pair{2, 256}}) {
    auto t = resolve(spec, coarsened_spatial(spec, factor), 1);
    for (const auto& l : t.layers)
      if (l.name == "flatten") { EXPECT_EQ(l.out_shape[0], flat); }
  }
}
TEST(Workload, Conv3dFlopsMatchHandFormula) {
  // conv1 of cosmoflow-mrt at 128^3, batch 2: 2 * Cin * k^3 * Cout * out_voxels * batch
  auto spec = builtin_workload("cosmoflow-mrt");
  auto t = resolve(spec, coarsened_spatial(spec, 1), 2);
  const auto& conv1 = t.layers[1];
  ASSERT_EQ(conv1.name, "conv1");
  EXPECT_DOUBLE_EQ(conv1.fwd_flops, 2.0 * 4 * 27 * 16 * 128.0 * 128 * 128 * 2);
  EXPECT_DOUBLE_EQ(conv1.bwd_flops, 2.0 * conv1.fwd_flops);
}
TEST(Workload, LinearFlopsMatchHandFormula) {
  auto spec = builtin_workload("neuron-inverter");
  auto t = resolve(spec, coarsened_spatial(spec, 1), 8);
  for (const auto& l : t.layers)
    if (l.name == "fc1") { EXPECT_DOUBLE_EQ(l.fwd_flops, 2.0 * 4320 * 512 * 8); }
}
TEST(Workload, FlopsScaleLinearlyWithBatch) {
  auto spec = builtin_workload("deepcam");
  auto a = resolve(spec, coarsened_spatial(spec, 2), 1);
  auto b = resolve(spec, coarsened_spatial(spec, 2), 4);
  EXPECT_NEAR(b.total_fwd_flops(), 4 * a.total_fwd_flops(), 1e-6 * b.total_fwd_flops());
}
TEST(Workload, BuiltinsRoundTripThroughYaml) {
  for (const auto& name : builtin_workload_names()) {
    auto spec = builtin_workload(name);
    auto again = workload_from_yaml_text(workload_to_yaml(spec), name + ".yaml");
    auto a = resolve(spec, coarsened_spatial(spec, 1), 3);
    auto b = resolve(again, coarsened_spatial(again, 1), 3);
    ASSERT_EQ(a.layers.size(), b.layers.size()) << name;
    for (size_t i = 0; i < a.layers.size(); ++i) {
      EXPECT_EQ(a.layers[i].out_shape, b.layers[i].out_shape) << name << " " << a.layers[i].name;
      EXPECT_EQ(a.layers[i].params, b.layers[i].params);
      EXPECT_DOUBLE_EQ(a.layers[i].fwd_flops, b.layers[i].fwd_flops);
    }
  }
}
TEST(Workload, SmallCpuVariantHasFewerPoolingStages) {
  auto spec = builtin_workload("cosmoflow-mrt", {.size = 32, .width = 0.5});
  auto dense = resolve(spec, coarsened_spatial(spec, 1), 1);
  auto coarse = resolve(spec, coarsened_spatial(spec, 2), 1);
  // the coarse model differs only in the first fully connected layer's input (MRT III-B)
  ASSERT_EQ(dense.layers.size(), coarse.layers.size());
  for (size_t i = 0; i < dense.layers.size(); ++i)
    if (dense.layers[i].name != "fc1") { EXPECT_EQ(dense.layers[i].params, coarse.layers[i].params) << dense.layers[i].name; }
}
TEST(Workload, BadInputsNameTheProblem) {
  auto spec = builtin_workload("cosmoflow-mrt");
  EXPECT_THROW(coarsened_spatial(spec, 3), InputError);
  try {
    workload_from_yaml_text("name: x\ninput: {channels: 1, spatial: [8]}\nops:\n  - {name: a, kind: convolution}\n", "w.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("w.yaml: ops[0].kind: unknown layer kind 'convolution'"), std::string::npos) << e.what();
  }
  try {
    workload_from_yaml_text("name: x\ninput: {channels: 1, spatial: [8]}\nops:\n  - {name: a, kind: conv, filters: 2, kernal: 3}\n", "w.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ops[0].kernal: unknown key"), std::string::npos) << e.what();
  }
  try {
    auto s = workload_from_yaml_text("name: x\ninput: {channels: 1, spatial: [4]}\nops:\n  - {name: p, kind: max_pool, kernel: 8}\n", "w.yaml");
    resolve(s, s.input_spatial, 1);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("smaller than the pooling window"), std::string::npos) << e.what();
  }
}

TEST(Workload, ASizeTheStridesDoNotDivideGetsTheNearestOnesThatWork) {
  // DeepCAM's encoder halves 96 rows to 3 where the coarse model (48 rows) reaches 1.5: its skip
  // connection cannot rejoin
  const WorkloadOptions o{96, 0.125};
  const auto sizes = nearest_working_sizes("deepcam", o, {1, 2});
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_LT(sizes[0], 96);
  EXPECT_GT(sizes[1], 96);
  for (int64_t s : sizes) {
    const auto spec = builtin_workload("deepcam", {s, 0.125});
    for (int64_t r : {1, 2}) EXPECT_NO_THROW(resolve(spec, coarsened_spatial(spec, r), 1, 4.0, r)) << s << " at " << r;
  }
  // and every size strictly between them fails at one of the resolutions
  for (int64_t s = sizes[0] + 1; s < sizes[1]; ++s) {
    const auto spec = builtin_workload("deepcam", {s, 0.125});
    bool fails = false;
    for (int64_t r : {1, 2}) try {
        resolve(spec, coarsened_spatial(spec, r), 1, 4.0, r);
      } catch (const InputError&) {
        fails = true;
      }
    EXPECT_TRUE(fails) << s;
  }
}
