#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/preprocessing_paper.hpp"
#include "model/io_cost.hpp"

using namespace mrplan;

namespace {

const PreprocessingStudy& study() {
  static const PreprocessingStudy s = preprocessing_paper_study();
  return s;
}

const MachineProfile& profile(const std::string& name, const std::string& app = "deepcam") {
  for (const auto& m : study().profiles.at(app))
    if (m.name == name) return m;
  throw std::logic_error(name);
}

}  // namespace

NodeRun run(const std::string& app, PaperDataset set) {
  NodeRun r;
  r.app = app, r.machine = "summit", r.dataset = set;
  return r;
}

TEST(PreprocessingPaper, DatasetsPerNodeAsTheSectionsState) {
  const auto& summit = calibrated_builtin_profile("summit");
  EXPECT_EQ(samples_per_node(run("cosmoflow", PaperDataset::small), summit), 128 * 6);
  EXPECT_EQ(samples_per_node(run("cosmoflow", PaperDataset::large), summit), 2048 * 6);
  EXPECT_EQ(samples_per_node(run("deepcam", PaperDataset::small), summit), 1536);
  EXPECT_EQ(samples_per_node(run("deepcam", PaperDataset::large), summit), 12288);
}

// Where the host's preprocessing is all that counts, a node trains its ranks' decode rate over
// the sample's bytes: 8 ranks x 1 MB/s over a DeepCAM sample (16 channels and a label per pixel, 4 bytes each).
TEST(PreprocessingPaper, ThroughputIsTheHostDecodeRateWhereItBinds) {
  MachineProfile m = calibrated_builtin_profile("cori-gpu");
  m.io.host_decode_Bps = 1e6;
  const double sample_bytes = (16.0 + 1) * 768 * 1152 * 4;
  const double expected = 8 * m.io.host_decode_Bps / sample_bytes;
  for (int b : {1, 4}) {
    const NodeRun r{"deepcam", "cori-gpu", PaperDataset::small, b, Staging::none, {}};
    EXPECT_NEAR(node_samples_per_s(r, m) / expected, 1.0, 0.01) << "batch " << b;
  }
}

TEST(PreprocessingPaper, OnlyADeviceDecoderTakesAShareOfTheStep) {
  const auto& m = calibrated_builtin_profile("cori-gpu");  // it carries the paper's lut rates
  NodeRun r{"cosmoflow", "cori-gpu", PaperDataset::small, 4, Staging::none, {Codec::lut, DecoderPlace::host}};
  EXPECT_EQ(device_decode_share(r, m), 0.0);
  r.coding.decoder = DecoderPlace::device;
  const double share = device_decode_share(r, m);
  EXPECT_GT(share, 0.0);
  EXPECT_LT(share, 1.0);
}

TEST(PreprocessingPaper, ClaimsAreUniqueAndMostAreHeldOut) {
  std::set<std::string> ids;
  int held_out = 0;
  for (const auto& c : preprocessing_paper_claims()) {
    EXPECT_TRUE(ids.insert(c.id).second) << c.id;
    EXPECT_GT(c.stated, 0) << c.id;
    held_out += !c.fits;
  }
  EXPECT_GT(held_out, static_cast<int>(ids.size()) / 2);
}

// Each fit moves its parameter until its own claim's prediction is what the paper states (where
// reachable); the parameters settle together, so the earlier ones hold after the later fits.
TEST(PreprocessingPaper, CalibrationClaimsMeetWhatTheyState) {
  for (const auto& f : study().fits) EXPECT_TRUE(f.reachable) << f.claim << " " << f.fit.key;
  for (const auto& r : study().rows)
    if (r.claim.fits) {
      EXPECT_NEAR(r.rel_error, 0.0, 0.02) << r.claim.id;
    }
}

TEST(PreprocessingPaper, StatedInputsAndFitsAreRecordedInTheProfiles) {
  const auto& a100 = profile("cori-a100");
  EXPECT_NEAR(a100.io.host_to_device_efficiency, 7.0 / 24.7, 1e-12);
  EXPECT_EQ(a100.io.codecs.at("lut").ratio, 4);
  EXPECT_EQ(a100.io.codecs.at("deflate").ratio, 5);
  int fitted = 0;
  for (const auto& f : a100.fitted) fitted += f.source.starts_with("fitted: preprocessing paper");
  EXPECT_GE(fitted, 6);  // raw and deflate host, lut and diff device, diff host and ratio, the file system
  for (const auto& r : study().rows) EXPECT_TRUE(std::isfinite(r.predicted.value) && r.predicted.value > 0) << r.claim.id;
}

// The built-ins the paper ran on carry its codecs (stated ratios, fitted rates); the others none.
TEST(PreprocessingPaper, BuiltinProfilesOfItsMachinesPriceItsCodecs) {
  for (const auto& name : preprocessing_paper_machines()) {
    const auto& m = calibrated_builtin_profile(name);
    ASSERT_EQ(m.io.codecs.count("lut"), 1u) << name;
    EXPECT_EQ(m.io.codecs.at("lut").ratio, 4) << name;
    EXPECT_GT(m.io.codecs.at("lut").device_decode_Bps, 0) << name;
    EXPECT_GT(m.io.codecs.at("diff").host_decode_Bps, 0) << name;
    EXPECT_NE(codec_rates(m, Codec::diff, DecoderPlace::device), nullptr) << name;
  }
  EXPECT_TRUE(calibrated_builtin_profile("perlmutter").io.codecs.empty());
}
