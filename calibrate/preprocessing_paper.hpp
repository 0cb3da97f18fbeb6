#pragma once
// The preprocessing paper (../shared/papers/preprocessing-pipeline-optimization.md) as mrplan can
// read it: its figures' values are not available here, only what its text and captions state, each
// a ratio of two nodes' training throughputs (or the decoder's share of a sample's time) over the
// runs it spans. mrplan predicts every one; a few fix the parameters the paper does not give.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/codec.hpp"
#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

enum class PaperDataset { small, large };  // section IX: CosmoFlow 128 / 2048 samples per GPU, DeepCAM 1536 / 12288 per node

// How samples reach the network: the baseline (raw, host preprocessing), HDF5 deflate (gzip),
// or the paper's plugin (lut for CosmoFlow, diff for DeepCAM) decoded on the host or the GPU.
struct Coding {
  Codec codec = Codec::raw;
  DecoderPlace decoder = DecoderPlace::host;
};

// One node's training as the paper ran it (MLPerf HPC's CosmoFlow and DeepCAM, mixed precision).
struct NodeRun {
  std::string app;      // cosmoflow | deepcam
  std::string machine;  // summit | cori-gpu | cori-a100
  PaperDataset dataset = PaperDataset::small;
  int local_batch = 1;
  Staging staging = Staging::none;  // nvme: "staged"; none: "unstaged", streamed from the file system
  Coding coding;
};
int samples_per_node(const NodeRun& r, const MachineProfile& m);
// The node's samples per second over the paper's epochs (CosmoFlow: 100 small, 15 large; DeepCAM
// states none: the later epochs), the staging phase before them not counted.
double node_samples_per_s(const NodeRun& r, const MachineProfile& m);
// The device decoder's share of a sample's time: what training loses to it, over its whole time.
double device_decode_share(const NodeRun& r, const MachineProfile& m);

// What a claim's run changes on one side of its ratio (unset: the grid point's).
struct ClaimSide {
  std::optional<Coding> coding;
  std::optional<std::string> machine;
  std::optional<PaperDataset> dataset;
  std::optional<Staging> staging;
  std::optional<int> local_batch;
};
// The run with `side`'s changes.
NodeRun apply_side(NodeRun r, const ClaimSide& side);
enum class ClaimQuantity { speedup, decode_share };  // speedup: throughput(numerator) / throughput(denominator)
enum class ClaimBound { up_to, at_least, about };    // compared with the grid's largest, smallest, farthest
// A parameter a calibration claim fixes, on the machines it names (one value for all of them).
struct ClaimFit {
  std::string key;  // profile key, e.g. io.host_decode_GBps, io.codecs.lut.device_decode_GBps
  std::vector<std::string> machines;
  double lower = 0, upper = 0;  // the key's unit; searched in log space
  bool per_memory_bandwidth = false;  // device decode rates: the value is a fraction of each GPU's memory bandwidth
};
// Whether the value is the claim's application's alone (the raw host preprocessing rate) or every
// application's on those machines.
bool fit_is_per_application(const ClaimFit& f);
struct PaperClaim {
  std::string id, statement, source;
  std::string app;
  // the grid the claim spans
  std::vector<std::string> machines;
  std::vector<PaperDataset> datasets;
  std::vector<int> batches;
  std::vector<Staging> stagings;
  std::vector<Coding> codings;
  ClaimSide numerator, denominator;
  ClaimQuantity quantity = ClaimQuantity::speedup;
  ClaimBound bound = ClaimBound::up_to;
  double stated = 0;
  std::optional<ClaimFit> fits;  // set: a calibration claim
};
std::vector<PaperClaim> preprocessing_paper_claims();
const std::vector<std::string>& preprocessing_paper_machines();  // summit, cori-gpu, cori-a100 (section VII)

// What the paper states as measured, put into the profiles as given (not fitted): pageable
// host-to-device bandwidth and the codecs' ratios and output precision.
struct StatedInput {
  std::string key;
  std::vector<std::string> machines;
  double value = 0;
  std::string source;
};
std::vector<StatedInput> preprocessing_paper_inputs();

// The claim's value over its grid, and the grid point that gives it.
struct ClaimPrediction {
  double value = 0;
  NodeRun at;
};
// `profiles`: the claim's application's.
ClaimPrediction predict_claim(const PaperClaim& c, const std::vector<MachineProfile>& profiles);

struct FittedValue {
  std::string claim, app;  // the calibration claim and its application
  ClaimFit fit;            // the key it fixed, on which machines
  double value = 0;        // the key's unit (per_memory_bandwidth: the fraction)
  bool reachable = true; // false: the stated value is out of the search range, more than 1% past its nearest end
};
struct PreprocessingStudy {
  // the paper's machines per application: calibrated built-ins, stated inputs, fits (the raw host
  // preprocessing rate is each application's own, the rest is shared)
  std::map<std::string, std::vector<MachineProfile>> profiles;
  std::vector<FittedValue> fits;
  struct Row {
    PaperClaim claim;
    ClaimPrediction predicted;
    double rel_error = 0;  // predicted / stated - 1
  };
  std::vector<Row> rows;
};
// `base`: a built-in machine's profile before the study (calibrated_builtin_profile without the
// codec rates this study gives it).
PreprocessingStudy preprocessing_paper_study(const std::function<MachineProfile(const std::string&)>& base);
PreprocessingStudy preprocessing_paper_study();  // from calibrated_builtin_profile

// The codecs' rates the study gives `m`'s machine (stated and fitted, with their provenance);
// nothing for a machine the paper did not run on.
void take_codec_fits(const PreprocessingStudy& s, MachineProfile& m);

}  // namespace mrplan
