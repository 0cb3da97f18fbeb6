#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "cli/profile_file.hpp"
#include "exec/device_decoder.hpp"
#include "calibrate/io_fit.hpp"
#include "exec/io_microbench.hpp"

namespace mrplan {

namespace {

struct IoArgs {
  std::string profile = "out/local-profile.yaml";
  int devices_per_node = 2;
  IoBenchOptions bench;
};

void calibrate_io(const IoArgs& a) {
  const auto m = measure_io(a.bench, [](const std::string& s) { print_status(s); });
  end_status();
  const auto fit = fit_io(m);
  fmt::print("cold reads ({}): {} reads\n", m.tier_name, m.cold.size());
  fmt::print("  per-file latency {:.3f} +- {:.3f} ms, bandwidth {:.3f} +- {:.3f} GB/s, R^2 on log time {:.3f}\n",
             fit.per_file_latency_s * 1e3, fit.latency_std_error_s * 1e3, fit.bandwidth_Bps / 1e9, fit.bandwidth_std_error_Bps / 1e9,
             fit.r2);
  fmt::print("warm reads (page cache, the files' bytes):\n");
  for (const auto& w : m.warm) fmt::print("  {} thread(s): {:.3f} GB/s\n", w.threads, w.bytes_per_s / 1e9);
  fmt::print("the loader's reader from the page cache: {:.3f} GB/s, one thread; preprocessing ({}): {:.3f} GB/s of samples on disk\n",
             m.reader_bytes_per_s / 1e9, a.bench.workload == "deepcam" ? "min-max" : "log1p", m.decode_bytes_per_s / 1e9);
  fmt::print("raw path beyond the bytes (reader's work, then preprocessing): {:.3f} GB/s; host copy of a batch: {:.3f} GB/s\n",
             fit.raw_decode_Bps / 1e9, m.copy_bytes_per_s / 1e9);
  for (const auto& c : m.codecs) {
    const auto best = *std::max_element(c.decode_bytes_per_s.begin(), c.decode_bytes_per_s.end());
    fmt::print("codec {}: ratio {:.2f}, host decode {:.3f} GB/s of raw samples (best of {} passes, one thread)\n", codec_name(c.codec), c.ratio,
               best / 1e9, c.decode_bytes_per_s.size());
    if (c.codec == Codec::deflate) continue;
    if (c.device_decode_bytes_per_s.empty())
      fmt::print("  device decode: not measured: {}\n", device_decoding_unavailable());
    else
      fmt::print("  device decode {:.1f} GB/s of raw samples (best of {} passes, the kernels alone)\n",
                 *std::max_element(c.device_decode_bytes_per_s.begin(), c.device_decode_bytes_per_s.end()) / 1e9, c.device_decode_bytes_per_s.size());
  }
  update_profile(a.profile, a.devices_per_node,
                 [&](MachineProfile& p) { apply_io_fit(p, m, fit, fmt::format("calibrate io on {}", a.bench.data_dir)); });
}

}  // namespace

void register_calibrate_io(CLI::App& cal) {
  auto* c = cal.add_subcommand("io", "Cold and warm reads of a dataset, host preprocessing; fit latency and bandwidth per tier");
  auto a = std::make_shared<IoArgs>();
  c->add_option("--data", a->bench.data_dir, "folder of the dataset's HDF5 files")->required();
  c->add_option("--workload", a->bench.workload, "workload whose file layout the folder has")->capture_default_str();
  c->add_option("--profile", a->profile, "profile YAML to update (created if missing)")->capture_default_str();
  c->add_option("--threads", a->bench.max_threads, "warm reads with 1..threads readers (0: the cores)")->capture_default_str();
  c->add_option("--samples", a->bench.warm_samples, "samples per warm pass")->capture_default_str();
  c->add_option("--devices-per-node", a->devices_per_node, "ranks per node, for a new profile")->capture_default_str();
  c->add_option_function<std::vector<std::string>>(
       "--codec", [a](const std::vector<std::string>& names) { for (const auto& n : names) a->bench.codecs.push_back(codec_from_name(n, "--codec")); },
       "codecs to measure on samples of the data (lut, diff, deflate): ratio, host decode rate and, where a GPU is, the device decoders' -> io.codecs")
      ->delimiter(',');
  c->callback([a] { calibrate_io(*a); });
}

}  // namespace mrplan
