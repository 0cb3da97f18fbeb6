#include "model/hardware_catalogue.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "model/errors.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

extern const char* const kHardwareCatalogueYaml;

namespace {

template <class Map>
const typename Map::mapped_type& named(const Map& m, const std::string& name, const char* what) {
  if (auto it = m.find(name); it != m.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& [k, v] : m) known.push_back(k);
  fail_input("hardware catalogue", what, fmt::format("unknown {} '{}' (known: {})", what, name, fmt::join(known, ", ")));
}

std::vector<std::string> aliases_of(const YamlFields& f) { return f.has("aliases") ? f.texts("aliases") : std::vector<std::string>{}; }

}  // namespace

const GpuSpec& HardwareCatalogue::gpu(const std::string& name) const { return named(gpus, name, "gpu"); }
const LinkSpec& HardwareCatalogue::link(const std::string& name) const { return named(links, name, "link"); }
const CpuSpec& HardwareCatalogue::cpu(const std::string& name) const { return named(cpus, name, "cpu"); }

HardwareCatalogue catalogue_from_yaml_text(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail_input(file, "", std::string("not valid YAML: ") + e.what());
  }
  const YamlFields top(root, file, "");
  top.only({"gpus", "cpus", "links"});
  HardwareCatalogue c;
  const YamlFields gpus = top.child("gpus");  // named: the loop holds a reference into it
  for (const auto& item : gpus.node()) {
    const auto name = item.first.as<std::string>();
    const YamlFields f(item.second, file, "gpus." + name);
    f.only({"peak_fp32_TFLOPS", "peak_fp16_TFLOPS", "mem_bandwidth_GBps", "memory_GB", "host_link", "nvlink", "nvswitch", "fits_from",
            "aliases", "source"});
    GpuSpec g;
    g.peak_fp32_flops = f.positive("peak_fp32_TFLOPS") * 1e12;
    g.peak_fp16_flops = f.positive("peak_fp16_TFLOPS") * 1e12;
    g.mem_bandwidth_Bps = f.positive("mem_bandwidth_GBps") * 1e9;
    g.memory_bytes = f.positive("memory_GB") * 1e9;
    g.host_link = f.text("host_link"), g.fits_from = f.text("fits_from"), g.source = f.text("source");
    g.nvlink = f.text("nvlink", ""), g.nvswitch = f.text("nvswitch", ""), g.aliases = aliases_of(f);
    c.gpus.emplace(name, g);
  }
  const YamlFields links = top.child("links");  // named: the loop holds a reference into it
  for (const auto& item : links.node()) {
    const auto name = item.first.as<std::string>();
    const YamlFields f(item.second, file, "links." + name);
    f.only({"bandwidth_GBps", "aliases", "source"});
    c.links.emplace(name, LinkSpec{f.positive("bandwidth_GBps") * 1e9, aliases_of(f), f.text("source")});
  }
  const YamlFields cpus = top.child("cpus");  // named: the loop holds a reference into it
  for (const auto& item : cpus.node()) {
    const auto name = item.first.as<std::string>();
    const YamlFields f(item.second, file, "cpus." + name);
    f.only({"memory_bandwidth_GBps", "aliases", "source"});
    c.cpus.emplace(name, CpuSpec{f.positive("memory_bandwidth_GBps") * 1e9, aliases_of(f), f.text("source")});
  }
  for (const auto& [name, g] : c.gpus)  // every link a GPU names is in the catalogue
    for (const auto* l : {&g.host_link, &g.nvlink, &g.nvswitch})
      if (!l->empty()) c.link(*l);
  return c;
}

const HardwareCatalogue& builtin_catalogue() {
  static const HardwareCatalogue c = catalogue_from_yaml_text(kHardwareCatalogueYaml, "data/hardware.yaml");
  return c;
}

std::string host_link_of(const HardwareCatalogue& c, const std::string& gpu, const std::string& host_link) {
  if (!host_link.empty()) return host_link;
  const auto it = c.gpus.find(gpu);
  return it == c.gpus.end() ? "" : it->second.host_link;
}

std::string implied_intra_link(const HardwareCatalogue& c, const std::string& gpu, int gpus_per_node, const std::string& host_link) {
  const auto it = c.gpus.find(gpu);
  if (it == c.gpus.end() || (gpus_per_node != 1 && !it->second.nvlink.empty())) return "";
  return host_link_of(c, gpu, host_link);
}

}  // namespace mrplan
