#include "calibrate/records_fit.hpp"
#include "calibrate/posterior_draws.hpp"
#include "calibrate/staging_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "model/error_summary.hpp"
#include "model/errors.hpp"
#include "model/least_squares.hpp"
#include "model/plan_network.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_parameters.hpp"
#include "model/sync_batchnorm.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

struct Observation {
  // a steady epoch's training, its validation pass, the first epoch's training (staging: calibrate/staging_fit)
  enum class Kind { train, eval, first } kind = Kind::train;
  size_t record = 0, stage = 0, model = 0;
  double measured = 0;
  size_t plan = 0;  // the first record that ran the same plan (a submission's repeats): prepared once
};
const char* quantity(Observation::Kind k) {
  return k == Observation::Kind::train ? "train_epoch_s" : k == Observation::Kind::eval ? "eval_s" : "first_epoch_s";
}

// Measurement noise (relative) of one median epoch time, and of one first epoch: a single epoch,
// whose warm-up varies from run to run (JUWELS Booster's v2.0 DeepCAM at 2048 GPUs: 6 s to 32 s).
constexpr double kObservationSigma = 0.02, kFirstEpochSigma = 0.25;
double sigma_of(const Observation& o) { return o.kind == Observation::Kind::first ? kFirstEpochSigma : kObservationSigma; }

// The least step-time spread a fit starts from: its parameters move in log space, so 0 could not move.
constexpr double kLeastSpread = 1e-3;

struct Candidate {
  std::string key;
  double start = 0;                                        // the key's unit: the fit's start and its prior's centre
  double upper = std::numeric_limits<double>::infinity();  // below the registry's bound: a fraction of a peak stays <= 1
  std::vector<double> starts = {};  // starts the records suggest, each tried (the fit's is then the records', never "left at its prior")
  double prior_sigma = 0;           // log space; 0: the fit's default (a factor of 10)
  // the key's unit: a normal prior read in it, and the candidate moves linearly, start + prior_sd *
  // theta (a warm-up held near other machines' 0-12 s): in log space its prior would leave 0 s a
  // tail the posterior chain wanders down without end
  double prior_sd = 0;
  bool one_count = false;           // fitted at one GPU count: not a code's value to pass on (calibrate/code_priors)
};

std::vector<Observation> observations_of(const std::vector<NamedRecord>& records) {
  std::vector<Observation> obs;
  for (size_t r = 0; r < records.size(); ++r) {
    const auto& rec = records[r].record;
    if (rec.source != Source::measured)
      fail_input(records[r].file, "source", "calibrate records fits measured records; this one is a prediction");
    if (rec.plan_spec.empty())
      fail_input(records[r].file, "plan_spec", "the record does not carry the plan it ran, so it cannot be re-predicted");
    for (size_t s = 0; s < rec.stages.size(); ++s)
      for (size_t m = 0; m < rec.stages[s].models.size(); ++m) {
        const auto& per = rec.stages[s].models[m].per_epoch;
        std::vector<double> train, eval;
        for (size_t e = per.size() >= 3 ? 1 : 0; e < per.size(); ++e)  // the first epoch warms caches and compiles kernels
          if (per[e].fraction >= 1) train.push_back(per[e].epoch_s - per[e].eval_s), eval.push_back(per[e].eval_s);
        if (train.empty()) continue;
        obs.push_back({Observation::Kind::train, r, s, m, median(train)});
        if (median(eval) > 0) obs.push_back({Observation::Kind::eval, r, s, m, median(eval)});
        // the first epoch apart: its reads from the first tier and its warm-up, which the later ones do not pay
        if (per.size() >= 3 && per[0].fraction >= 1) obs.push_back({Observation::Kind::first, r, s, m, per[0].epoch_s - per[0].eval_s});
      }
  }
  if (obs.empty()) fail_input(records.front().file, "stages", "no whole epoch to fit in any of the records");
  for (auto& o : obs)
    while (o.plan < o.record && records[o.plan].record.plan_spec != records[o.record].record.plan_spec) ++o.plan;
  return obs;
}

// What the simulator predicts for every observation under `p`; the repeats of one plan prepared once
// (the posterior's chain, add_posterior_rows, calls this thousands of times).
Eigen::VectorXd predict(const MachineProfile& p, const std::vector<NamedRecord>& records, const std::vector<Plan>& plans,
                        const std::vector<Observation>& obs, const std::vector<PlanTables>* tables = nullptr) {
  std::vector<std::optional<PreparedPlan>> prepared(records.size());
  Eigen::VectorXd out(obs.size());
  for (size_t i = 0; i < obs.size(); ++i) {
    auto& pp = prepared[obs[i].plan];
    if (!pp) pp = tables ? prepare(plans[obs[i].plan], p, (*tables)[obs[i].plan]) : prepare(plans[obs[i].plan], p);
    if (obs[i].stage >= pp->stages.size() || obs[i].model >= pp->stages[obs[i].stage].models.size())
      fail_input(records[obs[i].record].file, "stages", "the record's stages and models differ from its plan's");
    const auto& c = pp->stages[obs[i].stage].models[obs[i].model];
    const auto t3 = model_time(c, 3), t2 = model_time(c, 2);  // a steady epoch: the third
    switch (obs[i].kind) {
      case Observation::Kind::train:
        out[i] = (t3.epoch_s() - t3.eval_s) - (t2.epoch_s() - t2.eval_s);
        break;
      case Observation::Kind::eval:
        out[i] = t3.eval_s - t2.eval_s;
        break;
      case Observation::Kind::first: {
        const auto t1 = model_time(c, 1);
        out[i] = t1.epoch_s() - t1.eval_s;
        break;
      }
    }
  }
  return out;
}

