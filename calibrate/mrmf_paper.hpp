#pragma once
// The MRMF paper as mrplan can read it (../shared/papers/mrmf-*: its abstract and figure captions;
// its tables are not available here): what it states, and mrplan's predictions beside it.
#include <string>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/record.hpp"

namespace mrplan {

// "Up to X% of the training time saved against dense training" for one application: the best of
// the runs it made (GPU counts x numbers of fusions) on one machine.
struct MrmfClaim {
  std::string app;      // built-in plan family: cosmoflow, neuron-inverter
  std::string workload; // the network it names
  std::string machine;
  double saving = 0;
  std::vector<int> gpus;
  std::vector<int> fusions;
  std::string source;
};
std::vector<MrmfClaim> mrmf_paper_claims();

// One of a claim's runs, predicted: dense training, MRT and MRMF at one GPU count.
struct MrmfRun {
  std::string app;
  int gpus = 0, fusions = 0;
  Record baseline, mrt, mrmf;
  double saving() const { return 1.0 - mrmf.totals.time_to_target_s / baseline.totals.time_to_target_s; }
};
// Every run of the claim on `machine`, with the workload's fusion efficiency set to `eta`.
std::vector<MrmfRun> predict_claim(const MrmfClaim& claim, const MachineProfile& machine, double eta);
double best_saving(const std::vector<MrmfRun>& runs);

// The fusion efficiency at which the best of the claim's runs saves what the paper states (the
// saving rises with it: bisection on [0, kMaxFusionEfficiency]); `reachable` is false when even
// the largest saves less (or 0 more).
inline constexpr double kMaxFusionEfficiency = 50;
struct FusionEfficiencyFit {
  double eta = 0;
  bool reachable = true;
};
FusionEfficiencyFit fit_fusion_efficiency(const MrmfClaim& claim, const MachineProfile& machine);

// The study: the fusion efficiency calibrated on one claim, every claim's runs predicted with it;
// once per claim calibrated on (the other held out).
struct MrmfStudyPart {
  std::string calibrated_on;  // the app whose claim fixed the efficiency
  FusionEfficiencyFit fit;
  std::vector<std::vector<MrmfRun>> runs;  // per claim, in mrmf_paper_claims() order
};
std::vector<MrmfStudyPart> mrmf_paper_study(const MachineProfile& machine);

}  // namespace mrplan
