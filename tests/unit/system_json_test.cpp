#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "calibrate/system_json.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

const std::filesystem::path kLogs = MRPLAN_MLPERF_LOGS;

SystemDescription read(const std::string& round_submitter, const std::string& system) {
  return load_system_json((kLogs / round_submitter / "systems" / (system + ".json")).string(), builtin_catalogue());
}

SystemDescription from_text(const std::string& json) { return system_from_json_text(json, "s.json", builtin_catalogue()); }

std::string unread(const SystemDescription& d, const std::string& flag) {
  const auto it = d.unread.find(flag);
  return it == d.unread.end() ? "" : it->second;
}

}  // namespace

// The parts each public system description names, as studies/mlperf-scaling composed them by hand.
TEST(SystemJson, PublicDescriptionsNameTheirParts) {
  const auto dgx = read("v2.0/NVIDIA", "dgxa100_n64_pytorch").request;
  EXPECT_EQ(dgx.name, "dgxa100_n64_pytorch");
  EXPECT_EQ(dgx.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(dgx.gpus_per_node, 8);
  EXPECT_EQ(dgx.node_network, "8x HDR200");  // the compute adapters, not the two for storage
  EXPECT_EQ(dgx.intra, "NVSwitch");
  EXPECT_EQ(dgx.cpu, "2x EPYC-7742");
  EXPECT_DOUBLE_EQ(*dgx.host_memory_GB, 2000);
  EXPECT_DOUBLE_EQ(*dgx.nvme_TB, 30);  // "2x 1.92TB NVMe SSD + 30TB U.2 NVMe SSD": the data drive
  const auto eos = read("v3.0/NVIDIA", "eos_n64_ngc23.09_pytorch");
  EXPECT_TRUE(eos.unread.empty());
  EXPECT_EQ(eos.request.gpu, "H100-SXM5-80GB");  // "NVIDIA H100 80GB HBM3": the catalogue's alias
  EXPECT_EQ(eos.request.node_network, "8x NDR");
  EXPECT_EQ(eos.request.intra, "NVSwitch3");  // the H100's generation of NVSwitch
  EXPECT_EQ(eos.request.cpu, "2x Xeon-8480C");
  const auto horeka = read("v2.0/HelmholtzAI", "horeka_gpu_n512_pytorch1.13").request;
  EXPECT_EQ(horeka.gpu, "A100-PCIE-40GB");
  EXPECT_EQ(horeka.node_network, "4x HDR200");  // "4xHDR ( Mellanox 200 Gbit InfiniBand ConnectX 6)"
  EXPECT_EQ(horeka.intra, "NVLink3");           // "NVLink" on an A100
  EXPECT_EQ(horeka.cpu, "2x Xeon-8368");
  EXPECT_DOUBLE_EQ(*horeka.host_memory_GB, 512);
  EXPECT_DOUBLE_EQ(*horeka.nvme_TB, 0.98);  // "980Gb"
}

// Parts as vendors' tools and other submitters spell them (nvidia-smi's names; "+" and "(R)" in
// Intel's; a link's speed run into its name) are the catalogue's aliases.
TEST(SystemJson, VendorsSpellingsNameTheCataloguesParts) {
  const auto d = from_text(R"({"accelerator_model_name": "NVIDIA A100-SXM-80GB", "accelerators_per_node": "8",
    "host_networking": "8x NDR400", "accelerator_interconnect": "NVSwitch",
    "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8480+", "host_processors_per_node": 2, "host_memory_capacity": "2 TB"})");
  EXPECT_EQ(d.request.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(d.request.node_network, "8x NDR");
  EXPECT_EQ(d.request.cpu, "2x Xeon-8480C");
  EXPECT_EQ(from_text(R"({"accelerator_model_name": "NVIDIA H100-SXM-80GB"})").request.gpu, "H100-SXM5-80GB");
  EXPECT_EQ(from_text(R"({"accelerator_model_name": "NVIDIA H100 PCIe"})").request.gpu, "H100-PCIE-80GB");
  const auto apart = from_text(R"({"accelerator_model_name": "NVIDIA A100 - PCIe - 80 GB", "accelerators_per_node": 2,
    "accelerator_interconnect": "PCIe Gen4: 64 GB / s", "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8358",
    "host_processors_per_node": 1})");
  EXPECT_EQ(apart.request.gpu, "A100-PCIE-80GB");  // a size written apart is one word
  EXPECT_EQ(apart.request.intra, "PCIe4");
  EXPECT_EQ(apart.request.cpu, "1x Xeon-8358");
  const auto xc = from_text(R"({"accelerator_model_name": "NVIDIA P100-PCIE-16GB", "accelerators_per_node": "1",
    "accelerator_interconnect": "", "host_processor_model_name": "Intel(R) Xeon(R) E5-2690 v3 @ 2.60GHz", "host_processors_per_node": "1"})");
  EXPECT_EQ(xc.request.gpu, "P100-PCIE-16GB");
  EXPECT_EQ(xc.request.cpu, "1x Xeon-E5-2690-v3");
  EXPECT_EQ(unread(xc, "--intra"), "");  // one GPU a node: no link between GPUs to name
  const auto rtx = from_text(R"({"accelerator_model_name": "NVIDIA Quadro RTX 5000", "accelerators_per_node": "4"})");
  EXPECT_EQ(rtx.request.gpu, "Quadro-RTX-5000");
  EXPECT_EQ(unread(rtx, "--intra"), "");  // no NVLink: its neighbours are across PCIe
  EXPECT_EQ(from_text(R"({"host_networking": "2x Mellanox FDR InfiniBand"})").request.node_network, "2x FDR");
  EXPECT_EQ(from_text(R"({"accelerator_model_name": "MI250X", "accelerator_interconnect": "Infinity Fabric"})").request.intra,
            "InfinityFabric");
  EXPECT_EQ(from_text(R"({"accelerator_model_name": "MI250X", "host_networking": "Slingshot11", "host_network_card_count": 4})")
                .request.node_network,
            "4x Slingshot-11");
}

