#include <gtest/gtest.h>

#include <algorithm>

#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/compose_profile.hpp"
#include "model/profile_yaml.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

ComposeRequest perlmutter_like() {
  ComposeRequest r;
  r.name = "pm";
  r.gpu = "A100-SXM4-40GB";
  r.gpus_per_node = 4;
  r.node_network = "4x HDR200";
  r.intra = "NVLink3";
  r.cpu = "2x EPYC-7742";
  r.pfs_GBps = 5000;
  return r;
}

}  // namespace

TEST(HardwareCatalogue, EveryEntryHasASourceAndItsHostLinkExists) {
  const auto& c = builtin_catalogue();
  for (const auto& [g, spec] : c.gpus) {
    EXPECT_FALSE(spec.source.empty()) << g;
    EXPECT_NO_THROW(c.link(spec.host_link)) << g;
    EXPECT_NO_THROW(calibrated_builtin_profile(spec.fits_from)) << g;
  }
  for (const char* l : {"EDR", "HDR100", "HDR200", "NDR", "Slingshot-10", "Slingshot-11", "Aries", "NVLink2", "NVLink3", "NVLink4",
                        "NVSwitch", "PCIe3", "PCIe4", "PCIe5"})
    EXPECT_FALSE(c.link(l).source.empty()) << l;
  EXPECT_NE(error_of([] {
              catalogue_from_yaml_text("gpus: {X: {peak_fp32_TFLOPS: 1}}\nlinks: {}\ncpus: {}\n", "h.yaml");
            }).find("h.yaml: gpus.X"),
            std::string::npos);
}

