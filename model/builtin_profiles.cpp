#include "model/builtin_profiles.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.hpp"

namespace mrplan {

namespace {

constexpr double GB = 1e9, TB = 1e12, GiB = 1073741824.0;

void spec(MachineProfile& m, const std::string& key, double value, const std::string& source) {
  m.fitted.push_back({key, value, 0.0, source});
}

// Preprocessing paper Table I (Summit column); OLCF Summit user guide for links and GPFS.
MachineProfile summit() {
  MachineProfile m;
  m.name = "summit";
  m.description = "OLCF Summit: 6x V100-16GB SXM2 per node, NVLink 2.0 CPU-GPU and GPU-GPU, dual-rail EDR IB, GPFS Alpine, 1.6 TB NVMe";
  m.gpus_per_node = 6;
  m.gpu_memory_bytes = 16 * GB;
  m.host_memory_bytes = 512 * GB;
  m.compute.peak_fp32_flops = 15.7 * TB;
  m.compute.peak_fp16_flops = 120 * TB;
  m.compute.mem_bandwidth_Bps = 900 * GB;
  m.comm.intra_node = {5e-6, 50 * GB};   // NVLink 2.0, 2 bricks x 25 GB/s
  m.comm.inter_node = {5e-6, 25 * GB};   // 2 x EDR (12.5 GB/s each)
  m.io.pfs = {2.5 * TB, 25 * GB, 1e-3};  // Alpine 2.5 TB/s; a node is limited by its two rails
  m.io.nvme_bandwidth_Bps = 5.5 * GiB;
  m.io.nvme_capacity_bytes = 1.6 * TB;
  m.io.host_to_device_Bps = 50 * GB;     // NVLink CPU-GPU
  spec(m, "hardware", 0, "preprocessing paper Table I (Summit); OLCF Summit documentation");
  return m;
}

// Preprocessing paper Table I (Cori V100 column); NERSC Cori GPU documentation.
MachineProfile cori_gpu() {
  MachineProfile m;
  m.name = "cori-gpu";
  m.description = "NERSC Cori GPU: 8x V100-16GB per node, PCIe 3 host link, NVLink hybrid cube mesh, 4x EDR IB, Lustre";
  m.gpus_per_node = 8;
  m.gpu_memory_bytes = 16 * GB;
  m.host_memory_bytes = 384 * GB;
  m.compute.peak_fp32_flops = 15.7 * TB;
  m.compute.peak_fp16_flops = 120 * TB;
  m.compute.mem_bandwidth_Bps = 900 * GB;
  m.comm.intra_node = {5e-6, 25 * GB};   // one NVLink 2.0 brick between most GPU pairs
  m.comm.inter_node = {5e-6, 50 * GB};   // 4 x EDR
  m.io.pfs = {700 * GB, 12.5 * GB, 1e-3};  // cscratch1 ~700 GB/s
  m.io.nvme_bandwidth_Bps = 3.2 * GiB;
  m.io.nvme_capacity_bytes = 1.6 * TB;
  m.io.host_to_device_Bps = 16 * GB;     // PCIe 3.0 x16
  spec(m, "hardware", 0, "preprocessing paper Table I (Cori V100); NERSC Cori GPU documentation");
  return m;
}

// NERSC Perlmutter GPU nodes: preprocessing paper Table I (A100 column) and NERSC documentation.
MachineProfile perlmutter() {
  MachineProfile m;
  m.name = "perlmutter";
  m.description = "NERSC Perlmutter: 4x A100-40GB per node, PCIe 4 host link, NVLink 3, Slingshot-11 (4 NICs), all-flash Lustre";
  m.gpus_per_node = 4;
  m.gpu_memory_bytes = 40 * GB;
  m.host_memory_bytes = 256 * GB;
  m.compute.peak_fp32_flops = 19.5 * TB;
  m.compute.peak_fp16_flops = 312 * TB;
  m.compute.mem_bandwidth_Bps = 1555 * GB;
  m.comm.intra_node = {5e-6, 100 * GB};  // 4 NVLink 3 links per GPU pair
  m.comm.inter_node = {5e-6, 100 * GB};  // 4 x 25 GB/s Slingshot-11
  m.io.pfs = {5 * TB, 25 * GB, 0.5e-3};
  m.io.nvme_bandwidth_Bps = 0;
  m.io.nvme_capacity_bytes = 0;          // no node-local NVMe on GPU nodes
  m.io.host_to_device_Bps = 25 * GB;     // PCIe 4.0 x16
  spec(m, "hardware", 0, "preprocessing paper Table I (A100); NERSC Perlmutter documentation");
  return m;
}

}  // namespace

std::vector<std::string> builtin_profile_names() { return {"summit", "cori-gpu", "perlmutter"}; }

MachineProfile builtin_hardware_profile(const std::string& name) {
  if (name == "summit") return summit();
  if (name == "cori-gpu" || name == "cori") return cori_gpu();
  if (name == "perlmutter") return perlmutter();
  fail_input("", "machine", fmt::format("unknown built-in machine '{}' (known: {}; or give a profile YAML file)", name,
                                        fmt::join(builtin_profile_names(), ", ")));
}

}  // namespace mrplan
