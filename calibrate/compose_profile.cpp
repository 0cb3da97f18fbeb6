#include "calibrate/compose_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/paper_calibration.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

// "4x HDR200" -> (4, HDR200); "Slingshot-11" -> (1, Slingshot-11)
std::pair<int, std::string> count_of(const std::string& text, const char* option) {
  static const std::regex re(R"(^\s*(?:(\d+)\s*x\s*)?([A-Za-z0-9_.+-]+)\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, re) || (m[1].matched && std::stoi(m[1]) < 1))
    fail_input(option, text, "expected COUNTx NAME (e.g. \"4x HDR200\") or NAME");
  return {m[1].matched ? std::stoi(m[1]) : 1, m[2]};
}

void note(MachineProfile& p, const std::string& what, const std::string& source) {
  p.fitted.push_back({"hardware", 0, 0, what + ": " + source});
}

void set_io(MachineProfile& p, const ComposeRequest& r, double node_network_Bps) {
  // a node reads no faster than its network; the file system's aggregate only where the user knows it
  p.io.pfs.per_node_bandwidth_Bps = r.pfs_node_GBps ? *r.pfs_node_GBps * 1e9 : node_network_Bps;
  p.io.pfs.aggregate_bandwidth_Bps = r.pfs_GBps ? *r.pfs_GBps * 1e9 : 1e18;
  note(p, "file system", r.pfs_GBps ? fmt::format("{} GB/s aggregate (given)", *r.pfs_GBps) : "aggregate not given: no limit");
  if (r.nvme_GBps && !r.nvme_TB) fail_input("--nvme-GBps", fmt::format("{}", *r.nvme_GBps), "give the NVMe's capacity too (--nvme-TB)");
  p.io.nvme.capacity_per_node_bytes = r.nvme_TB.value_or(0) * 1e12;
  p.io.nvme.per_node_bandwidth_Bps = r.nvme_GBps ? *r.nvme_GBps * 1e9 : r.nvme_TB ? IoParams{}.nvme.per_node_bandwidth_Bps : 0;
  if (r.nvme_TB && !r.nvme_GBps)
    note(p, "NVMe", "read bandwidth not given: mrplan's default until calibrate records fits it from a staging time");
  if (r.host_memory_GB) p.host_memory_bytes = *r.host_memory_GB * 1e9;
  p.io.host_memory.capacity_per_node_bytes = default_page_cache_bytes(p.host_memory_bytes);
}

}  // namespace

MachineProfile compose_profile(const ComposeRequest& r, const HardwareCatalogue& c) {
  if (r.gpus_per_node < 1) fail_input("--gpus-per-node", std::to_string(r.gpus_per_node), "expected at least 1");
  const GpuSpec& gpu = c.gpu(r.gpu);
  const auto [count, network] = count_of(r.node_network, "--node-network");
  const LinkSpec& net = c.link(network);
  const std::string host_name = host_link_of(c, r.gpu, r.host_link);
  const std::string intra_name = r.intra.empty() ? implied_intra_link(c, r.gpu, r.gpus_per_node, host_name) : r.intra;
  if (intra_name.empty())
    fail_input("--intra", "",
               fmt::format("a node of {} {} needs the link between them (e.g. {}, or {} where they have none)", r.gpus_per_node, r.gpu,
                           gpu.nvswitch.empty() ? gpu.nvlink : gpu.nvswitch, host_name));
  const LinkSpec& intra = c.link(intra_name);
  const LinkSpec& host = c.link(host_name);
  const std::string prior = r.prior.empty() ? gpu.fits_from : r.prior;
  // the GPU's fits from the machine fitted to its own runs; the network's and file system's from its
  // profile before them (another machine's network, cables and file system say little of this one's)
  MachineProfile p = calibrated_builtin_profile(r.prior.empty() ? before_mlperf(prior) : prior);
  std::erase_if(p.fitted, [](const FittedParameter& f) { return f.key == "hardware"; });  // the prior's own hardware notes
  for (auto& f : p.fitted) f.source = fmt::format("transferred from {} ({})", prior, f.source);
  if (r.prior.empty()) lend_measured_fits(p, calibrated_builtin_profile(prior), Lend::gpu_and_epochs);
  p.name = r.name;
  p.description = fmt::format("composed: {}x {} per node, {} inside the node, {}x {} between nodes, {} to the host", r.gpus_per_node, r.gpu,
                              intra_name, count, network, host_name);
  p.gpus_per_node = r.gpus_per_node;
  p.gpu_memory_bytes = gpu.memory_bytes;
  move_fits_to_peaks(p, gpu.peak_fp32_flops, gpu.peak_fp16_flops);
  p.compute.mem_bandwidth_Bps = gpu.mem_bandwidth_Bps;
  p.comm.intra_node.bandwidth_Bps = intra.bandwidth_Bps;
  p.comm.inter_node.bandwidth_Bps = count * net.bandwidth_Bps;
  p.io.host_to_device_Bps = host.bandwidth_Bps;
  note(p, "gpu " + r.gpu, gpu.source);
  note(p, "intra-node " + intra_name, intra.source);
  note(p, fmt::format("node network {}x {}", count, network), net.source);
  note(p, "host link " + host_name, host.source);
  note(p, "fits", "transferred from " + prior + " (the calibrated built-in) until calibrate records fits this machine's runs");
  set_io(p, r, count * net.bandwidth_Bps);
  if (!r.cpu.empty()) {  // a peak: what page-cache reads reach of it, calibrate records fits
    const auto [sockets, cpu] = count_of(r.cpu, "--cpu");
    p.io.host_memory.per_node_bandwidth_Bps = sockets * c.cpu(cpu).memory_bandwidth_Bps;
    note(p, fmt::format("host {}x {}", sockets, cpu), c.cpu(cpu).source);
  }
  return p;
}

}  // namespace mrplan
