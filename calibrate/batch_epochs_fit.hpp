#pragma once
// `calibrate records`, epochs to target: how many epochs a workload needs at a global batch, from
// measured baseline runs that reached their target, E(B) = f · E_curve · (1 + B/B_crit) /
// (1 + B_ref/B_crit) (McCandlish et al. 2018, "An Empirical Model of Large-Batch Training", eq. 2.11
// in epochs): model/learning_curve's epoch_scale_for_batch. A population curve (f, B_crit) for every
// run given; per system (the code its runs ran where their plans name the ML framework, else their
// machine; the fitted records' own with their code's other machines) a persistent effect on log f,
// and per global batch and recipe a tuning effect (the MLPerf HPC rules let a submission retune at
// its batch: a deviation that does not carry to another batch; runs that state one recipe share it
// across systems, runs that state none are their own system's), their spreads measured by moments,
// the tunings' on the systems that ran two batches, a seed's at the runs' median epochs and as
// 1/sqrt of a run's (docs/cost-models.md, "Epochs to target across systems"). A system with runs is predicted from its own factor, at its runs' batches with
// their tunings too, and at a recipe's batch with that recipe's; a new system from the population's
// with the between-system spread in its band; a batch and recipe without runs draws its tuning.
#include <map>
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

// One system's effect on the population curve: its runs, and where its posterior puts it.
struct SystemEpochs {
  std::string name;                   // "(fitted)": the records being fitted (and their code's); a code; a machine
  std::vector<std::string> machines;  // a code's machines; with "(fitted)", the other machines of its code
  int runs = 0, batches = 0;
  double factor = 1;    // exp(u): its epochs over the population's at the same batch, at any batch
  std::map<TuningSlot, double> tuning;  // exp(v) by global batch (and recipe): its runs there over its factor's
  double shrinkage = 0; // how far its factor is pulled to the population's: tau^-2 / (precision of its mean + tau^-2)
};

struct BatchEpochsFit {
  std::string workload;
  // convergence.W.epoch_factor, .critical_batch where pinned, .seed_epochs_cv where the runs outnumber those
  std::vector<FittedParameter> fitted;
  std::vector<std::string> at_prior;    // what the records cannot pin, with the reason
  std::vector<EpochsObservation> observations;
  std::vector<std::string> skipped;     // records that give no epochs to target, with the reason
  std::vector<std::string> notes;       // what the user could give to fit more closely
  // the population and the spreads in log space: seeds (within a system and batch, at seed_ref epochs), systems' factors, a batch's tuning
  double population_factor = 0, population_critical = 0, seed_sd = 0, system_sd = 0, tuning_sd = 0, seed_ref = 0;
  std::vector<SystemEpochs> systems;  // empty: one system, no effects
  std::map<std::string, std::string> recipes;  // the runs' recipes by id (model/learning_curve recipe_id)
};

// `own`: the records `calibrate records` fits; `others`: records of the same workload from other
// machines (public results). All runs that reached their target fit epoch_factor, and the critical
// batch where they span two or more global batches. One fit per workload of `own` that the profile
// has convergence parameters for; `profile` gets the fitted values, recorded through the registry
// with the records as their source.
std::vector<BatchEpochsFit> fit_batch_epochs(MachineProfile& profile, const std::vector<NamedRecord>& own,
                                             const std::vector<NamedRecord>& others);

}  // namespace mrplan
