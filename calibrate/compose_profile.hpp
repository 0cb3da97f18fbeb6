#pragma once
// `mrplan profile compose`: a machine profile from hardware parts (data/hardware.yaml), its fitted
// efficiencies, overheads and learning curves transferred from a calibrated built-in profile until
// `calibrate records` fits them to the machine's own runs.
#include <optional>
#include <string>

#include "model/hardware_catalogue.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

struct ComposeRequest {
  std::string name = "composed";
  std::string gpu;
  int gpus_per_node = 4;
  std::string node_network;  // "4x HDR200", or one adapter: "Slingshot-11"
  std::string intra;         // the GPUs' link inside a node
  std::string host_link;     // empty: the GPU's own
  std::string cpu;           // "2x EPYC-7742": the host's memory bandwidth, which page-cache reads share; empty: the prior's rate
  std::optional<double> pfs_GBps, pfs_node_GBps, nvme_TB, nvme_GBps, host_memory_GB;
  std::string prior;  // calibrated built-in the fits come from; empty: the GPU's `fits_from`
};

MachineProfile compose_profile(const ComposeRequest& request, const HardwareCatalogue& catalogue);

}  // namespace mrplan
