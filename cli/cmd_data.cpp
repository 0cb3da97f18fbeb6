#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "exec/datagen.hpp"
#include "exec/encode_dataset.hpp"

namespace mrplan {

namespace {

void register_datagen(CLI::App& app) {
  auto* cmd = app.add_subcommand("datagen",
                                 "Write a synthetic dataset in the real HDF5 layout (CosmoFlow: 3Dmap, unitPar; DeepCAM: "
                                 "climate/data, climate/labels_0, stats.h5; Neuron Inverter: *_frames, *_unitStar_par)");
  auto o = std::make_shared<DatagenOptions>();
  cmd->add_option("workload", o->workload, "cosmoflow-mrt, cosmoflow-mlperf, deepcam or neuron-inverter")->required();
  cmd->add_option("--out", o->out_dir, "output folder")->required();
  cmd->add_option("--samples", o->samples, "number of samples")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--size", o->size,
                  "dense extent: cube edge in voxels (CosmoFlow, default 32), rows (DeepCAM, default 96; "
                  "columns are 1.5x), time bins (Neuron Inverter, default 1600)");
  cmd->add_option("--seed", o->seed, "random seed (same seed, same data)")->capture_default_str();
  cmd->add_option("--samples-per-file", o->samples_per_file, "samples per HDF5 file (DeepCAM: always 1)")->capture_default_str();
  cmd->add_option("--threads", o->threads, "worker threads (0: all cores)")->check(CLI::Range(0, 4096));
  add_choice_option(cmd, "--counts", o->counts, {CosmoCounts::real, CosmoCounts::mini}, "a kind of counts",
                    "CosmoFlow's particle counts: real (the MLPerf dataset's binning, ~1 per voxel; lookup tables "
                    "compress ~4x as the preprocessing paper's) or mini (64 per coarser voxel: 32^3 samples that train in a few "
                    "epochs); default real from --size 128 up, mini below");
  cmd->callback([o] {
    const auto r = generate_dataset(*o);
    fmt::print("datagen: {} samples in {} files{}, {:.1f} MB, {:.2f} s ({:.1f} MB/s)\n", r.samples, r.files,
               r.what.empty() ? "" : " (" + r.what + ")", r.bytes / 1e6, r.seconds, r.bytes / 1e6 / r.seconds);
  });
}

void register_coarsen(CLI::App& app) {
  auto* cmd = app.add_subcommand("coarsen", "Average (or sum) every 2^d block of every file's spatial axes");
  auto o = std::make_shared<CoarsenOptions>();
  cmd->add_option("in", o->in_dir, "input folder")->required();
  cmd->add_option("out", o->out_dir, "output folder")->required();
  cmd->add_option("--factor", o->factor, "coarsening factor per spatial axis")->capture_default_str();
  cmd->add_option("--workload", o->workload, "layout of the files (cosmoflow-mrt, deepcam, neuron-inverter)")->capture_default_str();
  add_choice_option(cmd, "--op", o->op, {CoarsenOp::mean, CoarsenOp::sum}, "a block operation",
                    "mean or sum (default: the workload's own: sum for CosmoFlow's counts, mean for fields)");
  cmd->add_option("--threads", o->threads, "worker threads (0: all cores)")->check(CLI::Range(0, 4096));
  cmd->callback([o] {
    const auto r = coarsen_dataset(*o);
    fmt::print("coarsen: {} files, block {}s by {}, read {:.1f} MB, wrote {:.1f} MB in {:.3f} s ({:.0f} MB/s read)\n", r.files,
               to_string(r.op), o->factor, r.bytes_read / 1e6, r.bytes_written / 1e6, r.seconds, r.bytes_read / 1e6 / r.seconds);
  });
}

void register_encode(CLI::App& app) {
  auto* cmd = app.add_subcommand("encode",
                                 "Write an encoded copy of a dataset (lut: CosmoFlow's lookup tables, lossless; diff: DeepCAM's "
                                 "differential lines, lossy; deflate: HDF5's gzip; raw); `run` reads it unchanged");
  auto o = std::make_shared<EncodeOptions>();
  cmd->add_option("in", o->in_dir, "dataset folder, or a folder of res{K}/ dataset folders")->required();
  cmd->add_option("out", o->out_dir, "output folder (same layout)")->required();
  std::vector<std::pair<std::string, Codec>> codecs;
  for (const Codec c : {Codec::lut, Codec::diff, Codec::deflate, Codec::raw}) codecs.emplace_back(codec_name(c), c);
  add_choice_option(cmd, "--codec", o->codec, codecs, "a codec", "how the copy's samples are encoded");
  cmd->add_option("--workload", o->workload, "layout of the files (cosmoflow-mrt, deepcam, neuron-inverter; default: the files' own)");
  cmd->add_option("--level", o->deflate_level, "deflate level, 1-9")->check(CLI::Range(1, 9))->capture_default_str();
  cmd->add_option("--threads", o->threads, "encoding threads (0: all cores)")->check(CLI::Range(0, 4096));
  cmd->callback([o] {
    const auto r = encode_dataset(*o);
    fmt::print("encode: {} samples in {} files, {}: samples {:.1f} MB -> {:.1f} MB (ratio {:.2f}), {:.2f} s ({:.1f} MB/s of input)\n",
               r.samples, r.files, codec_name(o->codec), r.sample_bytes_in / 1e6, r.sample_bytes_out / 1e6,
               r.sample_bytes_in / std::max(1.0, r.sample_bytes_out), r.seconds, r.sample_bytes_in / 1e6 / std::max(1e-9, r.seconds));
    if (r.lut_values > 0 && r.samples > 0)
      fmt::print("encode: lookup tables of {:.0f} unique values and {:.0f} channel groups per sample (mean)\n",
                 static_cast<double>(r.lut_values) / r.samples, static_cast<double>(r.lut_groups) / r.samples);
    if (r.values > 0)
      fmt::print("encode: lossy: {:.2f}% of the values off by more than 10%, largest error {:.4g}\n",
                 100.0 * static_cast<double>(r.values_off_10pct) / static_cast<double>(r.values), r.max_abs_error);
  });
}

}  // namespace

void register_data(CLI::App& app) {
  register_datagen(app);
  register_coarsen(app);
  register_encode(app);
}

}  // namespace mrplan