TEST(SystemJson, WhatADescriptionDoesNotSayIsLeftWithItsReason) {
  const auto juwels = read("v2.0/HelmholtzAI", "juwelsbooster_gpu_n2048_pytorch1.13");
  EXPECT_TRUE(juwels.request.intra.empty());
  EXPECT_EQ(unread(juwels, "--intra"), "accelerator_interconnect is not given");
  EXPECT_FALSE(juwels.request.nvme_TB);  // no node-local storage named: none, and nothing to say
  EXPECT_EQ(juwels.request.cpu, "2x EPYC-7402");
  const auto pm = read("v1.0/LBNL", "perlmutter_256x4_ngc21.09_mxnet");
  EXPECT_TRUE(pm.request.node_network.empty());
  EXPECT_EQ(unread(pm, "--node-network"),
            "host_networking 'HPE Cray Slingshot' names no part of the catalogue (nearest: Slingshot-10, Slingshot-11)");
  EXPECT_EQ(pm.request.intra, "NVLink3");
  EXPECT_EQ(pm.request.cpu, "1x EPYC-7763");
  EXPECT_DOUBLE_EQ(*pm.request.host_memory_GB, 256);  // "256 GB DDR4"
}

TEST(SystemJson, TheMostSpecificPartWinsAndTiesAreSaid) {
  const auto hdr100 = from_text(R"({"host_networking": "2x Mellanox HDR 100 InfiniBand", "accelerators_per_node": 4})");
  EXPECT_EQ(hdr100.request.node_network, "2x HDR100");  // not HDR200 by its alias "HDR"
  EXPECT_EQ(hdr100.request.gpus_per_node, 4);           // numbers as numbers, too
  const auto cards = from_text(R"({"host_networking": "InfiniBand NDR", "host_network_card_count": "4"})");
  EXPECT_EQ(cards.request.node_network, "4x NDR");
  const auto a100 = from_text(R"({"accelerator_model_name": "NVIDIA A100 80GB"})");
  EXPECT_EQ(unread(a100, "--gpu"),
            "accelerator_model_name 'NVIDIA A100 80GB' names no part of the catalogue (nearest: A100-PCIE-80GB, A100-SXM4-80GB)");
  EXPECT_EQ(unread(a100, "--intra"), "accelerator_interconnect is not given");
  const auto p100 = from_text(R"({"accelerator_model_name": "Tesla P100-SXM2-16GB", "accelerator_interconnect": "NVLink"})");
  EXPECT_EQ(p100.request.gpu, "P100-SXM2-16GB");
  EXPECT_EQ(unread(p100, "--intra"), "accelerator_interconnect 'NVLink': the catalogue gives the P100-SXM2-16GB no NVLink");
  const auto none = from_text(R"({"accelerators_per_node": "0", "host_networking": "8x HDR200"})");
  EXPECT_EQ(unread(none, "--gpus-per-node"), "accelerators_per_node '0' is not a count of GPUs");
  EXPECT_EQ(unread(none, "--node-network"), "");
}

