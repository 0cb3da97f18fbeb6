// What the preprocessing paper states (section, caption), as claims over the runs it spans, and
// the measurements it gives that go into the profiles as they are.
#include "calibrate/preprocessing_paper.hpp"

#include <fmt/format.h>

namespace mrplan {

namespace {

const std::vector<std::string> kSummit{"summit"}, kCoriV100{"cori-gpu"}, kCoriA100{"cori-a100"};
const std::vector<std::string> kCori{"cori-gpu", "cori-a100"}, kAll{"summit", "cori-gpu", "cori-a100"};
const std::vector<int> kBatches{1, 2, 4, 8};  // section IX-B: "batch sizes ranging from 1 to 8"
const std::vector<Staging> kStagedOrNot{Staging::none, Staging::nvme};
constexpr Coding kBase{Codec::raw, DecoderPlace::host}, kGzip{Codec::deflate, DecoderPlace::host};
constexpr Coding kLutGpu{Codec::lut, DecoderPlace::device};
constexpr Coding kDiffCpu{Codec::diff, DecoderPlace::host}, kDiffGpu{Codec::diff, DecoderPlace::device};
using enum PaperDataset;

// A speedup of `num` over `den` on every point of a grid.
PaperClaim speedup(std::string id, std::string app, std::string statement, std::string source, std::vector<std::string> machines,
                   std::vector<PaperDataset> datasets, ClaimSide num, ClaimSide den, ClaimBound bound, double stated) {
  PaperClaim c;
  c.id = std::move(id), c.app = std::move(app), c.statement = std::move(statement), c.source = std::move(source);
  c.machines = std::move(machines), c.datasets = std::move(datasets);
  c.batches = kBatches, c.stagings = kStagedOrNot, c.codings = {kBase};
  c.numerator = std::move(num), c.denominator = std::move(den);
  c.bound = bound, c.stated = stated;
  return c;
}

// The GPU decoder's share of a sample's time on the runs the paper's breakdowns show (Fig. 9 and
// 12: Cori-V100, small set, batch 4); it fixes the decoder's rate as a fraction of memory bandwidth.
PaperClaim decoder_share(std::string id, std::string app, std::string statement, std::string source, Coding coding, ClaimBound bound,
                         double stated) {
  PaperClaim c;
  c.id = std::move(id), c.app = std::move(app), c.statement = std::move(statement), c.source = std::move(source);
  c.machines = kCoriV100, c.datasets = {small}, c.batches = {4}, c.stagings = {Staging::none}, c.codings = {coding};
  c.quantity = ClaimQuantity::decode_share, c.bound = bound, c.stated = stated;
  c.fits = ClaimFit{fmt::format("io.codecs.{}.device_decode_GBps", codec_name(coding.codec)), kAll, 1e-4, 10, true};
  return c;
}

ClaimSide coded(Coding c) {
  ClaimSide s;
  s.coding = c;
  return s;
}
ClaimSide on(std::string machine) {
  ClaimSide s;
  s.machine = std::move(machine);
  return s;
}
ClaimSide staged(Staging staging) {
  ClaimSide s;
  s.staging = staging;
  return s;
}
ClaimSide with_batch(int b) {
  ClaimSide s;
  s.local_batch = b;
  return s;
}
ClaimSide with_set(PaperDataset d) {
  ClaimSide s;
  s.dataset = d;
  return s;
}

std::vector<PaperClaim> cosmoflow_claims() {
  const std::string ix_b = "section IX-B";
  std::vector<PaperClaim> v;
  v.push_back(speedup("C1", "cosmoflow", "Summit, small set: the plugin 5-8x the baseline (the most at batch 1)", ix_b + ", Fig. 10 caption",
                      kSummit, {small}, coded(kLutGpu), {}, ClaimBound::up_to, 8));
  v.back().fits = ClaimFit{"io.host_decode_GBps", kSummit, 0.01, 100};
  v.push_back(v.back());
  v.back().id = "C1b", v.back().bound = ClaimBound::at_least, v.back().stated = 5, v.back().fits.reset();
  for (const auto& m : kCori) {
    v.push_back(speedup(m == "cori-gpu" ? "C2v" : "C2a", "cosmoflow", "Cori-V100 and Cori-A100, small set: the plugin 3-4x the baseline",
                        ix_b, {m}, {small}, coded(kLutGpu), {}, ClaimBound::up_to, 4));
    v.back().fits = ClaimFit{"io.host_decode_GBps", {m}, 0.01, 100};
  }
  v.push_back(speedup("C2b", "cosmoflow", "Cori-V100 and Cori-A100, small set: the plugin 3-4x the baseline", ix_b, kCori, {small},
                      coded(kLutGpu), {}, ClaimBound::at_least, 3));
  v.push_back(speedup("C3", "cosmoflow", "gzip lowers throughput by up to 1.5x (IO saved, decompression paid)", ix_b + ", Fig. 10 caption",
                      kAll, {small}, coded(kBase), coded(kGzip), ClaimBound::up_to, 1.5));
  v.back().fits = ClaimFit{"io.codecs.deflate.host_decode_GBps", kAll, 0.01, 100};
  v.push_back(speedup("C4", "cosmoflow", "large set: the plugin up to an order of magnitude over the baseline", ix_b + ", abstract", kAll,
                      {large}, coded(kLutGpu), {}, ClaimBound::up_to, 10));
  v.push_back(speedup("C5", "cosmoflow", "large set: staging up to 1.5x on Cori-V100 and Cori-A100", ix_b, kCori, {large},
                      staged(Staging::nvme), staged(Staging::none), ClaimBound::up_to, 1.5));
  v.back().stagings = {Staging::none}, v.back().codings = {kBase, kGzip, kLutGpu};
  v.back().fits = ClaimFit{"io.tiers.pfs.per_node_bandwidth_GBps", kCori, 0.1, 100};  // both read Cori's cscratch1
  v.push_back(v.back());
  v.back().id = "C5s", v.back().statement = "large set: staging within 10% on Summit", v.back().machines = kSummit;
  v.back().stated = 1.1, v.back().fits.reset();
  v.push_back(decoder_share("C6", "cosmoflow", "the decoder takes under 1% of a sample's time", ix_b + ", Fig. 12", kLutGpu,
                            ClaimBound::up_to, 0.01));
  v.push_back(speedup("C7", "cosmoflow", "the baseline hardly changes with the batch size (8 against 1)", ix_b, kAll, {small},
                      with_batch(8), with_batch(1), ClaimBound::about, 1.0));
  v.back().batches = {1}, v.back().stagings = {Staging::none};
  return v;
}

std::vector<PaperClaim> deepcam_claims() {
  const std::string ix_a = "section IX-A";
  std::vector<PaperClaim> v;
  v.push_back(speedup("D1", "deepcam", "Cori: the CPU plugin up to 2.5x the baseline", "Fig. 8 caption", kCori, {small, large},
                      coded(kDiffCpu), {}, ClaimBound::up_to, 2.5));
  v.back().fits = ClaimFit{"io.codecs.diff.host_decode_GBps", kAll, 0.01, 100};
  v.push_back(speedup("D2a", "deepcam", "Cori-A100: the GPU plugin up to 3.1x the baseline", ix_a, kCoriA100, {small, large},
                      coded(kDiffGpu), {}, ClaimBound::up_to, 3.1));
  v.back().fits = ClaimFit{"io.host_decode_GBps", kCoriA100, 0.01, 100};
  v.push_back(speedup("D2v", "deepcam", "Cori-V100: the GPU plugin up to 3x the baseline", "Fig. 8 caption", kCoriV100, {small, large},
                      coded(kDiffGpu), {}, ClaimBound::up_to, 3));
  v.back().fits = ClaimFit{"io.host_decode_GBps", kCoriV100, 0.01, 100};
  v.push_back(speedup("D3", "deepcam", "unstaged: the GPU plugin up to 1.5x the CPU plugin", ix_a, kCori, {small, large}, coded(kDiffGpu),
                      coded(kDiffCpu), ClaimBound::up_to, 1.5));
  v.back().stagings = {Staging::none};
  v.push_back(speedup("D4", "deepcam", "the GPU plugin on Cori-A100 up to 2.2x Cori-V100", ix_a, kCoriA100, {small, large}, on("cori-a100"),
                      on("cori-gpu"), ClaimBound::up_to, 2.2));
  v.back().codings = {kDiffGpu};
  v.push_back(speedup("D5", "deepcam", "baseline: the large set 1.2-2.4x slower than the small one", ix_a, kAll, {small},
                      with_set(small), with_set(large), ClaimBound::up_to, 2.4));
  v.push_back(v.back());
  v.back().id = "D5b", v.back().bound = ClaimBound::at_least, v.back().stated = 1.2;
  v.push_back(speedup("D6", "deepcam", "Summit: the GPU plugin limited to 1.3x the baseline", ix_a, kSummit, {small, large}, coded(kDiffGpu), {},
                      ClaimBound::up_to, 1.3));
  v.back().fits = ClaimFit{"io.host_decode_GBps", kSummit, 0.01, 100};
  v.push_back(speedup("D7", "deepcam", "Summit: the CPU plugin does not improve on the baseline", ix_a, kSummit, {small, large},
                      coded(kDiffCpu), {}, ClaimBound::up_to, 1.0));
  v.push_back(decoder_share("D8", "deepcam", "the GPU decoder takes about 4% of a sample's time", ix_a + ", Fig. 9", kDiffGpu,
                            ClaimBound::about, 0.04));
  v.push_back(speedup("D9", "deepcam", "baseline: Cori-A100 no faster than Cori-V100 (the same host link for samples)", ix_a, kCoriA100,
                      {small, large}, on("cori-a100"), on("cori-gpu"), ClaimBound::about, 1.0));
  v.push_back(speedup("D10", "deepcam", "GPU plugin: a Summit node at best 60% of a Cori-V100 node", ix_a, kSummit, {small, large},
                      on("summit"), on("cori-gpu"), ClaimBound::up_to, 0.6));
  v.back().codings = {kDiffGpu};
  v.push_back(speedup("D11", "deepcam", "batch 4, baseline: a 6-V100 Summit node outperforms an 8-V100 Cori node", ix_a, kSummit,
                      {small, large}, on("summit"), on("cori-gpu"), ClaimBound::at_least, 1.0));
  v.back().batches = {4};
  return v;
}

}  // namespace

const std::vector<std::string>& preprocessing_paper_machines() { return kAll; }

std::vector<PaperClaim> preprocessing_paper_claims() {
  auto v = cosmoflow_claims();
  for (auto& c : deepcam_claims()) v.push_back(std::move(c));
  return v;
}

std::vector<StatedInput> preprocessing_paper_inputs() {
  return {
      {"io.host_to_device_efficiency", kCoriV100, 6.0 / 16.0, "section IX-A: pageable copies of 4-64 MB reach 4-8 GB/s (the middle) of PCIe 3's 16"},
      {"io.host_to_device_efficiency", kCoriA100, 7.0 / 24.7, "section IX-A: pageable copies reach 6-8 GB/s (the middle) of the 24.7 measured"},
      {"io.codecs.lut.ratio", kAll, 4, "section V-B: the lookup tables compress roughly 4x"},
      {"io.codecs.lut.output_bytes_per_value", kAll, 2, "section VIII-A: the CosmoFlow decoder emits FP16, losslessly"},
      {"io.codecs.deflate.ratio", kAll, 5, "section V-B: gzip compresses 5x"},
      {"io.codecs.diff.ratio", kAll, 4, "section V-A: 8-bit differences for FP32 values (the scheme's bound: raw lines lower it)"},
      {"io.codecs.diff.output_bytes_per_value", kAll, 2, "section V-A: the DeepCAM decoder emits FP16"},
  };
}

}  // namespace mrplan
