#pragma once
// Learning curves, the MRT switch rule, and the transfer benefit of a coarse pre-training stage.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/machine_profile.hpp"

namespace mrplan {

// Value of the curve after `epochs` epochs (fractional epochs allowed).
double curve_value(const LearningCurve& c, double epochs);

// Where a monotone curve crosses `target` (fractional epochs); nullopt if it never does.
std::optional<double> crossing_epoch(const LearningCurve& c, double target);

// First whole epoch (1-based) at which the curve reaches `target` (<= when the curve falls,
// >= when it rises); nullopt if it never does within max_epochs.
std::optional<int> epochs_to_reach(const LearningCurve& c, double target, int max_epochs);

// MRT III-C: switch after epoch e when the minimum loss improved by less than epsilon over the
// last `patience` epochs: min(l_1..l_{e-T}) - min(l_1..l_e) < epsilon. Returns e (1-based).
struct SwitchRule {
  int patience = 5;
  double epsilon = 1e-3;
};
std::optional<int> switch_epoch(const std::vector<double>& loss_per_epoch, const SwitchRule& rule);

// The rule applied to a modelled training-loss curve sampled every `window_epochs` (1 for a
// per-epoch rule; iterations*batch/N for the paper's per-iteration DeepCAM rule), for a model that
// starts `start_epochs` along the curve (MRMF: trained on from a fused model); epochs it trains.
std::optional<double> predicted_switch_epoch(const LearningCurve& loss, const SwitchRule& rule,
                                             double window_epochs, double max_epochs, double start_epochs = 0);

// Fraction of the coarse model's attainable progress made after s epochs (0..1), counted in
// orders of magnitude of loss reduction, ln(L0/L(s)) / ln(L0/L_floor), when the floor is positive
// (else linearly). Late, small absolute gains still count: they are what Fig. 6b's optimum at
// the rule's switch point needs.
double coarse_progress(const LearningCurve& loss, double s);

// Dense epochs still needed after s coarse epochs (U-shape of MRT Fig. 6b/7b):
// E(s) = max(1, E0 (1 - eta k(s))) + omega max(0, s - s_over).
double dense_epochs_after_transfer(const ConvergenceParams& p, double baseline_dense_epochs, double s);
// The same with the coarse progress k = coarse_progress(p.coarse_loss, s) already known.
double dense_epochs_after_transfer(const ConvergenceParams& p, double baseline_dense_epochs, double s, double k);

// MRMF: a model's progress towards what training at its resolution gives, 0..1, after `epochs`: a
// coarse model's by the coarse loss curve (coarse_progress; one curve stands for every coarse
// resolution), the dense model's as its share of the baseline's epochs to target `e0`.
double resolution_progress(const ConvergenceParams& p, int resolution, double e0, double epochs);
// The epochs at `resolution` that give `progress` (resolution_progress's inverse).
double epochs_for_progress(const ConvergenceParams& p, int resolution, double e0, double progress);
// The progress after training `epochs` more, for a model that started from progress k0.
double progress_after(const ConvergenceParams& p, int resolution, double e0, double k0, double epochs);
// MRMF: the fused model's progress (mrplan's model): its bottom layer group carries the bottom
// parent's progress over as MRT's transfer does (transfer_efficiency x bottom), its trained top group
// adds fusion_efficiency x the top parent's; within [-1, 1] (below 0 the fusion set it back). A top
// parent that trained nothing leaves MRT's transfer.
double fused_progress(const ConvergenceParams& p, double bottom, double top);
// Transfer learning: the progress a pretrained model starts fine-tuning from. Unmeasured, MRT's
// transfer efficiency stands in: a coarse model is a model of related data, and one trained to its
// end (progress 1) carries transfer_efficiency of the dense model's way (MRT III-C's transfer).
double pretrained_start(const ConvergenceParams& p);
bool pretrained_measured(const ConvergenceParams& p);
// Dense epochs still needed from a model with progress k: max(1, e0 (1 - k)), as after a transfer.
double dense_epochs_after_progress(double e0, double k);

// Batch-size dependence of epochs to target (McCandlish et al. 2018, gradient noise scale), times
// the runs' fitted factor and the batch's tuning: the measured one where the system's runs trained
// at that global batch, else the draw's (ConvergenceParams::epoch_factor, tuned_factor, tuning_draw).
// Not the seed's draw: it depends on how long a run is (seeded_epochs).
// `recipe`: the plan's (ModelRun::recipe): a tuning holds where it was measured with that recipe at the
// batch, else the system's own runs' there; a plan that states none, where its system has no runs at
// the batch, takes the one recipe measured there.
double epoch_scale_for_batch(const ConvergenceParams& p, double global_batch, const std::string& recipe = "");

// The seed's factor on a run of `epochs` (without it): seed_epoch_factor is drawn at seed_epochs_ref,
// and its deviation shrinks as the square root of the epochs past it (1 + (f - 1) sqrt(ref / epochs)).
double seed_factor_at(const ConvergenceParams& p, double epochs);
// A run's epochs with the seed's draw applied (epochs * seed_factor_at(epochs)), and its inverse:
// the epochs on the curves (unseeded) of a run that took `epochs`.
double seeded_epochs(const ConvergenceParams& p, double epochs);
double unseeded_epochs(const ConvergenceParams& p, double epochs);

// The tuning a plan's epochs take at a global batch (epoch_scale_for_batch's rule), and where it was
// measured; none: a batch and recipe without runs, drawn (tuning_draw).
struct MeasuredTuning {
  TuningSlot slot;
  double factor = 1;
};
std::optional<MeasuredTuning> measured_tuning(const ConvergenceParams& p, int global_batch, const std::string& recipe);

// A recipe's id in a profile: 8 hex digits of its text's 64-bit FNV-1a hash (Fowler, Noll & Vo),
// stable across platforms; empty for an empty recipe.
std::string recipe_id(const std::string& recipe);
// "2048", or "2048/1a2b3c4d" with a recipe: the profile's key for a tuning (convergence.W.tuned_factor.SLOT)
std::string to_string(const TuningSlot& s);
std::optional<TuningSlot> tuning_slot_from_string(std::string_view text);

}  // namespace mrplan