// The intercept of measured times on one regressor (in ms, at least 1).
double intercept_ms(const std::vector<double>& x, const std::vector<double>& y) {
  Eigen::MatrixXd A(x.size(), 2);
  for (size_t i = 0; i < x.size(); ++i) A.row(i) << 1.0, x[i];
  return std::max(A.colPivHouseholderQr().solve(Eigen::Map<const Eigen::VectorXd>(y.data(), static_cast<Eigen::Index>(y.size())))[0] * 1e3, 1.0);
}

// A validation pass's part that does not shrink with its samples, where the runs validate two or
// more shares of the held-out samples a GPU: with one, the forwards and the fixed part cannot be
// told apart (not fitted). Steps exponential in a parameter would not reach seconds from a
// millisecond, so the fit is tried from what the records suggest, and from none: the intercepts
// of the passes' times on their share and on the profile's prediction of their forwards and reads.
std::optional<Candidate> eval_pass_candidate(const MachineProfile& p, const std::vector<NamedRecord>& records, const std::vector<Plan>& plans,
                                             const std::vector<Observation>& obs) {
  std::vector<Observation> evals;
  std::vector<double> shares, measured;
  for (const auto& o : obs)
    if (o.kind == Observation::Kind::eval) {
      const Plan& plan = plans[o.record];
      evals.push_back(o), measured.push_back(o.measured);
      shares.push_back(std::ceil(static_cast<double>(plan.validation_samples) / plan.stages[o.stage].models[o.model].gpus));
    }
  if (std::set<double>(shares.begin(), shares.end()).size() < 2) return std::nullopt;
  MachineProfile forwards = p;  // the passes without a fixed part, at the fit's starting inference factor
  forwards.compute.eval_pass_s = 0;
  if (forwards.compute.inference_factor <= 0) forwards.compute.inference_factor = 1.0;
  const Eigen::VectorXd modelled = predict(forwards, records, plans, evals);
  Candidate c{"compute.eval_pass_ms", std::max(p.compute.eval_pass_s * 1e3, 1.0)};
  c.starts = {intercept_ms(shares, measured), intercept_ms({modelled.data(), modelled.data() + modelled.size()}, measured), c.start};
  return c;
}

// Whether a code's prior holds its candidate in the key's unit (its sd) rather than as a factor.
bool in_its_unit(const CodePrior& prior) { return prior.additive && prior.sd > 0; }

// The wait for the slowest rank, which grows with the ranks (model/straggler). Runs at two or more GPU
// counts fit it; at one it cannot be told apart from the step itself, so it is fitted only where
// other machines' fits give it a prior, and held near it by their spread. The key in force is the
// one simulate reads: a node-sharing spread where the profile has one.
std::optional<Candidate> straggler_candidate(const MachineProfile& p, const std::vector<Plan>& plans, const std::vector<Observation>& obs,
                                             const CodePrior* prior) {
  std::set<int> counts;
  for (const auto& o : obs)
    if (o.kind == Observation::Kind::train) counts.insert(plans[o.record].stages[o.stage].models[o.model].gpus);
  const bool shared = p.node_sharing.step_time_cv > 0;
  Candidate c{shared ? "node_sharing.step_time_cv" : "compute.step_time_cv",
              std::max(shared ? p.node_sharing.step_time_cv : p.compute.step_time_cv, kLeastSpread), 1.0};
  if (prior) c.start = std::max(prior->value, kLeastSpread), c.prior_sigma = prior->log_sd;
  if (counts.size() >= 2) {
    c.starts = {c.start, 0.1};
    return c;
  }
  if (!prior) return std::nullopt;
  if (in_its_unit(*prior)) c.prior_sigma = 0, c.prior_sd = prior->sd;  // its fits do not tell it from 0
  return c;
}

// A one-count candidate held near a code's prior, in its unit where the prior is read so.
Candidate held_candidate(const std::string& key, const CodePrior& prior, double least) {
  const double inf = std::numeric_limits<double>::infinity();
  if (in_its_unit(prior)) return {key, std::max(prior.value, least), inf, {}, 0, prior.sd, true};
  return {key, std::max(prior.value, least), inf, {}, prior.log_sd, 0, true};
}

