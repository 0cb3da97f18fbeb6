#include <gtest/gtest.h>

#include <torch/torch.h>

#include "exec/fusion.hpp"
#include "exec/handoff.hpp"
#include "model/builtin_workloads.hpp"
#include "model/fusion.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;

namespace {

// Every parameter and buffer set to one value, so that where each came from is plain.
void fill(torch::nn::Module& m, float v) {
  torch::NoGradGuard ng;
  for (auto& p : m.parameters()) p.fill_(v);
  for (auto& b : m.buffers()) b.fill_(v);
}

}  // namespace

TEST(Fusion, BottomGroupFromOneParentTopGroupFromTheOtherByName) {
  for (const auto& [name, size] : {std::pair{"cosmoflow-mrt", 16}, {"neuron-inverter", 400}, {"deepcam", 64}}) {
    const auto spec = builtin_workload(name, {.size = size, .width = 0.125});
    const size_t split = fusion_split(spec, "", "", "");
    const int64_t up = spec.coarse_upsamples_output ? 2 : 1;
    SpecNet low(spec, coarsened_spatial(spec, 2), up), high(spec, coarsened_spatial(spec, 1)), fused(spec, coarsened_spatial(spec, 1));
    fill(*low, 1.0f);
    fill(*high, 2.0f);
    fuse_local(*fused, *low, *high, split);
    int bottom = 0, top = 0;
    for (const auto& p : fused->named_parameters()) {
      const bool is_bottom = in_bottom_group(fused->op_index_of(p.key()), split);
      EXPECT_TRUE(torch::all(p.value() == (is_bottom ? 1.0f : 2.0f)).item<bool>()) << name << " " << p.key();
      (is_bottom ? bottom : top)++;
    }
    EXPECT_GT(bottom, 0) << name;
    EXPECT_GT(top, 0) << name;
  }
}

TEST(Fusion, AParentOfTheWrongResolutionIsRefusedNamingTheParameter) {
  const auto spec = builtin_workload("neuron-inverter", {.size = 400, .width = 0.25});
  const size_t split = fusion_split(spec, "", "", "");
  SpecNet low(spec, coarsened_spatial(spec, 2)), fused(spec, coarsened_spatial(spec, 1));
  const auto msg = mrplan::testing::error_of([&] { fuse_local(*fused, *low, *low, split); });
  EXPECT_NE(msg.find("parameter 'flat_bn.weight' has shape 90 in the top (higher-resolution) model but 225 in the fused model"), std::string::npos)
      << msg;
}

TEST(Handoff, TheSameResolutionTakesEverythingAnotherTheTransferableOps) {
  const auto spec = builtin_workload("neuron-inverter", {.size = 400, .width = 0.25});
  SpecNet a(spec, coarsened_spatial(spec, 1)), b(spec, coarsened_spatial(spec, 1)), coarse(spec, coarsened_spatial(spec, 2));
  fill(*a, 3.0f);
  initialise_from(*a, *b);
  for (const auto& p : b->parameters()) EXPECT_TRUE(torch::all(p == 3.0f).item<bool>());
  fill(*coarse, 5.0f);
  initialise_from(*coarse, *b);  // MRT: the convolutions only; fully connected layers keep theirs
  EXPECT_TRUE(torch::all(b->named_parameters()["conv1.weight"] == 5.0f).item<bool>());
  EXPECT_TRUE(torch::all(b->named_parameters()["fc1.weight"] == 3.0f).item<bool>());
}
