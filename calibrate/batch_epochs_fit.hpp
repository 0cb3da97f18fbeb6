#pragma once
// `calibrate records`, epochs to target: how many epochs a workload needs at a global batch, from
// measured baseline runs that reached their target, E(B) = f · E_curve · (1 + B/B_crit) /
// (1 + B_ref/B_crit) (McCandlish et al. 2018, "An Empirical Model of Large-Batch Training", eq. 2.11
// in epochs): model/learning_curve's epoch_scale_for_batch. One factor and one critical batch for
// every run given, whatever its machine: the MLPerf HPC rules let each submission retune its
// hyper-parameters at its batch, so a run's epochs say what the workload needs at that batch, not
// what one machine's runs need at every batch (docs/validation/mlperf-scaling.md).
#include <string>
#include <vector>

#include "calibrate/validation.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

struct EpochsObservation {
  std::string record, machine;  // machine: the record's, or "(fitted)" for the fitted records
  int global_batch = 0;
  double measured = 0, fitted = 0;  // epochs to target
};

struct BatchEpochsFit {
  std::string workload;
  // convergence.W.epoch_factor, .critical_batch where pinned, .seed_epochs_cv where the runs outnumber those
  std::vector<FittedParameter> fitted;
  std::vector<std::string> at_prior;    // what the records cannot pin, with the reason
  std::vector<EpochsObservation> observations;
  std::vector<std::string> skipped;     // records that give no epochs to target, with the reason
};

// `own`: the records `calibrate records` fits; `others`: records of the same workload from other
// machines (public results). All runs that reached their target fit epoch_factor, and the critical
// batch where they span two or more global batches. One fit per workload of `own` that the profile
// has convergence parameters for; `profile` gets the fitted values, recorded through the registry
// with the records as their source.
std::vector<BatchEpochsFit> fit_batch_epochs(MachineProfile& profile, const std::vector<NamedRecord>& own,
                                             const std::vector<NamedRecord>& others);

}  // namespace mrplan