// The cost of each pooled batch norm's statistics collective (model/sync_batchnorm), where some runs
// pool (MLPerf HPC DeepCAM at local batch 1): pinned beside runs that do not; runs that all pool
// trade it off with the kernels' overhead. Not a code's prior: NVIDIA's DeepCAM fits ~1 us on DGX
// A100 and Eos and 150 us on LBNL's Perlmutter (fitted with its CosmoFlow), a centre neither is near.
std::optional<Candidate> sync_batchnorm_candidate(const MachineProfile& p, const std::vector<Plan>& plans,
                                                  const std::vector<Observation>& obs) {
  const bool pools = std::any_of(obs.begin(), obs.end(), [&](const Observation& o) {
    return o.kind == Observation::Kind::train && batchnorm_pool_ranks(plans[o.record], plans[o.record].stages[o.stage].models[o.model]) > 1;
  });
  if (!pools) return std::nullopt;
  // from none, and from PyTorch SyncBatchNorm's ~10 launches per layer and direction at ~10 us each
  Candidate c{"comm.sync_batchnorm_call_us", std::max(p.comm.sync_batchnorm_call_s * 1e6, 1.0)};
  c.starts = {c.start, 100.0};
  return c;
}

// A prior's spread (log space) where the profile's value came with a standard error (another fit, or
// a transfer), so that the records move it only as far as that fit left open; 0 (the default) else.
double prior_sigma_of(const MachineProfile& p, const std::string& key) {
  for (const auto& f : p.fitted)
    if (f.key == key && f.value > 0 && f.std_error > 0 && std::isfinite(f.std_error)) return f.std_error / f.value;
  return 0;
}

std::vector<Candidate> candidates_of(const MachineProfile& p, const std::vector<NamedRecord>& records, const std::vector<Plan>& plans,
                                     const std::vector<Observation>& obs, const std::optional<CodePriors>& priors) {
  std::vector<Candidate> c;
  for (const auto& [family, eff] : p.compute.efficiency) c.push_back({"compute.efficiency." + family, eff, 1.0});
  c.push_back({"compute.inference_factor", p.compute.inference_factor > 0 ? p.compute.inference_factor : 1.0});
  const CodePrior* pass_prior = priors ? priors->of("compute.eval_pass_ms") : nullptr;
  if (const auto pass = eval_pass_candidate(p, records, plans, obs)) c.push_back(*pass);
  else if (pass_prior && std::any_of(obs.begin(), obs.end(), [](const Observation& o) { return o.kind == Observation::Kind::eval; }))
    // one share a GPU: the forwards and the fixed part trade off, so the fixed part is held near the prior
    c.push_back(held_candidate("compute.eval_pass_ms", *pass_prior, 1.0));
  if (const auto wait = straggler_candidate(p, plans, obs, priors ? priors->of("compute.step_time_cv") : nullptr)) c.push_back(*wait);
  c.push_back({"compute.kernel_overhead_us", std::max(p.compute.kernel_overhead_s * 1e6, 1.0)});
  c.push_back({"comm.bandwidth_efficiency", p.comm.bandwidth_efficiency});
  if (p.comm.collectives == Collectives::alpha_beta)  // NCCL's model has its own latencies per hop
    c.push_back({"comm.inter_node.alpha_s", std::max(p.comm.inter_node.alpha_s, 1e-6)});
  c.push_back({"comm.call_overhead_us", std::max(p.comm.call_overhead_s * 1e6, 1.0)});
  if (auto pooled = sync_batchnorm_candidate(p, plans, obs)) c.push_back(std::move(*pooled));
  if (std::any_of(plans.begin(), plans.end(), [](const Plan& x) { return x.framework == CommFramework::horovod; }))
    c.push_back({"comm.horovod_call_overhead_us", std::max(p.comm.horovod_call_overhead_s * 1e6, 1.0)});
  c.push_back({"compute.mem_efficiency", p.compute.mem_efficiency, 1.0});
  c.push_back({"io.host_decode_GBps", p.io.host_decode_Bps / 1e9});
  c.push_back({"io.tiers.pfs.per_node_bandwidth_GBps", p.io.pfs.per_node_bandwidth_Bps / 1e9});
  c.push_back({"io.tiers.pfs.aggregate_bandwidth_GBps", p.io.pfs.aggregate_bandwidth_Bps / 1e9});
  c.push_back({"io.tiers.host_memory.per_node_bandwidth_GBps", p.io.host_memory.per_node_bandwidth_Bps / 1e9});
  if (p.io.nvme.per_node_bandwidth_Bps > 0) c.push_back({"io.tiers.nvme.per_node_bandwidth_GBps", p.io.nvme.per_node_bandwidth_Bps / 1e9});
  c.push_back({"io.tiers.pfs.per_file_latency_ms", std::max(p.io.pfs.per_file_latency_s * 1e3, 0.01)});
  if (std::any_of(plans.begin(), plans.end(), [](const Plan& x) { return !x.persistent_workers; }))
    c.push_back({"io.worker_start_ms", std::max(p.io.worker_start_s * 1e3, 1.0)});
  return c;
}

// The values candidate `c` may take: the registry's bounds, below its own upper one.
std::pair<double, double> value_bounds(const ParameterSlot& slot, const Candidate& c) {
  return {slot.lower, std::min(slot.upper, c.upper)};
}

