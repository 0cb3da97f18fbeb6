#include "calibrate/batch_epochs_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <iterator>
#include <cmath>
#include <limits>
#include <set>

#include "model/error_summary.hpp"
#include "model/errors.hpp"
#include "model/learning_curve.hpp"
#include "model/least_squares.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_parameters.hpp"

namespace mrplan {

namespace {

// One run that reached its target: its global batch, epochs, and where the profile's dense curve
// crosses the run's target (its epochs at the reference batch, factor 1).
struct Run {
  const NamedRecord* named = nullptr;
  std::string machine;  // "(fitted)" for the fitted records
  size_t system = 0, cell = 0, group = 0;  // indices into Problem::systems, cells, groups
  int batch = 0;
  double epochs = 0, curve_epochs = 0;
};

// Why a record gives no epochs to target at one global batch; empty when it does.
std::string unusable(const Record& r) {
  if (r.source != Source::measured) return "a prediction, not a measurement";
  if (r.stages.size() != 1 || r.stages[0].models.size() != 1 || r.stages[0].models[0].resolution != 1)
    return "not a baseline run (one dense stage)";
  if (!r.totals.reached_target) return "did not reach its target";
  if (r.stages[0].models[0].epochs < 1) return "reached its target in less than an epoch";
  return "";
}

// A system's slot in the parameter vector (-1: none): its persistent effect on log f. A system is the
// code its runs ran where their plans name its ML framework (the workload on the framework; the
// allreduce library does not change what a step computes), else their machine: the epochs are set by
// the code's data pipeline, initialisation and optimizer, not by the GPU, so machines that ran one
// code (NVIDIA's DeepCAM on DGX A100, Eos and Perlmutter) share one effect, the fitted records' with
// the other machines of their code.
struct System {
  std::string name;                   // "(fitted)", a code, or a machine
  std::vector<std::string> machines;  // whose runs it holds
  std::vector<size_t> groups;
  int runs = 0;
  Eigen::Index u = -1;
};

// The code a record ran where its plan names its ML framework (the software key), else empty.
std::string named_code(const NamedRecord& n) {
  if (n.record.plan_spec.empty()) return "";
  const Plan plan = plan_from_yaml_text(n.record.plan_spec, n.file);
  return plan.software.empty() ? "" : fmt::format("{} on {}", n.record.workload, plan.software);
}

// The code the fitted records share (empty: none, or they name no framework).
std::string shared_code(const std::vector<NamedRecord>& own) {
  std::string code;
  for (size_t i = 0; i < own.size(); ++i) {
    const std::string c = named_code(own[i]);
    if (c.empty() || (i > 0 && c != code)) return "";
    code = c;
  }
  return code;
}

// A tuning: an effect on log f that does not carry to another batch. Runs that state their recipe
// share it with every system that ran that recipe at that batch (the hyper-parameters, not the
// machine, set the epochs); runs that state none, with their own system's runs at the batch alone.
struct Cell {
  int batch = 0;
  std::string recipe;
  size_t system = 0;  // the system whose runs state no recipe
  std::vector<std::string> machines;  // the machines that ran it
  Eigen::Index v = -1;
  TuningSlot slot() const { return {batch, recipe_id(recipe)}; }
};

// One system's runs in one cell: a seed's spread is measured within it, a batch's tuning across a system's.
struct Group {
  size_t system = 0, cell = 0;
  int runs = 0;
  bool own = false;  // the fitted records' runs are among them
  double epochs = 0; // its runs' mean crossing (epochs less half an epoch): where its seeds' spread is read
};

// The spreads' floors (log space): integer epochs alone spread a run by a few percent, and a spread
// estimated at 0 from three systems would let one system's effect stand unshrunk.
constexpr double kMinSeedSd = 0.03, kMinSystemSd = 0.02, kMinTuningSd = 0.02;
// Two passes left a synthetic population's batch trend half in the tunings (a spread of 3.6% where
// the runs had none); the moments settle within a few.
constexpr int kMaxSpreadPasses = 20;

struct Problem {
  ConvergenceParams base;
  std::vector<Run> runs;
  std::vector<System> systems;  // [0]: the fitted records' own (perhaps without runs), with their code's
  std::string own_code;         // the code the fitted records name, whose other machines' runs share their effect
  bool others_name_codes = false;  // some other machine's runs name their code
  std::vector<Cell> cells;
  std::vector<Group> groups;
  bool fit_critical = false;    // the runs span two or more global batches
  bool effects = false;         // two or more systems have runs: per-system and per-batch effects
  // seeds within a cell, systems' persistent factors, a system's tuning at a batch (0: not measured,
  // no system ran two batches: a system's deviation persists)
  double seed_sd = 0.1, system_sd = 0.3, tuning_sd = 0;
  // the epochs seed_sd holds at (the runs' median crossing): a group's seeds spread as sqrt(seed_ref / its epochs)
  double seed_ref = 0;
  std::string tuning_from;  // what a batch's tuning spread was measured on, in words
  double tuning_dof = 0;
  Eigen::Index size = 0;  // theta: [log B_crit,] log f, then the systems' u, then the cells' v

