#pragma once
// Public hardware numbers (data/hardware.yaml, built into the binary): GPUs, CPUs and links by name,
// each with its source, for composing machine profiles from parts.
#include <map>
#include <string>
#include <vector>

namespace mrplan {

struct GpuSpec {
  double peak_fp32_flops = 0, peak_fp16_flops = 0, mem_bandwidth_Bps = 0, memory_bytes = 0;
  std::string host_link;  // a link's name: how the host feeds it
  std::string fits_from;  // the calibrated built-in profile whose fits a composed profile starts from
  std::string nvlink, nvswitch;  // links of its generation inside a node; empty: it has none
  std::vector<std::string> aliases;  // other names system descriptions give it
  std::string source;
};

struct LinkSpec {
  double bandwidth_Bps = 0;  // per direction: per adapter (node networks), per GPU (inside a node)
  std::vector<std::string> aliases;
  std::string source;
};

struct CpuSpec {
  double memory_bandwidth_Bps = 0;  // per socket
  std::vector<std::string> aliases;
  std::string source;
};

struct HardwareCatalogue {
  std::map<std::string, GpuSpec> gpus;
  std::map<std::string, LinkSpec> links;
  std::map<std::string, CpuSpec> cpus;
  const CpuSpec& cpu(const std::string& name) const;    // throws naming the known ones
  const GpuSpec& gpu(const std::string& name) const;    // throws naming the known ones
  const LinkSpec& link(const std::string& name) const;  // throws naming the known ones
};

HardwareCatalogue catalogue_from_yaml_text(const std::string& text, const std::string& file);
const HardwareCatalogue& builtin_catalogue();

// The link between `gpu` and its host: `host_link` where named, else the catalogue's for the GPU
// (empty where `gpu` is no catalogue entry).
std::string host_link_of(const HardwareCatalogue& c, const std::string& gpu, const std::string& host_link);

// The link between a node's GPUs where none is named: the host link (`host_link`, empty: the GPU's)
// for a node of one GPU (nothing crosses it) or of GPUs the catalogue gives no NVLink (their
// neighbours are across PCIe); empty where they may have a link of their own, which only the user
// can say, or where `gpu` is no catalogue entry.
std::string implied_intra_link(const HardwareCatalogue& c, const std::string& gpu, int gpus_per_node, const std::string& host_link);

}  // namespace mrplan
