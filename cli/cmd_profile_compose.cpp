#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "calibrate/compose_profile.hpp"
#include "calibrate/system_json.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/text_table.hpp"
#include "model/errors.hpp"
#include "model/profile_yaml.hpp"

namespace mrplan {

namespace {

void list_parts(const HardwareCatalogue& c) {
  TextTable g({"gpu", "FP32 TFLOPS", "FP16 TFLOPS", "HBM GB/s", "memory GB", "host link", "source"});
  for (const auto& [name, s] : c.gpus)
    g.add({name, fmt::format("{:g}", s.peak_fp32_flops / 1e12), fmt::format("{:g}", s.peak_fp16_flops / 1e12),
           fmt::format("{:g}", s.mem_bandwidth_Bps / 1e9), fmt::format("{:g}", s.memory_bytes / 1e9), s.host_link, s.source});
  TextTable l({"link", "GB/s per direction", "source"});
  for (const auto& [name, s] : c.links) l.add({name, fmt::format("{:g}", s.bandwidth_Bps / 1e9), s.source});
  TextTable p({"cpu", "memory GB/s per socket", "source"});
  for (const auto& [name, s] : c.cpus) p.add({name, fmt::format("{:g}", s.memory_bandwidth_Bps / 1e9), s.source});
  fmt::print("{}\n{}\n{}", g.str(), p.str(), l.str());
}

// The parts a system description names, each replaced by its flag where the user gave one; a part
// still missing ends the command with the description's reason, an optional one with a note.
ComposeRequest with_system_json(const std::string& file, const ComposeRequest& flags, const CLI::App& cmd) {
  const auto d = load_system_json(file, builtin_catalogue());
  ComposeRequest r = d.request;
  auto given = [&](const char* flag) { return cmd.count(flag) > 0; };
  for (auto [flag, field] : {std::pair{"--gpu", &ComposeRequest::gpu}, {"--node-network", &ComposeRequest::node_network},
                             {"--intra", &ComposeRequest::intra}, {"--host-link", &ComposeRequest::host_link},
                             {"--cpu", &ComposeRequest::cpu}, {"--prior", &ComposeRequest::prior}, {"--name", &ComposeRequest::name}})
    if (given(flag)) r.*field = flags.*field;
  for (auto [flag, field] : {std::pair{"--pfs-GBps", &ComposeRequest::pfs_GBps}, {"--pfs-node-GBps", &ComposeRequest::pfs_node_GBps},
                             {"--nvme-TB", &ComposeRequest::nvme_TB}, {"--nvme-GBps", &ComposeRequest::nvme_GBps},
                             {"--host-memory-GB", &ComposeRequest::host_memory_GB}})
    if (given(flag)) r.*field = flags.*field;
  if (given("--gpus-per-node")) r.gpus_per_node = flags.gpus_per_node;
  for (const auto& [flag, why] : d.unread) {
    if (given(flag.c_str())) continue;
    const bool required = flag == "--gpu" || flag == "--node-network" || flag == "--gpus-per-node" ||
                          (flag == "--intra" && implied_intra_link(builtin_catalogue(), r.gpu, r.gpus_per_node, r.host_link).empty());
    if (required) fail_input(file, flag, why + ": give " + flag);
    fmt::print(stderr, "note: {}: {}: not set from the description (give {})\n", file, why, flag);
  }
  return r;
}

}  // namespace

void register_profile_compose(CLI::App& profile) {
  auto* cmd = profile.add_subcommand(
      "compose", "Write a profile from hardware parts (data/hardware.yaml), fits transferred from a calibrated built-in");
  auto r = std::make_shared<ComposeRequest>();
  auto out = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  auto system_json = std::make_shared<std::string>();
  auto opt = [&](const char* flag, std::optional<double>& v, const char* what) {
    cmd->add_option_function<double>(
           flag, [&v](double x) { v = x; }, what)
        ->check(CLI::PositiveNumber);
  };
  cmd->add_flag("--list", *list, "list the catalogue's GPUs and links, with their sources");
  cmd->add_option("--system-json", *system_json,
                  "an MLPerf submission's system description (systems/SYSTEM.json): the parts it names, each flag given overriding its part");
  cmd->add_option("--gpu", r->gpu, "GPU model, e.g. A100-SXM4-40GB (--list shows them)");
  cmd->add_option("--gpus-per-node", r->gpus_per_node, "GPUs per node")->capture_default_str();
  cmd->add_option("--node-network", r->node_network, "adapters per node and their kind, e.g. \"4x HDR200\" or Slingshot-11");
  cmd->add_option("--intra", r->intra,
                  "the GPUs' link inside a node, e.g. NVLink3 (default for a node of one GPU, or of GPUs without NVLink: the host link)");
  cmd->add_option("--host-link", r->host_link, "host-to-GPU link (default: the GPU's)");
  cmd->add_option("--cpu", r->cpu, "host processors, e.g. \"2x EPYC-7742\": their memory bandwidth bounds page-cache reads");
  opt("--pfs-GBps", r->pfs_GBps, "parallel file system's aggregate bandwidth");
  opt("--pfs-node-GBps", r->pfs_node_GBps, "what one node reads from it (default: its network)");
  opt("--nvme-TB", r->nvme_TB, "node-local NVMe capacity");
  opt("--nvme-GBps", r->nvme_GBps, "node-local NVMe read bandwidth");
  opt("--host-memory-GB", r->host_memory_GB, "host memory per node (default: the prior's)");
  cmd->add_option("--prior", r->prior, "calibrated built-in the fits come from (default: the GPU's)");
  cmd->add_option("--name", r->name, "the profile's name")->capture_default_str();
  cmd->add_option("--out", *out, "write the profile here (default: print it)");
  cmd->callback([r, out, list, system_json, cmd] {
    if (*list) return list_parts(builtin_catalogue());
    const ComposeRequest req = system_json->empty() ? *r : with_system_json(*system_json, *r, *cmd);
    for (const auto& [flag, v] : {std::pair{"--gpu", req.gpu}, {"--node-network", req.node_network}})
      if (v.empty()) throw CLI::RequiredError(flag);
    const auto yaml = profile_to_yaml(compose_profile(req, builtin_catalogue()));
    if (out->empty()) fmt::print("{}", yaml);
    else write_output(*out, yaml, "profile");
  });
}

}  // namespace mrplan