  Eigen::Index factor_index() const { return fit_critical ? 1 : 0; }
  // a seed's variance (log space) in group g, seed_sd's at the reference epochs times its scale: a
  // run's spread in epochs grows as their square root, so its relative spread falls as 1/sqrt
  double seed_scale(size_t g) const { return seed_ref / groups[g].epochs; }
  double seed_var(size_t g) const { return seed_sd * seed_sd * seed_scale(g); }
  double effect(const Eigen::VectorXd& t, const Run& r) const {
    const auto u = systems[r.system].u, v = cells[r.cell].v;
    return (u >= 0 ? t[u] : 0) + (v >= 0 ? t[v] : 0);
  }
  // the crossing epoch the simulator predicts for a run (it stops at the next whole epoch), on the
  // population curve, and with the run's system and cell
  double population(const Eigen::VectorXd& t, const Run& r) const {
    ConvergenceParams q = base;
    q.tuning_draw = 1, q.tuned_factor.clear();
    if (fit_critical) q.critical_batch = std::exp(t[0]);
    q.epoch_factor = std::exp(t[factor_index()]);
    return r.curve_epochs * epoch_scale_for_batch(q, r.batch);
  }
  double predicted(const Eigen::VectorXd& t, const Run& r) const { return population(t, r) * std::exp(effect(t, r)); }
  // a run stops at the first whole epoch past the crossing: on average half an epoch after it. Each
  // residual in units of its spread; the effects' priors as residuals of their own (MAP). Without a
  // measured tuning spread the cells' effects are held at 0.
  Eigen::VectorXd residuals(const Eigen::VectorXd& t) const {
    Eigen::VectorXd out(static_cast<Eigen::Index>(runs.size()) + size - factor_index() - 1);
    Eigen::Index k = 0;
    for (const auto& r : runs) out[k++] = (std::log(predicted(t, r)) - std::log(r.epochs - 0.5)) / std::sqrt(seed_var(r.group));
    for (const auto& s : systems)
      if (s.u >= 0) out[k++] = t[s.u] / system_sd;
    for (const auto& c : cells)
      if (c.v >= 0) out[k++] = t[c.v] / (tuning_sd > 0 ? tuning_sd : 1e-4);
    return out;
  }
};

// Start: the profile's critical batch (else the runs' median batch), the factor from the runs.
Eigen::VectorXd start_of(const Problem& pb) {
  std::vector<double> batches;
  for (const auto& r : pb.runs) batches.push_back(r.batch);
  const double critical = pb.base.critical_batch > 0 ? pb.base.critical_batch : median(batches);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(pb.size);
  if (pb.fit_critical) theta[0] = std::log(critical);
  std::vector<double> ratio;
  for (const auto& r : pb.runs) ratio.push_back((r.epochs - 0.5) / pb.predicted(theta, r));
  theta[pb.factor_index()] = std::log(median(ratio));
  return theta;
}

// The workload's runs, the profile's own first (system 0), the others by machine, and what was skipped.
Problem gather(const ConvergenceParams& cv, const std::string& workload, const std::vector<NamedRecord>& own,
               const std::vector<NamedRecord>& others, BatchEpochsFit& fit) {
  Problem pb;
  pb.base = cv, pb.systems = {{"(fitted)", {}, {}, 0}};
  pb.own_code = shared_code(own);
  auto add = [&](const NamedRecord& n, const std::string& machine, const std::string& system_name) {
    if (n.record.workload != workload) return;
    if (const auto why = unusable(n.record); !why.empty()) return fit.skipped.push_back(fmt::format("{}: {}", n.file, why));
    const auto crossing = crossing_epoch(cv.dense_metric, n.record.target_value);
    if (!crossing || *crossing <= 0)
      return fit.skipped.push_back(fmt::format("{}: the profile's dense curve for {} never reaches its target {}", n.file, workload,
                                               n.record.target_value));
    auto at = std::find_if(pb.systems.begin(), pb.systems.end(), [&](const System& s) { return s.name == system_name; });
    if (at == pb.systems.end()) at = pb.systems.insert(pb.systems.end(), System{system_name, {}, {}, 0});
    if (std::find(at->machines.begin(), at->machines.end(), machine) == at->machines.end()) at->machines.push_back(machine);
    const size_t system = static_cast<size_t>(at - pb.systems.begin());
    const auto& s = n.record.stages[0];
    const std::string& recipe = s.models[0].recipe;
    auto cell = std::find_if(pb.cells.begin(), pb.cells.end(), [&](const Cell& c) {
      return c.batch == s.global_batch && c.recipe == recipe && (!recipe.empty() || c.system == system);
    });
    if (cell == pb.cells.end()) cell = pb.cells.insert(pb.cells.end(), Cell{s.global_batch, recipe, system, {}, -1});
    const size_t c = static_cast<size_t>(cell - pb.cells.begin());
    if (std::find(cell->machines.begin(), cell->machines.end(), machine) == cell->machines.end()) cell->machines.push_back(machine);
    auto group = std::find_if(at->groups.begin(), at->groups.end(), [&](size_t g) { return pb.groups[g].cell == c; });
    if (group == at->groups.end()) pb.groups.push_back({system, c, 0}), group = at->groups.insert(at->groups.end(), pb.groups.size() - 1);
    ++at->runs, ++pb.groups[*group].runs;
    pb.groups[*group].own = pb.groups[*group].own || machine == "(fitted)";
    pb.runs.push_back({&n, machine, system, c, *group, s.global_batch, s.models[0].epochs, *crossing});
  };
  for (const auto& n : own) add(n, "(fitted)", "(fitted)");
  for (const auto& n : others) {
    if (std::any_of(own.begin(), own.end(), [&](const NamedRecord& o) { return o.file == n.file; })) continue;  // given twice
    const std::string code = named_code(n);
    pb.others_name_codes = pb.others_name_codes || !code.empty();
    add(n, n.record.machine, code.empty() ? n.record.machine : code == pb.own_code ? "(fitted)" : code);
  }
  std::set<int> batches;
  std::vector<double> crossings;
  for (const auto& r : pb.runs) {
    batches.insert(r.batch), crossings.push_back(r.epochs - 0.5);
    pb.groups[r.group].epochs += (r.epochs - 0.5) / pb.groups[r.group].runs;
  }
  if (!crossings.empty()) pb.seed_ref = median(crossings);
  pb.fit_critical = batches.size() > 1;
  pb.effects = std::count_if(pb.systems.begin(), pb.systems.end(), [](const System& s) { return s.runs > 0; }) >= 2;
  pb.size = pb.fit_critical ? 2 : 1;
  if (!pb.effects) return pb;
  for (auto& s : pb.systems)
    if (s.runs > 0) s.u = pb.size++;
  for (auto& c : pb.cells) c.v = pb.size++;  // one batch cannot tell u from v: their spreads split its deviation
  return pb;
}

// Each run's log residual about the population curve (measured over predicted), and their means per group.
struct GroupResiduals {
  std::vector<double> run, group;
};

GroupResiduals residuals_about(const Problem& pb, const Eigen::VectorXd& t) {
  GroupResiduals out{{}, std::vector<double>(pb.groups.size(), 0.0)};
  for (const auto& r : pb.runs) {
    out.run.push_back(std::log(r.epochs - 0.5) - std::log(pb.population(t, r)));
    out.group[r.group] += out.run.back() / pb.groups[r.group].runs;
  }
  return out;
}

// Without recipes shared by systems (a nested design): a batch's tuning from the groups about their
// system's mean, on the systems that ran two or more, less what the seeds give a group of n runs
// (sigma^2 / n); the systems' persistent spread from their means' variance, less what the tunings and
// seeds give a mean.
void nested_spreads(Problem& pb, const GroupResiduals& r) {
  double tuning_ss = 0, tuning_dof = 0;
  std::vector<double> means, noise;  // per system with runs: its groups' mean, and what the seeds put in it
  std::vector<std::string> from;
  for (const auto& s : pb.systems) {
    if (s.runs == 0) continue;
    const double k = static_cast<double>(s.groups.size());
    double mean = 0, seeds = 0;
    for (size_t g : s.groups) mean += r.group[g] / k, seeds += pb.seed_var(g) / pb.groups[g].runs;
    means.push_back(mean), noise.push_back(seeds / (k * k));
    if (s.groups.size() < 2) continue;
    for (size_t g : s.groups) tuning_ss += std::pow(r.group[g] - mean, 2);
    tuning_ss -= (k - 1) / k * seeds, tuning_dof += k - 1;
    from.push_back(s.name == "(fitted)" ? "the fitted records" : s.name);
  }
  pb.tuning_sd = tuning_dof > 0 ? std::max(kMinTuningSd, std::sqrt(std::max(0.0, tuning_ss / tuning_dof))) : 0.0;
  pb.tuning_dof = static_cast<double>(from.size());
  pb.tuning_from = fmt::format("the tunings of the systems that ran two or more global batches ({})", fmt::join(from, ", "));
  const double m = static_cast<double>(means.size());
  double mean = 0, ss = 0, expected = 0;
  for (double x : means) mean += x / m;
  for (size_t i = 0; i < means.size(); ++i) ss += std::pow(means[i] - mean, 2), expected += noise[i] / m;
  for (const auto& s : pb.systems)
    if (s.runs > 0) expected += pb.tuning_sd * pb.tuning_sd / static_cast<double>(s.groups.size()) / m;
  pb.system_sd = std::max(kMinSystemSd, std::sqrt(std::max(0.0, ss / (m - 1) - expected)));
}

// Recipes that two or more systems ran separate the two effects (a crossed design): the systems'
// spread from the groups about their recipe's mean, less what the seeds give a group; a batch's
// tuning from the recipes' means about the population curve, less what the systems and seeds give a
// mean, over the cells less the curve's parameters. A recipe one system alone ran cannot tell its
// tuning from that system's factor, and the systems that share recipes say how far systems differ.
void crossed_spreads(Problem& pb, const GroupResiduals& r) {
  const size_t n = pb.cells.size();
  std::vector<double> mean(n, 0.0), seeds(n, 0.0), k(n, 0.0);
  for (const auto& g : pb.groups) k[g.cell] += 1;
  for (size_t i = 0; i < pb.groups.size(); ++i) {
    const auto& g = pb.groups[i];
    mean[g.cell] += r.group[i] / k[g.cell], seeds[g.cell] += pb.seed_var(i) / g.runs;
  }
  double ss = 0, dof = 0;
  for (size_t i = 0; i < pb.groups.size(); ++i) {
    const auto& g = pb.groups[i];
    if (k[g.cell] >= 2) ss += std::pow(r.group[i] - mean[g.cell], 2) - (1 - 1 / k[g.cell]) * pb.seed_var(i) / g.runs;
  }
  for (size_t c = 0; c < n; ++c) dof += std::max(0.0, k[c] - 1);
  pb.system_sd = std::max(kMinSystemSd, std::sqrt(std::max(0.0, ss / dof)));
  double tuning_ss = 0;
  for (size_t c = 0; c < n; ++c) tuning_ss += mean[c] * mean[c] - pb.system_sd * pb.system_sd / k[c] - seeds[c] / (k[c] * k[c]);
  pb.tuning_dof = static_cast<double>(n) - static_cast<double>(pb.factor_index() + 1);
  pb.tuning_sd = pb.tuning_dof >= 1 ? std::max(kMinTuningSd, std::sqrt(std::max(0.0, tuning_ss / pb.tuning_dof))) : 0.0;
  pb.tuning_from = fmt::format("the {} recipes and batches the runs trained at, about the population curve (systems sharing a recipe "
                               "give the systems' spread)", n);
}

// The three spreads by moments about the population curve `t` (analysis of variance; Searle, Casella
// & McCulloch 1992, "Variance Components", ch. 3), each system's runs in a cell a group: a seed's from
// the runs about their group's mean; the systems' and a batch's tuning, crossed where systems share
// a recipe, else nested.
void spreads_by_moments(Problem& pb, const Eigen::VectorXd& t) {
  const auto r = residuals_about(pb, t);
  double within = 0;
  for (size_t i = 0; i < pb.runs.size(); ++i) {  // each deviation scaled to the reference epochs
    const size_t g = pb.runs[i].group;
    within += std::pow(r.run[i] - r.group[g], 2) / pb.seed_scale(g);
  }
  const double dof = static_cast<double>(pb.runs.size() - pb.groups.size());
  if (dof >= 1) pb.seed_sd = std::max(kMinSeedSd, std::sqrt(within / dof));
  if (!pb.effects) return;
  std::vector<int> systems_in(pb.cells.size(), 0);
  for (const auto& g : pb.groups) ++systems_in[g.cell];
  const bool shared = std::any_of(systems_in.begin(), systems_in.end(), [](int k) { return k >= 2; });
  if (shared) crossed_spreads(pb, r);
  else nested_spreads(pb, r);
}

// The population curve through every run first (no effects), the spreads about it, the MAP fit
// with them; then the spreads again about that fit's population curve and the fit again, until they settle.
FitResult fit_with_spreads(Problem& pb) {
  auto solve = [](const Problem& q, const Eigen::VectorXd& start) {
    return levenberg_marquardt([&](const Eigen::VectorXd& t) { return q.residuals(t); }, start,
                               Eigen::VectorXd::Zero(q.residuals(start).size()), 200);
  };
  if (!pb.effects) {
    FitResult f = solve(pb, start_of(pb));
    spreads_by_moments(pb, f.params);
    return f;
  }
  // the population alone: the same runs without effects
  Problem alone = pb;
  alone.effects = false, alone.size = pb.factor_index() + 1;
  for (auto& s : alone.systems) s.u = -1;
  for (auto& c : alone.cells) c.v = -1;
  const FitResult first = solve(alone, start_of(alone));
  FitResult f;
  f.params = Eigen::VectorXd::Zero(pb.size);
  f.params.head(alone.size) = first.params;
  // until the spreads settle: each pass's MAP moves the population the next pass's moments are read about
  auto settled = [](double a, double b) { return std::abs(a - b) <= 1e-3 * std::max(a, b); };
  for (int pass = 0; pass < kMaxSpreadPasses; ++pass) {
    const double seed = pb.seed_sd, system = pb.system_sd, tuning = pb.tuning_sd;
    spreads_by_moments(pb, f.params);
    f = solve(pb, f.params);
    if (pass > 0 && settled(seed, pb.seed_sd) && settled(system, pb.system_sd) && settled(tuning, pb.tuning_sd)) break;
  }
  return f;
}

void describe_systems(const Problem& pb, const FitResult& f, BatchEpochsFit& fit) {
  fit.population_factor = std::exp(f.params[pb.factor_index()]);
  fit.population_critical = pb.fit_critical ? std::exp(f.params[0]) : pb.base.critical_batch;
  fit.seed_sd = pb.seed_sd, fit.seed_ref = pb.seed_ref, fit.system_sd = pb.effects ? pb.system_sd : 0, fit.tuning_sd = pb.effects ? pb.tuning_sd : 0;
  if (!pb.effects) return;
  for (const auto& s : pb.systems) {
    // what the seeds and the batches' tunings leave of the system's mean, against the systems' spread
    const double k = std::max<double>(1, static_cast<double>(s.groups.size()));
    double seeds = 0;  // the seeds' variance in the mean of its runs
    for (size_t g : s.groups) seeds += pb.seed_var(g) * pb.groups[g].runs / std::pow(std::max(1, s.runs), 2);
    const double noise = pb.tuning_sd * pb.tuning_sd / k + seeds;
    const double prior = 1 / (pb.system_sd * pb.system_sd), own = s.runs > 0 ? 1 / noise : 0;
    std::vector<std::string> machines;  // the other machines of the fitted records' code, or of a code
    std::copy_if(s.machines.begin(), s.machines.end(), std::back_inserter(machines),
                 [&](const auto& m) { return m != "(fitted)" && m != s.name; });
    SystemEpochs out{s.name, machines, s.runs, static_cast<int>(s.groups.size()), s.u >= 0 ? std::exp(f.params[s.u]) : 1.0, {},
                     prior / (own + prior)};
    if (pb.tuning_sd > 0)
      for (size_t g : s.groups) out.tuning[pb.cells[pb.groups[g].cell].slot()] = std::exp(f.params[pb.cells[pb.groups[g].cell].v]);
    fit.systems.push_back(out);
  }
  for (const auto& c : pb.cells)
    if (!c.recipe.empty()) fit.recipes[recipe_id(c.recipe)] = c.recipe;
}

// The tunings the fitted profile keeps, with their slots: its own runs' at their batch alone (what a
// plan at that batch takes unless it states another measured recipe; one per batch, the first), and
// every other recipe's at its batch (a plan of that recipe takes it on any system).
std::vector<std::pair<size_t, TuningSlot>> kept_cells(const Problem& pb) {
  std::vector<std::pair<size_t, TuningSlot>> out;
  for (size_t c = 0; c < pb.cells.size(); ++c) {
    const Cell& cell = pb.cells[c];
    const bool own = std::any_of(pb.groups.begin(), pb.groups.end(), [&](const Group& g) { return g.own && g.cell == c; });
    const bool batch_taken = std::any_of(out.begin(), out.end(), [&](const auto& k) { return k.second == TuningSlot{cell.batch, ""}; });
    if (own && !batch_taken) out.push_back({c, {cell.batch, ""}});
    else if (!cell.recipe.empty()) out.push_back({c, cell.slot()});
  }
  return out;
}

// The posterior covariance of the log parameters: with effects the residuals are whitened by their
// spreads, so it is (J'J)^-1 and the fit's rss/dof scaling is taken back out; one curve keeps the
// fit's own. Infinite on the diagonal: the runs do not pin it.
Eigen::MatrixXd log_covariance(const Problem& pb, const FitResult& f) {
  if (!pb.effects) return f.covariance;
  const auto m = static_cast<double>(pb.residuals(f.params).size()), p = static_cast<double>(pb.size);
  return f.covariance / (m > p ? f.rss / (m - p) : 1.0);
}

// The fitted system's own curve: [critical batch (the population's),] epoch factor (the population's
// and its persistent effect, a sum of log parameters), and its tuning at each batch its runs trained
// at; their covariance is a' C b over those slots (a system without runs adds the between-system
// spread). Then the seed spread within a cell, and the spread of a batch's tuning that a batch
// without runs is drawn from: the effects' uncertainty is drawn with the parameters, not folded into the seeds.
struct OwnCurve {
  std::vector<FittedParameter> fitted;
  std::vector<std::string> keys;  // [critical_batch,] epoch_factor, tuned_factor.B...
  std::vector<double> covariance; // of their logs, row-major
};

// One of the system's own values: a sum `a` of the fit's log parameters.
struct Combo {
  std::string key, why;
  Eigen::VectorXd a;
  double extra = 0;  // a system without runs: the spread of the systems about the population
};

// The combinations its own curve takes of the fit's parameters, in OwnCurve's key order.
std::vector<Combo> own_combos(const Problem& pb, const std::string& prefix, const std::string& whose) {
  const System& mine = pb.systems[0];
  std::vector<Combo> combos;
  auto unit = [&](Eigen::Index i, Eigen::Index j = -1) {
    Eigen::VectorXd a = Eigen::VectorXd::Zero(pb.size);
    a[i] = 1;
    if (j >= 0) a[j] = 1;
    return a;
  };
  if (pb.fit_critical) combos.push_back({prefix + "critical_batch", "", unit(0)});
  combos.push_back({prefix + "epoch_factor", whose, unit(pb.factor_index(), mine.u), pb.effects && mine.u < 0 ? pb.system_sd * pb.system_sd : 0.0});
  if (pb.tuning_sd > 0)
    for (const auto& [c, slot] : kept_cells(pb)) {
      const Cell& cell = pb.cells[c];
      const std::string recipe = cell.recipe.empty() ? "" : fmt::format(" (recipe {})", recipe_id(cell.recipe));
      const std::string why = cell.machines.size() == 1 && slot.recipe_id.empty()
                                  ? fmt::format(" (this system's tuning at global batch {}{}: its runs there over its factor)", cell.batch, recipe)
                                  : fmt::format(" (the tuning at global batch {}{}: the runs of {} there over their systems' factors)",
                                                cell.batch, recipe, fmt::join(cell.machines, ", "));
      combos.push_back({fmt::format("{}tuned_factor.{}", prefix, to_string(slot)), why, unit(cell.v)});
    }
  return combos;
}

// The seed spread within a cell, and the spread of a batch's tuning, where the runs give them.
void add_spreads(const Problem& pb, const std::string& prefix, const std::string& source, OwnCurve& out) {
  const double within = static_cast<double>(pb.runs.size() - pb.groups.size());
  if (within >= 1) {
    const std::string about = pb.effects ? " (a seed's spread: the runs about their own system's at their batch" : " (the runs' spread at their batch";
    out.fitted.push_back({prefix + "seed_epochs_cv", pb.seed_sd, pb.seed_sd / std::sqrt(2 * within),
                          source + about + fmt::format(", at {:.3g} epochs)", pb.seed_ref)});
    out.fitted.push_back({prefix + "seed_epochs_ref", pb.seed_ref, 0,
                          source + " (the runs' median epochs less half an epoch: a run's spread in epochs grows as their square root)"});
  }
  if (pb.tuning_sd > 0) {
    out.fitted.push_back({prefix + "batch_tuning_cv", pb.tuning_sd, pb.tuning_sd / std::sqrt(2 * std::max(1.0, pb.tuning_dof)),
                          "calibrate records, epochs to target: " + pb.tuning_from});
  }
}

OwnCurve system_parameters(const Problem& pb, const FitResult& f, const std::string& prefix, const std::string& source,
                           const std::string& whose) {
  OwnCurve out;
  const Eigen::MatrixXd C = log_covariance(pb, f);
  const std::vector<Combo> combos = own_combos(pb, prefix, whose);
  const size_t n = combos.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      double c = combos[i].a.dot(C * combos[j].a) + (i == j ? combos[i].extra : 0.0);
      if (!std::isfinite(c)) c = i == j ? std::numeric_limits<double>::infinity() : 0.0;
      out.covariance.push_back(c);
    }
  for (size_t i = 0; i < n; ++i) {
    const double value = std::exp(combos[i].a.dot(f.params));
    out.keys.push_back(combos[i].key);
    out.fitted.push_back({combos[i].key, value, value * std::sqrt(out.covariance[i * n + i]), source + combos[i].why});
  }
  add_spreads(pb, prefix, source, out);
  return out;
}

// An earlier fit's tunings (a built-in's runs at other batches): gone with their fitted entries and
// blocks, since this fit's batches replace them.
void forget_tunings(MachineProfile& profile, const std::string& prefix, ConvergenceParams& cv) {
  auto old = [&](const std::string& k) { return k.starts_with(prefix + "tuned_factor.") || k == prefix + "batch_tuning_cv"; };
  std::erase_if(profile.fitted, [&](const FittedParameter& f) { return old(f.key); });
  std::erase_if(profile.correlations, [&](const FitCorrelation& c) { return std::any_of(c.keys.begin(), c.keys.end(), old); });
  cv.tuned_factor.clear(), cv.batch_tuning_cv = 0;
}

// What the fitted epoch factor's effect is from, in words.
std::string whose_effect(const Problem& pb) {
  const System& mine = pb.systems[0];
  if (!pb.effects) return "";
  if (mine.runs == 0) return " (a system without runs: the population's)";
  if (mine.machines.size() == 1) return fmt::format(" (this system's effect from its {} run(s))", mine.runs);
  std::vector<std::string> others(mine.machines.begin() + 1, mine.machines.end());
  return fmt::format(" (the effect of its code, {}, from {} run(s): its own and those of {})", pb.own_code, mine.runs,
                     fmt::join(others, ", "));
}

BatchEpochsFit fit_workload(MachineProfile& profile, const std::string& workload, const std::vector<NamedRecord>& own,
                            const std::vector<NamedRecord>& others) {
  BatchEpochsFit fit;
  fit.workload = workload;
  const std::string prefix = "convergence." + workload + ".";
  const auto cv = profile.convergence.find(workload);
  if (cv == profile.convergence.end()) {
    fit.at_prior.push_back(fmt::format("epochs to target: the profile has no convergence parameters for {} "
                                       "(calibrate convergence fits its learning curves)",
                                       workload));
    return fit;
  }
  Problem pb = gather(cv->second, workload, own, others, fit);
  if (pb.runs.empty()) {
    fit.at_prior.push_back(prefix + "epoch_factor (no run reached its target)");
    return fit;
  }
  if (!pb.fit_critical)
    fit.at_prior.push_back(prefix + "critical_batch (the runs share one global batch: how the epochs grow with the batch "
                                     "needs runs at two; --epochs-from adds other machines')");
  const FitResult f = fit_with_spreads(pb);
  if (pb.effects && pb.tuning_sd <= 0)
    fit.at_prior.push_back(prefix + "batch_tuning_cv (no system ran two global batches: a system's deviation at its batch is "
                                    "taken to persist at every batch)");
  describe_systems(pb, f, fit);
  if (!own.empty() && pb.own_code.empty() && pb.others_name_codes)
    fit.notes.push_back("the fitted records name no ML framework (one code): their epochs' factor is their machine's alone, not shared "
                        "with the other machines that ran their code (ingest-mllog --system-json names it)");
  std::vector<std::string> files;
  for (const auto& r : pb.runs) files.push_back(r.named->file);
  const std::string source = fmt::format("calibrate records, epochs to target: {}", fmt::join(files, ", "));
  forget_tunings(profile, prefix, cv->second);
  if (pb.tuning_sd > 0)
    for (const auto& [c, slot] : kept_cells(pb)) cv->second.tuned_factor[slot] = 1;  // the slots the fitted values go to
  const OwnCurve curve = system_parameters(pb, f, prefix, source, whose_effect(pb));
  fit.fitted = curve.fitted;
  for (const auto& p : fit.fitted) {
    set_parameter(profile, p.key, p.value);
    record_fit(profile, p);
  }
  record_correlations(profile, curve.keys, curve.covariance, DrawScale::log);
  for (const auto& r : pb.runs)
    fit.observations.push_back({r.named->file, r.machine, r.batch, r.epochs, std::ceil(pb.predicted(f.params, r) - 1e-9)});
  return fit;
}

}  // namespace

std::vector<BatchEpochsFit> fit_batch_epochs(MachineProfile& profile, const std::vector<NamedRecord>& own,
                                             const std::vector<NamedRecord>& others) {
  std::vector<std::string> workloads;
  for (const auto& n : own)
    if (std::find(workloads.begin(), workloads.end(), n.record.workload) == workloads.end()) workloads.push_back(n.record.workload);
  for (const auto& n : others)  // without runs of its own, a system is fitted the population's curves
    if (own.empty() && std::find(workloads.begin(), workloads.end(), n.record.workload) == workloads.end())
      workloads.push_back(n.record.workload);
  for (const auto& n : others)
    if (std::find(workloads.begin(), workloads.end(), n.record.workload) == workloads.end())
      fail_input(n.file, "workload",
                 fmt::format("'{}' is not a workload of the fitted records ({}): other machines' epochs to target inform "
                             "only the workloads the profile is fitted for",
                             n.record.workload, fmt::join(workloads, ", ")));
  std::vector<BatchEpochsFit> out;
  for (const auto& w : workloads) out.push_back(fit_workload(profile, w, own, others));
  return out;
}

}  // namespace mrplan