// Relative residuals with candidate k at start * exp(theta[k]) (start + prior_sd * theta[k] where its prior
// is read in its unit), clamped to the registry's bounds.
struct Problem {
  MachineProfile base;
  const std::vector<NamedRecord>& records;
  std::vector<Plan> plans;
  std::vector<Observation> obs;
  std::vector<Candidate> cands;
  Eigen::VectorXd measured;
  std::vector<PlanTables> tables;  // by record, each plan's layer tables (built once: sim/simulate plan_tables)

  MachineProfile at(const Eigen::VectorXd& theta) const {
    MachineProfile p = base;
    for (size_t k = 0; k < cands.size(); ++k) {
      const auto& cand = cands[k];
      const auto slot = find_parameter(p, cand.key);
      const double value = cand.prior_sd > 0 ? cand.start + cand.prior_sd * theta[k] : cand.start * std::exp(theta[k]);
      const auto [lo, hi] = value_bounds(*slot, cand);
      set_parameter(p, cand.key, std::clamp(value, lo, hi));
    }
    return p;
  }
  Eigen::VectorXd residuals(const Eigen::VectorXd& theta) const {
    return predict(at(theta), records, plans, obs, &tables).cwiseQuotient(measured) - Eigen::VectorXd::Ones(measured.size());
  }
};

// `p` with `key` at twice its value: how a fit learns what a parameter moves, and by how much.
MachineProfile doubled(const MachineProfile& p, const std::string& key) {
  MachineProfile twice = p;
  set_parameter(twice, key, 2 * parameter_value(twice, key));
  return twice;
}

// Whether the observations `obs`, predicted at `at_p` under `p`, move when `key` is twice its value.
bool moves_with(const Problem& pb, const MachineProfile& p, const Eigen::VectorXd& at_p, const std::vector<Observation>& obs,
                const std::string& key) {
  return !at_p.isApprox(predict(doubled(p, key), pb.records, pb.plans, obs, &pb.tables), 1e-9);
}

// The first epoch apart from the later ones: each workload whose runs log one gets its warm-up (the
// code's, not the machine's), and its reads pin the first tier's per-node rate (its share over that
// rate: LBNL's v1.0 DeepCAM paid 100 s at 512 GPUs, 20 s at 2048). A tier's per-file latency or
// aggregate rate that only first epochs read is not fitted: a warm-up stands in for either.
void add_first_epoch_candidates(Problem& pb, const std::optional<CodePriors>& priors, std::vector<std::string>& notes) {
  std::map<std::string, std::set<int>> workloads;  // each one's GPU counts of first epochs
  std::vector<Observation> steady;  // what the later epochs and the validation passes measure
  for (const auto& o : pb.obs)
    if (o.kind == Observation::Kind::first)
      workloads[plan_network(pb.plans[o.record]).name].insert(pb.plans[o.record].stages[o.stage].models[o.model].gpus);
    else steady.push_back(o);
  if (workloads.empty()) return;
  const Eigen::VectorXd at_base = predict(pb.base, pb.records, pb.plans, steady, &pb.tables);
  std::erase_if(pb.cands, [&](const Candidate& c) {
    return (c.key.ends_with("per_file_latency_ms") || c.key.ends_with("aggregate_bandwidth_GBps")) &&
           !moves_with(pb, pb.base, at_base, steady, c.key);
  });
  // a log-space parameter cannot start at 0: from a second (within a factor of 10 of MLPerf HPC's
  // 0.5-15 s), and from a hundredth (none), whichever fits better. Not from the first epochs'
  // excess: centred there, the warm-up would take all of it from the first tier's reads
  for (const auto& [w, counts] : workloads) {
    const std::string key = "compute.warmup_s." + w;
    const double s = std::max(pb.base.compute.warmup_s.try_emplace(w, 0.0).first->second, 1.0);
    const CodePrior* prior = priors ? priors->of(key) : nullptr;
    // one count cannot tell a warm-up from reads that shrink with a node's share: held near the
    // same code's fits at two counts where there are some, else fitted and said
    if (counts.size() < 2 && prior) {
      pb.cands.insert(pb.cands.begin(), held_candidate(key, *prior, 0.01));
      continue;
    }
    if (counts.size() < 2)
      notes.push_back(key + " (the first epoch's warm-up) is fitted at one GPU count, where it cannot be told from reads that shrink with "
                            "a node's share: runs at another count pin it, or --priors-from gives it from machines fitted at two");
    // first: the starts are tried one candidate after another, and a warm-up held at a second would
    // make the later ones (a rank's spread) answer for the first epoch
    pb.cands.insert(pb.cands.begin(), {key, s, std::numeric_limits<double>::infinity(), {s, 0.01}, 0, 0, counts.size() < 2});
  }
}

