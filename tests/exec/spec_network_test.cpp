#include <gtest/gtest.h>

#include "exec/spec_network.hpp"
#include "model/builtin_workloads.hpp"

using namespace mrplan;

namespace {

// Build the module at a resolution and compare it, op by op, with the simulator's layer table.
void expect_module_matches_table(const NetworkSpec& spec, int64_t factor, int64_t batch) {
  const auto spatial = coarsened_spatial(spec, factor);
  const int64_t up = spec.coarse_upsamples_output ? factor : 1;
  SpecNet net(spec, spatial, up);
  const auto& table = net->table();
  // parameters per op
  int64_t total = 0;
  for (const auto& l : table.layers) {
    int64_t n = 0, tensors = 0;
    for (const auto& p : net->named_parameters())
      if (p.key().rfind(SpecNetImpl::module_name(l.name) + ".", 0) == 0) n += p.value().numel(), ++tensors;
    EXPECT_EQ(n, l.params) << spec.name << " x" << factor << " " << l.name;
    EXPECT_EQ(tensors, l.param_tensors) << spec.name << " x" << factor << " " << l.name;  // what the optimizer loops over
    total += n;
  }
  EXPECT_EQ(static_cast<int64_t>(net->parameters().size()), table.total_param_tensors()) << spec.name;
  int64_t torch_total = 0;
  for (const auto& p : net->parameters()) torch_total += p.numel();
  EXPECT_EQ(torch_total, table.total_params()) << spec.name;
  EXPECT_EQ(total, torch_total);
  // output shape of every op
  std::vector<int64_t> in{batch};
  in.insert(in.end(), table.input_shape.begin(), table.input_shape.end());
  torch::NoGradGuard ng;
  net->eval();
  const auto outs = net->forward_all(torch::randn(in));
  ASSERT_EQ(outs.size(), table.layers.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    std::vector<int64_t> want{batch};
    want.insert(want.end(), table.layers[i].out_shape.begin(), table.layers[i].out_shape.end());
    EXPECT_EQ(outs[i].sizes().vec(), want) << spec.name << " x" << factor << " " << table.layers[i].name;
  }
}

}  // namespace

TEST(SpecNetwork, CosmoflowMrtSmallMatchesTableAtBothResolutions) {
  const auto spec = builtin_workload("cosmoflow-mrt", {.size = 32, .width = 0.5});
  expect_module_matches_table(spec, 1, 2);
  expect_module_matches_table(spec, 2, 2);
}
TEST(SpecNetwork, CosmoflowMlperfSmallMatchesTable) {
  const auto spec = builtin_workload("cosmoflow-mlperf", {.size = 32, .width = 0.25});
  expect_module_matches_table(spec, 1, 2);
  expect_module_matches_table(spec, 2, 2);
}
TEST(SpecNetwork, NeuronInverterMatchesTableAtBothResolutions) {
  const auto spec = builtin_workload("neuron-inverter");
  expect_module_matches_table(spec, 1, 2);
  expect_module_matches_table(spec, 2, 2);
}
TEST(SpecNetwork, DeepcamSmallMatchesTableAtBothResolutions) {
  const auto spec = builtin_workload("deepcam", {.size = 128, .width = 0.125});
  expect_module_matches_table(spec, 1, 2);
  expect_module_matches_table(spec, 2, 2);
}
TEST(SpecNetwork, FullSizeParameterTotalsEqualTheTables) {
  // full-size modules are only constructed (no forward): parameters must equal the papers' totals
  for (const auto& [name, factor, expected] :
       {std::tuple{"cosmoflow-mrt", 1, 9440668LL}, std::tuple{"cosmoflow-mrt", 2, 5770652LL},
        std::tuple{"cosmoflow-mlperf", 1, 8907556LL}, std::tuple{"neuron-inverter", 2, 1786083LL}}) {
    const auto spec = builtin_workload(name);
    SpecNet net(spec, coarsened_spatial(spec, factor));
    int64_t n = 0;
    for (const auto& p : net->parameters()) n += p.numel();
    EXPECT_EQ(n, expected) << name << " x" << factor;
  }
}
TEST(SpecNetwork, CoarseCosmoflowDiffersOnlyInFirstFullyConnectedLayer) {
  const auto spec = builtin_workload("cosmoflow-mrt", {.size = 32, .width = 0.5});
  SpecNet dense(spec, coarsened_spatial(spec, 1)), coarse(spec, coarsened_spatial(spec, 2));
  const auto dp = dense->named_parameters(), cp = coarse->named_parameters();
  ASSERT_EQ(dp.size(), cp.size());
  for (const auto& p : dp) {
    const auto& q = cp[p.key()];
    if (p.key() == "fc1.weight") EXPECT_NE(p.value().sizes(), q.sizes()) << p.key();
    else EXPECT_EQ(p.value().sizes(), q.sizes()) << p.key();
  }
  // transfer copies convolutions and batch norms, never the fully connected layers
  for (const auto& n : dense->transferable_parameter_names()) EXPECT_NE(n.rfind("fc", 0), 0u) << n;
}
