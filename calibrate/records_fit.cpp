#include "calibrate/records_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "model/error_summary.hpp"
#include "model/errors.hpp"
#include "model/least_squares.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_parameters.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

struct Observation {
  enum class Kind { train, eval, staging } kind = Kind::train;  // an epoch's training, its validation pass, the staging phase
  size_t record = 0, stage = 0, model = 0;
  double measured = 0;
};
const char* quantity(Observation::Kind k) {
  return k == Observation::Kind::train ? "train_epoch_s" : k == Observation::Kind::eval ? "eval_s" : "staging_s";
}

struct Candidate {
  std::string key;
  double start = 0;                                        // the key's unit: the fit's start and its prior's centre
  double upper = std::numeric_limits<double>::infinity();  // below the registry's bound: a fraction of a peak stays <= 1
  std::vector<double> starts = {};  // starts the records suggest, each tried (the fit's is then the records', never "left at its prior")
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
      }
    if (rec.staging_s.value_or(0) > 0) obs.push_back({Observation::Kind::staging, r, 0, 0, *rec.staging_s});
  }
  if (obs.empty()) fail_input(records.front().file, "stages", "no whole epoch to fit in any of the records");
  return obs;
}

// What the simulator predicts for every observation under `p`.
Eigen::VectorXd predict(const MachineProfile& p, const std::vector<NamedRecord>& records, const std::vector<Plan>& plans,
                        const std::vector<Observation>& obs) {
  std::vector<std::optional<PreparedPlan>> prepared(records.size());
  Eigen::VectorXd out(obs.size());
  for (size_t i = 0; i < obs.size(); ++i) {
    auto& pp = prepared[obs[i].record];
    if (!pp) pp = prepare(plans[obs[i].record], p);
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
      case Observation::Kind::staging:
        out[i] = pp->staging_s;
        break;
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

std::vector<Candidate> candidates_of(const MachineProfile& p, const std::vector<NamedRecord>& records, const std::vector<Plan>& plans,
                                     const std::vector<Observation>& obs) {
  std::vector<Candidate> c;
  for (const auto& [family, eff] : p.compute.efficiency) c.push_back({"compute.efficiency." + family, eff, 1.0});
  c.push_back({"compute.inference_factor", p.compute.inference_factor > 0 ? p.compute.inference_factor : 1.0});
  if (const auto pass = eval_pass_candidate(p, records, plans, obs)) c.push_back(*pass);
  c.push_back({"compute.kernel_overhead_us", std::max(p.compute.kernel_overhead_s * 1e6, 1.0)});
  c.push_back({"comm.bandwidth_efficiency", p.comm.bandwidth_efficiency});
  if (p.comm.collectives == Collectives::alpha_beta)  // NCCL's model has its own latencies per hop
    c.push_back({"comm.inter_node.alpha_s", std::max(p.comm.inter_node.alpha_s, 1e-6)});
  c.push_back({"comm.call_overhead_us", std::max(p.comm.call_overhead_s * 1e6, 1.0)});
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

// Relative residuals with candidate k at start * exp(theta[k]), clamped to the registry's bounds.
struct Problem {
  MachineProfile base;
  const std::vector<NamedRecord>& records;
  std::vector<Plan> plans;
  std::vector<Observation> obs;
  std::vector<Candidate> cands;
  Eigen::VectorXd measured;

  MachineProfile at(const Eigen::VectorXd& theta) const {
    MachineProfile p = base;
    for (size_t k = 0; k < cands.size(); ++k) {
      const auto& cand = cands[k];
      const auto slot = find_parameter(p, cand.key);
      set_parameter(p, cand.key, std::clamp(cand.start * std::exp(theta[k]), slot->lower, std::min(slot->upper, cand.upper)));
    }
    return p;
  }
  Eigen::VectorXd residuals(const Eigen::VectorXd& theta) const {
    return predict(at(theta), records, plans, obs).cwiseQuotient(measured) - Eigen::VectorXd::Ones(measured.size());
  }
};

// Measurement noise of one median epoch time (relative) and the prior's spread (log space: a
// factor of 10 at one sigma): the data outweigh the prior wherever they say anything.
constexpr double kObservationSigma = 0.02;
const double kPriorSigma = std::log(10.0);

// The weighted residuals of the maximum a posteriori fit: the records' relative errors, then each
// parameter's distance from its prior.
Eigen::VectorXd posterior_residuals(const Problem& pb, const Eigen::VectorXd& theta) {
  const Eigen::VectorXd data = pb.residuals(theta) / kObservationSigma;
  Eigen::VectorXd r(data.size() + theta.size());
  r << data, theta / kPriorSigma;
  return r;
}

// The posterior standard deviation of each log-parameter, from the Jacobian at the fit.
Eigen::VectorXd posterior_sd(const Problem& pb, const Eigen::VectorXd& theta) {
  const Eigen::VectorXd r0 = posterior_residuals(pb, theta);
  Eigen::MatrixXd J(r0.size(), theta.size());
  for (Eigen::Index k = 0; k < theta.size(); ++k) {
    Eigen::VectorXd t = theta;
    t[k] += 1e-4;
    J.col(k) = (posterior_residuals(pb, t) - r0) / 1e-4;
  }
  return (J.transpose() * J).inverse().diagonal().cwiseSqrt();
}

// The maximum a posteriori fit from the profile's values, and from each start the records suggest for
// a candidate that has some (the fit is not convex): the one that misses the records least is kept,
// its start becoming that candidate's.
Eigen::VectorXd fit_from_each_start(Problem& pb) {
  const auto n = static_cast<Eigen::Index>(pb.cands.size());
  const Eigen::VectorXd zeros = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(pb.obs.size()) + n);
  auto fit = [&] {
    return levenberg_marquardt([&](const Eigen::VectorXd& t) { return posterior_residuals(pb, t); }, Eigen::VectorXd::Zero(n), zeros, 100).params;
  };
  const auto with_starts = std::find_if(pb.cands.begin(), pb.cands.end(), [](const Candidate& c) { return !c.starts.empty(); });
  if (with_starts == pb.cands.end()) return fit();
  Eigen::VectorXd best;
  double best_miss = std::numeric_limits<double>::infinity(), best_start = with_starts->start;
  for (const double s : with_starts->starts) {
    with_starts->start = s;
    const Eigen::VectorXd theta = fit();
    if (const double miss = pb.residuals(theta).squaredNorm(); miss < best_miss) best = theta, best_miss = miss, best_start = s;
  }
  with_starts->start = best_start;
  return best;
}

void add_warnings(RecordsFit& out, MachineProfile& fitted, const Problem& pb) {
  std::vector<std::string> off;
  for (const auto& o : out.observations)
    if (std::abs(o.fitted - o.measured) > 0.1 * o.measured && std::find(off.begin(), off.end(), o.quantity) == off.end())
      off.push_back(o.quantity);
  if (off.empty()) return;
  out.warnings.push_back(
      fmt::format("the fitted model misses its own calibration data by more than 10% on {}: predictions from it "
                  "carry at least that error",
                  fmt::join(off, ", ")));
  for (const auto& c : pb.cands)
    if (c.key.starts_with("compute.efficiency.") && parameter_value(fitted, c.key) >= c.upper * 0.999)
      out.warnings.push_back(
          fmt::format("{} reached its peak (1) and the runs are still faster: did they train in another "
                      "precision than the plan says (ingest-mllog --precision amp)?",
                      c.key));
}

}  // namespace

RecordsFit fit_records(MachineProfile& profile, const std::vector<NamedRecord>& records) {
  if (records.empty()) fail_input("", "records", "give at least one measured record");
  Problem pb{profile, records, {}, observations_of(records), {}, {}};
  for (const auto& r : records) pb.plans.push_back(plan_from_yaml_text(r.record.plan_spec, r.file + ": plan_spec"));
  pb.cands = candidates_of(profile, records, pb.plans, pb.obs);
  pb.measured.resize(pb.obs.size());
  for (size_t i = 0; i < pb.obs.size(); ++i) pb.measured[i] = pb.obs[i].measured;
  RecordsFit out;
  const bool validates = std::any_of(pb.obs.begin(), pb.obs.end(), [](const Observation& o) { return o.kind == Observation::Kind::eval; });
  if (validates && std::none_of(pb.cands.begin(), pb.cands.end(), [](const Candidate& c) { return c.key == "compute.eval_pass_ms"; }))
    out.notes.push_back("compute.eval_pass_ms (a validation pass's part that does not shrink with its samples) is not fitted: the runs "
                        "validate one share of the held-out samples a GPU; runs at another GPU count pin it");
  const size_t n = pb.cands.size();
  const Eigen::VectorXd prior_pred = predict(profile, records, pb.plans, pb.obs);
  const Eigen::VectorXd theta = fit_from_each_start(pb), sd = posterior_sd(pb, theta);
  MachineProfile fitted = pb.at(theta);
  for (const auto& r : records) out.used.push_back(r.file);
  const std::string source = fmt::format("calibrate records: {}", fmt::join(out.used, ", "));
  for (size_t k = 0; k < n; ++k) {
    const auto& key = pb.cands[k].key;
    const double value = parameter_value(fitted, key);
    if (std::abs(theta[k]) < 0.01 && pb.cands[k].starts.empty()) {
      out.at_prior.push_back(key);
      continue;
    }
    // the data narrow it less than twofold: a bound they set, not a value they pin (kept, and said)
    if (sd[k] > 0.5 * kPriorSigma) out.bounded.push_back(key);
    out.fitted.push_back({key, value, value * sd[k], source});
  }
  for (const auto& f : out.fitted) record_fit(fitted, f);
  const Eigen::VectorXd after = predict(fitted, records, pb.plans, pb.obs);
  for (size_t i = 0; i < pb.obs.size(); ++i)
    out.observations.push_back({records[pb.obs[i].record].file, quantity(pb.obs[i].kind), pb.obs[i].measured, prior_pred[i], after[i]});
  add_warnings(out, fitted, pb);
  profile = std::move(fitted);
  return out;
}

}  // namespace mrplan