TEST(SystemJson, TwoPartsOfOneNameAreAmbiguous) {
  const auto c = catalogue_from_yaml_text(
      "gpus: {}\ncpus: {}\nlinks: {X1: {bandwidth_GBps: 1, aliases: [Fast], source: a}, X2: {bandwidth_GBps: 2, aliases: [Fast], source: b}}\n",
      "h.yaml");
  const auto d = system_from_json_text(R"({"host_networking": "2x Fast"})", "s.json", c);
  EXPECT_EQ(unread(d, "--node-network"), "host_networking '2x Fast' could be any of X1, X2");
  EXPECT_NE(error_of([] {
              catalogue_from_yaml_text("gpus: {G: {peak_fp32_TFLOPS: 1, peak_fp16_TFLOPS: 1, mem_bandwidth_GBps: 1, memory_GB: 1, "
                                       "host_link: L, nvlink: NVLink9, fits_from: summit, source: s}}\ncpus: {}\n"
                                       "links: {L: {bandwidth_GBps: 1, source: s}}\n",
                                       "h.yaml");
            }).find("unknown link 'NVLink9'"),
            std::string::npos);
}

TEST(SystemJson, BadFilesAreRefusedByName) {
  EXPECT_NE(error_of([] { from_text("{\"system_name\": "); }).find("s.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of([] { from_text("[1, 2]"); }).find("s.json: expected an MLPerf system description"), std::string::npos);
  EXPECT_NE(error_of([] { load_system_json("/nonexistent/s.json", builtin_catalogue()); })
                .find("/nonexistent/s.json: cannot open the system description"),
            std::string::npos);
}

// The ML framework, without versions or build tags: NVIDIA's NGC build is its own; "torch" is PyTorch.
TEST(SystemJson, TheFrameworkWithoutItsVersion) {
  EXPECT_EQ(software_name("PyTorch NVIDIA Release 22.08"), "pytorch nvidia release");
  EXPECT_EQ(software_name("PyTorch 1.13.0a+d321be6"), "pytorch");
  EXPECT_EQ(software_name("PyTorch-v1.8.1"), "pytorch");
  EXPECT_EQ(software_name("torch/1.8.0a0+56b43f4"), "pytorch");
  EXPECT_EQ(software_name("tensorflow/2.1.0 py37_3dc74fe_3951.g96e0832"), "tensorflow");
  EXPECT_EQ(software_name("MXNet NVIDIA Release 21.09"), "mxnet nvidia release");
  EXPECT_EQ(software_name(""), "");
  if (!std::filesystem::exists(kLogs)) GTEST_SKIP() << "no " << kLogs;
  EXPECT_EQ(read("v3.0/NVIDIA", "eos_n256_ngc23.09_pytorch").software, "pytorch nvidia release");
  EXPECT_EQ(read("v2.0/HelmholtzAI", "horeka_gpu_n64_pytorch1.13").software, "pytorch");
}

// A result log's system description where the results repositories put it (SUBMITTER/systems beside
// SUBMITTER/results/SYSTEM/strong/BENCHMARK), and where ../shared keeps it (scaling level dropped).
TEST(SystemJson, TheDescriptionBesideALogInEitherLayout) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("mrplan-beside-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const auto* d : {"upstream/NVIDIA/results/dgx/strong/deepcam", "upstream/NVIDIA/systems", "shared/v2.0/LBNL/pm/cosmoflow",
                        "shared/v2.0/LBNL/systems", "none/x/y/z"})
    fs::create_directories(root / d);
  auto write = [](const fs::path& f, const std::string& text) { std::ofstream(f) << text; };
  write(root / "upstream/NVIDIA/systems/dgx.json", R"({"framework": "PyTorch NVIDIA Release 22.08"})");
  write(root / "shared/v2.0/LBNL/systems/pm.json", R"({"framework": "MXNet NVIDIA Release 21.09"})");
  const auto upstream = root / "upstream/NVIDIA/results/dgx/strong/deepcam/result_0.txt";
  const auto shared = root / "shared/v2.0/LBNL/pm/cosmoflow/result_1.txt";
  EXPECT_EQ(system_json_beside(upstream.string()), (root / "upstream/NVIDIA/systems/dgx.json").string());
  EXPECT_EQ(system_json_beside(shared.string()), (root / "shared/v2.0/LBNL/systems/pm.json").string());
  EXPECT_EQ(software_beside(upstream.string()), "pytorch nvidia release");
  EXPECT_EQ(software_beside(shared.string()), "mxnet nvidia release");
  EXPECT_EQ(software_beside(upstream.parent_path().string()), "pytorch nvidia release");  // the logs' folder
  EXPECT_EQ(software_beside(shared.parent_path().string()), "mxnet nvidia release");
  EXPECT_EQ(system_json_beside((root / "none/x/y/z/result_0.txt").string()), "");
  // one that will not read names no framework: the log is read without it
  fs::create_directories(root / "none/x/systems");
  write(root / "none/x/systems/y.json", "{\"framework\": ");
  EXPECT_EQ(system_json_beside((root / "none/x/y/z/result_0.txt").string()), (root / "none/x/systems/y.json").string());
  EXPECT_EQ(software_beside((root / "none/x/y/z/result_0.txt").string()), "");
  EXPECT_EQ(software_beside("result_0.txt"), "");
  fs::remove_all(root);
}