// A start for each tier's per-node rate that the first epochs read and the later ones do not: the
// rate at which the first epochs' reads take their excess over the fit's start (their reads' time at
// that start, twice what doubling the rate saves). From the profile's rate alone the fit can settle
// where a warm-up answers for the reads (LBNL's v1.0 DeepCAM under the built-ins' priors: a 46 s
// warm-up, its first epochs 50% short, where the reads at 0.6 GB/s fit them).
void add_first_read_starts(Problem& pb) {
  std::vector<Observation> first, steady;
  for (const auto& o : pb.obs) (o.kind == Observation::Kind::first ? first : steady).push_back(o);
  if (first.empty()) return;
  const MachineProfile start = pb.at(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(pb.cands.size())));
  const Eigen::VectorXd at_start = predict(start, pb.records, pb.plans, first, &pb.tables);
  const Eigen::VectorXd steady_at_start = predict(start, pb.records, pb.plans, steady, &pb.tables);
  for (auto& c : pb.cands) {
    if (!c.key.starts_with("io.tiers.") || !c.key.ends_with("per_node_bandwidth_GBps") || !c.starts.empty()) continue;
    if (moves_with(pb, start, steady_at_start, steady, c.key)) continue;
    const Eigen::VectorXd reads = 2 * (at_start - predict(doubled(start, c.key), pb.records, pb.plans, first, &pb.tables));
    std::vector<double> factors;  // the rate's factor each first epoch asks for
    for (size_t i = 0; i < first.size(); ++i) {
      const auto k = static_cast<Eigen::Index>(i);
      if (const double wanted = reads[k] + first[i].measured - at_start[k]; reads[k] > 0 && wanted > 0) factors.push_back(reads[k] / wanted);
    }
    if (factors.empty()) continue;
    if (const double f = median(factors); f < 1 / 1.5 || f > 1.5) c.starts = {c.start, c.start * f};
  }
}

// The prior's spread (log space: a factor of 10 at one sigma): the data outweigh the prior wherever
// they say anything.
const double kPriorSigma = std::log(10.0);

// The weighted residuals of the maximum a posteriori fit: the records' relative errors, then each
// parameter's distance from its prior.
Eigen::VectorXd posterior_residuals(const Problem& pb, const Eigen::VectorXd& theta) {
  Eigen::VectorXd data = pb.residuals(theta);
  for (Eigen::Index i = 0; i < data.size(); ++i) data[i] /= sigma_of(pb.obs[static_cast<size_t>(i)]);
  Eigen::VectorXd r(data.size() + theta.size());
  Eigen::VectorXd prior(theta.size());
  for (Eigen::Index k = 0; k < theta.size(); ++k) {
    const Candidate& c = pb.cands[static_cast<size_t>(k)];
    prior[k] = c.prior_sd > 0 ? theta[k] : theta[k] / (c.prior_sigma > 0 ? c.prior_sigma : kPriorSigma);
  }
  r << data, prior;
  return r;
}

// The posterior covariance of the log-parameters, from the Jacobian at the fit.
Eigen::MatrixXd posterior_covariance(const Problem& pb, const Eigen::VectorXd& theta) {
  const Eigen::VectorXd r0 = posterior_residuals(pb, theta);
  Eigen::MatrixXd J(r0.size(), theta.size());
  for (Eigen::Index k = 0; k < theta.size(); ++k) {
    Eigen::VectorXd t = theta;
    t[k] += 1e-4;
    J.col(k) = (posterior_residuals(pb, t) - r0) / 1e-4;
  }
  return (J.transpose() * J).inverse();
}

// Each candidate's theta at the registry's bounds on its value (Problem::at clamps there, so past a
// bound the records see the bound's value).
std::vector<std::pair<double, double>> theta_bounds(const Problem& pb) {
  std::vector<std::pair<double, double>> out;
  MachineProfile scratch = pb.base;
  const double inf = std::numeric_limits<double>::infinity();
  for (const Candidate& c : pb.cands) {
    const auto [lo, hi] = value_bounds(*find_parameter(scratch, c.key), c);
    if (c.prior_sd > 0) out.emplace_back((lo - c.start) / c.prior_sd, std::isfinite(hi) ? (hi - c.start) / c.prior_sd : inf);
    else out.emplace_back(lo > 0 ? std::log(lo / c.start) : -inf, std::isfinite(hi) ? std::log(hi / c.start) : inf);
  }
  return out;
}

// The chain's target: the fit's posterior cut at the bounds (draw_posterior refuses a step whose
// residuals are not finite). Clamped, a value past a bound fits as well as the bound, and the chain
// piled its rows there (Eos's v3.0 DeepCAM at one count: conv2d at its peak in half the rows, fitted
// at 0.34, and the band's P50 13% below the fit's).
Eigen::VectorXd chain_residuals(const Problem& pb, const std::vector<std::pair<double, double>>& bounds, const Eigen::VectorXd& theta) {
  for (size_t k = 0; k < bounds.size(); ++k)
    if (const double t = theta[static_cast<Eigen::Index>(k)]; t < bounds[k].first || t > bounds[k].second)
      return Eigen::VectorXd::Constant(1, std::numeric_limits<double>::infinity());
  return posterior_residuals(pb, theta);
}

// The posterior chain's steps and the rows a profile keeps of it. 8,000 steps left the study's P10
// and P90 up to 25% of the measured time away from a chain five times as long; 20,000 left a band's
// P50 up to 6% from another seed's, 80,000 within 2% on eight pairs of nine (docs/validation/mlperf-scaling.md,
// "The posterior chain's length"). The sanitizers' build checks memory, not the draws, at 8,000.
#ifdef MRPLAN_SANITIZED
constexpr size_t kChainSteps = 8000;
#else
constexpr size_t kChainSteps = 80000;
#endif
constexpr size_t kPosteriorRows = 200;