TEST(ComposeProfile, HardwareFromThePartsFitsFromThePrior) {
  const auto p = compose_profile(perlmutter_like(), builtin_catalogue());
  EXPECT_EQ(p.gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(p.compute.peak_fp32_flops, 19.5e12);
  EXPECT_DOUBLE_EQ(p.compute.peak_fp16_flops, 312e12);
  EXPECT_DOUBLE_EQ(p.gpu_memory_bytes, 40e9);
  EXPECT_DOUBLE_EQ(p.comm.inter_node.bandwidth_Bps, 4 * 25e9);  // four adapters of 200 Gb/s
  EXPECT_DOUBLE_EQ(p.comm.intra_node.bandwidth_Bps, 300e9);
  EXPECT_DOUBLE_EQ(p.io.host_to_device_Bps, 31.5e9);  // the GPU's PCIe 4 x16
  EXPECT_DOUBLE_EQ(p.io.host_memory.per_node_bandwidth_Bps, 2 * 204.8e9);
  EXPECT_DOUBLE_EQ(p.io.pfs.per_node_bandwidth_Bps, 100e9);  // no faster than its network
  EXPECT_DOUBLE_EQ(p.io.pfs.aggregate_bandwidth_Bps, 5000e9);
  EXPECT_GT(p.compute.efficiency.at("conv3d"), 0);  // the prior's fits...
  const auto transferred = std::count_if(p.fitted.begin(), p.fitted.end(),
                                         [](const FittedParameter& f) { return f.source.starts_with("transferred from perlmutter"); });
  EXPECT_GT(transferred, 3);  // ...say where they came from, each by its name (what predict's warning quotes)
  for (const auto& f : p.fitted) {
    if (const auto at = f.source.find("transferred from "); at != std::string::npos) {
      EXPECT_EQ(f.source.substr(at, 28), "transferred from perlmutter ") << f.source;
    }
  }
  const auto back = profile_from_yaml_text(profile_to_yaml(p), "pm.yaml");
  EXPECT_DOUBLE_EQ(back.comm.inter_node.bandwidth_Bps, p.comm.inter_node.bandwidth_Bps);
}

// A GPU of another peak fills after the same time as the A100 the fits came from (an MI250X takes
// Perlmutter's): its saturation work grows with its fp32 peak, and the fitted list says so.
TEST(ComposeProfile, SaturationMovesWithThePeak) {
  auto r = perlmutter_like();
  r.gpu = "MI250X";
  r.intra = "InfinityFabric";
  const auto p = compose_profile(r, builtin_catalogue());
  const auto a100 = compose_profile(perlmutter_like(), builtin_catalogue());
  const double ratio = p.compute.peak_fp32_flops / a100.compute.peak_fp32_flops;
  EXPECT_NEAR(p.compute.half_work_flops / a100.compute.half_work_flops, ratio, 1e-9);
  const auto f = std::find_if(p.fitted.begin(), p.fitted.end(), [](const FittedParameter& x) { return x.key == "compute.half_work_GFLOP"; });
  ASSERT_NE(f, p.fitted.end());
  EXPECT_NEAR(f->value, p.compute.half_work_flops / 1e9, 1e-9);
  EXPECT_NE(f->source.find("moved to this GPU's fp32 peak"), std::string::npos) << f->source;
}

// A Hopper GPU takes the GPU's fits from the machine fitted to its own H100 runs, not an A100's.
TEST(ComposeProfile, AHopperGpuTakesTheH100MachinesFits) {
  auto r = perlmutter_like();
  r.gpu = "H100-SXM5-80GB";
  r.intra = "NVSwitch3";
  const auto p = compose_profile(r, builtin_catalogue());
  const auto& eos = calibrated_builtin_profile("eos");
  EXPECT_DOUBLE_EQ(p.compute.efficiency.at("conv3d"), eos.compute.efficiency.at("conv3d"));
  const auto f =
      std::find_if(p.fitted.begin(), p.fitted.end(), [](const FittedParameter& x) { return x.key == "compute.efficiency.conv3d"; });
  ASSERT_NE(f, p.fitted.end());
  EXPECT_TRUE(f->source.starts_with("lent by eos (fitted to its MLPerf HPC logs)")) << f->source;
}

// A node of one GPU (a Cray XC's P100) has no link between GPUs to name, nor GPUs without NVLink;
// a node of GPUs that may have one must name it.
TEST(ComposeProfile, ANodeOfOneGpuNeedsNoLinkInside) {
  auto r = perlmutter_like();
  r.gpu = "P100-PCIE-16GB";
  r.gpus_per_node = 1;
  r.node_network = "Aries";
  r.intra.clear();
  const auto p = compose_profile(r, builtin_catalogue());
  EXPECT_DOUBLE_EQ(p.comm.intra_node.bandwidth_Bps, 15.75e9);  // the host's PCIe 3, which nothing crosses
  EXPECT_DOUBLE_EQ(p.compute.peak_fp32_flops, 9.3e12);
  EXPECT_DOUBLE_EQ(p.comm.inter_node.bandwidth_Bps, 10e9);
  r.gpus_per_node = 4;  // a GPU without NVLink reaches its neighbours across PCIe
  EXPECT_DOUBLE_EQ(compose_profile(r, builtin_catalogue()).comm.intra_node.bandwidth_Bps, 15.75e9);
  r.gpu = "A100-PCIE-40GB";  // with or without its NVLink bridges: only the user knows
  EXPECT_NE(error_of([&] {
              compose_profile(r, builtin_catalogue());
            }).find("--intra: a node of 4 A100-PCIE-40GB needs the link between them (e.g. NVLink3, or PCIe4 where they have none)"),
            std::string::npos);
}

TEST(ComposeProfile, BadPartsNameWhatIsKnown) {
  auto r = perlmutter_like();
  r.gpu = "A200";
  EXPECT_NE(error_of([&] { compose_profile(r, builtin_catalogue()); }).find("unknown gpu 'A200' (known: A100-PCIE-40GB"),
            std::string::npos);
  r = perlmutter_like();
  r.node_network = "four HDR";
  EXPECT_NE(error_of([&] { compose_profile(r, builtin_catalogue()); }).find("--node-network: four HDR: expected COUNTx NAME"),
            std::string::npos);
  r = perlmutter_like();
  r.intra = "NVLink9";
  EXPECT_NE(error_of([&] { compose_profile(r, builtin_catalogue()); }).find("unknown link 'NVLink9'"), std::string::npos);
}