// The joint block's posterior (calibrate/posterior_draws) as rows of its keys' values: a chain on its
// keys' log-parameters, the other candidates held at the fit, whose target is the fit's own posterior
// (the records' relative errors and the priors). Returns the chain's acceptance.
double add_posterior_rows(FitCorrelation& block, const Problem& pb, const Eigen::VectorXd& theta, const Eigen::MatrixXd& cov) {
  std::vector<Eigen::Index> at;
  for (const auto& key : block.keys)
    for (size_t k = 0; k < pb.cands.size(); ++k)
      if (pb.cands[k].key == key) at.push_back(static_cast<Eigen::Index>(k));
  if (at.size() != block.keys.size()) return 0;
  const auto n = static_cast<Eigen::Index>(at.size());
  // the fit's values, each theta within its bounds: the chain starts inside its target
  const auto bounds = theta_bounds(pb);
  Eigen::VectorXd inside = theta;
  for (size_t k = 0; k < bounds.size(); ++k)
    inside[static_cast<Eigen::Index>(k)] = std::clamp(theta[static_cast<Eigen::Index>(k)], bounds[k].first, bounds[k].second);
  Eigen::VectorXd mode(n);
  Eigen::MatrixXd sub(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    mode[i] = inside[at[i]];
    for (Eigen::Index j = 0; j < n; ++j) sub(i, j) = cov(at[i], at[j]);
  }
  auto full = [&](const Eigen::VectorXd& t) {
    Eigen::VectorXd x = inside;
    for (Eigen::Index i = 0; i < n; ++i) x[at[i]] = t[i];
    return x;
  };
  const auto post = draw_posterior([&](const Eigen::VectorXd& t) { return chain_residuals(pb, bounds, full(t)); }, mode, sub, kChainSteps,
                                   kPosteriorRows, 1);
  for (const auto& t : post.draws) {
    MachineProfile p = pb.at(full(t));
    std::vector<double> row;
    for (const auto& key : block.keys) row.push_back(parameter_value(p, key));
    block.draws.push_back(std::move(row));
  }
  return post.acceptance;
}

// Held at its value by the fit but drawn with it (its posterior chain): the work at which a kernel
// reaches half its peak, which trades off with the efficiencies wherever the runs train at one local
// batch, so that two of its values cannot be told apart from one count (drawn apart, it alone doubled
// a band's width: docs/validation/mlperf-scaling.md); its prior, its own fit's standard error (a
// transfer's). Appended to the candidates, theta (at 0) and the covariance (its prior's variance).
std::pair<Eigen::VectorXd, Eigen::MatrixXd> with_drawn_alongside(Problem& pb, const Eigen::VectorXd& theta, const Eigen::MatrixXd& cov) {
  const auto n = theta.size();
  const std::string key = "compute.half_work_GFLOP";
  const double sigma = prior_sigma_of(pb.base, key);
  if (!pb.base.compute.half_work_flops_by_family.empty() || sigma <= 0) return {theta, cov};
  pb.cands.push_back({key, pb.base.compute.half_work_flops / 1e9, std::numeric_limits<double>::infinity(), {}, sigma});
  Eigen::VectorXd t(n + 1);
  t << theta, 0.0;
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(n + 1, n + 1);
  c.topLeftCorner(n, n) = cov;
  c(n, n) = sigma * sigma;
  return {t, c};
}

// The maximum a posteriori fit from the profile's values, then from each start the records suggest
// for each candidate that has some, one candidate after another (the fit is not convex): the fit
// with the least posterior misfit (records and priors) is kept, each candidate's start becoming the
// one it was found from. Where two parameters explain the records alike (a slow allreduce or a slow
// rank, both growing with the GPUs), the priors choose.
Eigen::VectorXd fit_from_each_start(Problem& pb) {
  const auto n = static_cast<Eigen::Index>(pb.cands.size());
  const Eigen::VectorXd zeros = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(pb.obs.size()) + n);
  auto fit = [&] {
    return levenberg_marquardt([&](const Eigen::VectorXd& t) { return posterior_residuals(pb, t); }, Eigen::VectorXd::Zero(n), zeros, 100).params;
  };
  Eigen::VectorXd best = fit();
  double best_miss = posterior_residuals(pb, best).squaredNorm();
  for (auto& cand : pb.cands) {
    const double kept = cand.start;
    double chosen = kept;
    for (const double s : cand.starts) {
      if (s == kept) continue;  // the fit from it is the one in hand
      cand.start = s;
      const Eigen::VectorXd theta = fit();
      if (const double miss = posterior_residuals(pb, theta).squaredNorm(); miss < best_miss) best = theta, best_miss = miss, chosen = s;
    }
    cand.start = chosen;
  }
  return best;
}

// How the joint fit's parameters moved together (its fitted keys and those drawn alongside): their
// correlation and rows of their posterior, which a band draws (sim/monte_carlo).
void keep_joint_block(RecordsFit& out, MachineProfile& fitted, Problem& pb, const Eigen::VectorXd& theta, const Eigen::MatrixXd& cov) {
  const size_t n = pb.cands.size();
  const auto [theta_all, cov_all] = with_drawn_alongside(pb, theta, cov);
  std::vector<std::string> joint;
  std::vector<size_t> at;
  for (size_t k = 0; k < pb.cands.size(); ++k)
    if (k >= n || std::any_of(out.fitted.begin(), out.fitted.end(), [&](const FittedParameter& f) { return f.key == pb.cands[k].key; }))
      joint.push_back(pb.cands[k].key), at.push_back(k);
  std::vector<double> joint_cov;
  for (const size_t i : at)
    for (const size_t j : at) joint_cov.push_back(cov_all(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)));
  if (auto* block = record_correlations(fitted, joint, joint_cov)) {
    const double acceptance = add_posterior_rows(*block, pb, theta_all, cov_all);
    out.band = fmt::format("a band (predict --samples) draws the joint fit's {} parameters from {} rows of their posterior (a Metropolis "
                           "chain of {} steps, {:.0f}% accepted), not from the normal their standard errors describe",
                           block->keys.size(), block->draws.size(), kChainSteps, acceptance * 100);
  }
}

void add_warnings(RecordsFit& out, MachineProfile& fitted, const Problem& pb) {
  std::vector<std::string> off;
  for (const auto& o : out.observations)
    // a first epoch is weighed at its own spread (kFirstEpochSigma)
    if (std::abs(o.fitted - o.measured) > (o.quantity == quantity(Observation::Kind::first) ? kFirstEpochSigma : 0.1) * o.measured &&
        std::find(off.begin(), off.end(), o.quantity) == off.end())
      off.push_back(o.quantity);
  if (off.empty()) return;
  out.warnings.push_back(
      fmt::format("the fitted model misses its own calibration data by more than 10% (a first epoch: 25%) on {}: predictions from it "
                  "carry at least that error",
                  fmt::join(off, ", ")));
  for (const auto& c : pb.cands)
    if (c.key.starts_with("compute.efficiency.") && parameter_value(fitted, c.key) >= c.upper * 0.999)
      out.warnings.push_back(
          fmt::format("{} reached its peak (1) and the runs are still faster: did they train in another "
                      "precision than the plan says (ingest-mllog --precision amp)?",
                      c.key));
}

// Staging times fit the staging tool's own pace, apart from the epochs (calibrate/staging_fit): the
// copy tool's pace is not what the epochs' loader reads at. Before the joint fit, which then sees it
// where a plan stages beside its first epoch (model/io_cost).
std::optional<StagingFit> fit_staging_times(MachineProfile& base, const std::vector<StagingTime>& staging, const RecordsFit& out,
                                            const std::optional<std::string>& code, const std::string& source) {
  if (staging.empty()) return std::nullopt;
  const CodePrior* fixed_prior = out.priors ? out.priors->of("io.staging_fixed_s") : nullptr;
  const auto held = fixed_prior ? std::optional(StagingPrior{*fixed_prior, held_source(*fixed_prior, source)}) : std::nullopt;
  auto st = fit_staging(base, staging, source, held, code_source(source, code));
  if (out.priors && !fixed_prior)
    st.notes.insert(st.notes.begin(), fmt::format("no machine of the priors fitted staging's fixed part of {} at two node shares (none of their "
                                                  "runs logged staging at both)", *code));
  for (const auto& f : st.fitted) set_parameter(base, f.key, f.value);
  auto& whose = base.io.staging_workloads;
  for (const auto& t : staging)
    if (const auto w = plan_network(*t.plan).name; std::find(whose.begin(), whose.end(), w) == whose.end()) whose.push_back(w);
  std::sort(whose.begin(), whose.end());
  return st;
}

// The staging fit's values, correlation, notes and times, kept after the joint fit's.
void keep_staging_fit(RecordsFit& out, MachineProfile& fitted, const StagingFit& st, const std::vector<StagingTime>& staging) {
  for (const auto& f : st.fitted) record_fit(fitted, f), out.fitted.push_back(f);
  if (!st.covariance.empty()) record_correlations(fitted, {st.fitted[0].key, st.fitted[1].key}, st.covariance);
  for (const auto& n : st.notes) out.notes.push_back(n);
  for (size_t i = 0; i < staging.size(); ++i)
    out.observations.push_back({staging[i].file, "staging_s", staging[i].measured_s, st.before_s[i], st.after_s[i]});
}

// What one GPU count leaves unfitted where no prior gave it, said: the wait for the slowest rank, a
// validation pass's fixed part.
void note_unfitted_code_parameters(const Problem& pb, const MachineProfile& profile, RecordsFit& out) {
  const bool validates = std::any_of(pb.obs.begin(), pb.obs.end(), [](const Observation& o) { return o.kind == Observation::Kind::eval; });
  auto has = [&](std::string_view tail) {
    return std::any_of(pb.cands.begin(), pb.cands.end(), [&](const Candidate& c) { return c.key.ends_with(tail); });
  };
  if (!has("step_time_cv") && profile.compute.step_time_cv == 0 && profile.node_sharing.step_time_cv == 0)
    out.notes.push_back(
        "compute.step_time_cv (the wait for the slowest rank, which grows with the ranks) is not fitted: the runs train at "
        "one GPU count; runs at another pin it, or --priors-from gives it from machines fitted at two");
  if (validates && !has("eval_pass_ms"))
    out.notes.push_back(
        "compute.eval_pass_ms (a validation pass's part that does not shrink with its samples) is not fitted: the runs "
        "validate one share of the held-out samples a GPU; runs at another GPU count pin it");
}

// Each candidate the fit moved, with its standard error (`sd`: its log's, or in its unit) and its
// source; one left at its prior is listed as such.
void keep_fitted_values(const Problem& pb, const Eigen::VectorXd& theta, const Eigen::VectorXd& sd, MachineProfile& fitted,
                        const std::string& source, const std::optional<std::string>& code, RecordsFit& out) {
  const auto& priors = out.priors;
  for (size_t k = 0; k < pb.cands.size(); ++k) {
    const auto& key = pb.cands[k].key;
    const double value = parameter_value(fitted, key);
    const Candidate& cand = pb.cands[k];
    // one GPU count moves it only within the other machines' spread: kept with that source, and not
    // a value to pass on (code_priors)
    const CodePrior* held = priors && cand.starts.empty() ? priors->of(key) : nullptr;
    if (std::abs(theta[k]) < 0.01 && cand.starts.empty() && !held) {
      out.at_prior.push_back(key);
      continue;
    }
    // the data narrow it less than twofold: a bound they set, not a value they pin (kept, and said,
    // in the profile too)
    const bool bounded = sd[k] > 0.5 * (cand.prior_sd > 0 ? 1.0 : cand.prior_sigma > 0 ? cand.prior_sigma : kPriorSigma);
    if (bounded) out.bounded.push_back(key);
    const std::string own = bounded ? source + " (bounded, not pinned)" : source;
    const bool passed_on = is_code_parameter(key) && !cand.one_count;
    const double std_error = cand.prior_sd > 0 ? cand.prior_sd * sd[k] : value * sd[k];
    out.fitted.push_back({key, value, std_error, held ? held_source(*held, source) : passed_on ? code_source(own, code) : own});
  }
}

}  // namespace

RecordsFit fit_records(MachineProfile& profile, const std::vector<NamedRecord>& records,
                       const std::vector<std::pair<std::string, MachineProfile>>& priors_from) {
  if (records.empty()) fail_input("", "records", "give at least one measured record");
  Problem pb{profile, records, {}, observations_of(records), {}, {}, {}};
  for (const auto& r : records) pb.plans.push_back(plan_from_yaml_text(r.record.plan_spec, r.file + ": plan_spec"));
  for (const auto& plan : pb.plans) pb.tables.push_back(plan_tables(plan));
  std::vector<StagingTime> staging;
  for (size_t r = 0; r < records.size(); ++r)
    if (const auto s = records[r].record.staging_s.value_or(0); s > 0) staging.push_back({records[r].file, &pb.plans[r], s});
  RecordsFit out;
  const auto code = code_of(pb.plans);
  if (!priors_from.empty()) {
    if (!code) fail_input(records.front().file, "plan_spec", "--priors-from takes one code's fits: give records of one workload and framework");
    out.priors = code_priors(priors_from, *code);
  }
  const auto& priors = out.priors;
  for (const auto& r : records) out.used.push_back(r.file);
  const std::string source = fmt::format("calibrate records: {}", fmt::join(out.used, ", "));
  const auto staging_fit = fit_staging_times(pb.base, staging, out, code, source);
  pb.cands = candidates_of(pb.base, records, pb.plans, pb.obs, priors);
  add_first_epoch_candidates(pb, priors, out.notes);
  add_first_read_starts(pb);
  pb.measured.resize(pb.obs.size());
  for (size_t i = 0; i < pb.obs.size(); ++i) pb.measured[i] = pb.obs[i].measured;
  note_unfitted_code_parameters(pb, profile, out);
  const Eigen::VectorXd prior_pred = predict(profile, records, pb.plans, pb.obs);
  const Eigen::VectorXd theta = fit_from_each_start(pb);
  const Eigen::MatrixXd cov = posterior_covariance(pb, theta);
  MachineProfile fitted = pb.at(theta);
  keep_fitted_values(pb, theta, cov.diagonal().cwiseSqrt(), fitted, source, code, out);
  for (const auto& f : out.fitted) record_fit(fitted, f);
  keep_joint_block(out, fitted, pb, theta, cov);
  if (staging_fit) keep_staging_fit(out, fitted, *staging_fit, staging);
  const Eigen::VectorXd after = predict(fitted, records, pb.plans, pb.obs);
  for (size_t i = 0; i < pb.obs.size(); ++i)
    out.observations.push_back({records[pb.obs[i].record].file, quantity(pb.obs[i].kind), pb.obs[i].measured, prior_pred[i], after[i]});
  add_warnings(out, fitted, pb);
  profile = std::move(fitted);
  return out;
}

}  // namespace mrplan
