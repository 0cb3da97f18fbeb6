#include "calibrate/preprocessing_paper.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "calibrate/calibrated_builtins.hpp"
#include "model/profile_parameters.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

int samples_per_node(const NodeRun& r, const MachineProfile& m) {
  const bool small = r.dataset == PaperDataset::small;
  if (r.app == "deepcam") return small ? 1536 : 12288;  // section IX-A: per node
  return (small ? 128 : 2048) * m.gpus_per_node;        // section IX-B: per GPU
}

namespace {

// Section IX-B: CosmoFlow ran 100 epochs on the small set, 15 on the large; DeepCAM's are not stated.
int paper_epochs(const NodeRun& r) {
  if (r.app != "cosmoflow") return 0;
  return r.dataset == PaperDataset::small ? 100 : 15;
}

Plan node_plan(const NodeRun& r, const MachineProfile& m) {
  Plan p = builtin_plan(fmt::format("{}-mlperf@{}", r.app, r.machine), m.gpus_per_node);
  p.train_samples = samples_per_node(r, m);
  p.validation_samples = 0;
  p.precision = Precision::amp;  // section VII: both applications in automatic mixed precision
  p.staging = r.staging;
  p.codec = r.coding.codec;
  p.decoder = r.coding.decoder;
  p.stages.at(0).models.at(0).local_batch = r.local_batch;
  return p;
}

// An epoch over the paper's epochs (0: a later epoch), start-up and staging left out.
EpochCost paper_epoch(const NodeRun& r, const MachineProfile& m) {
  const auto prepared = prepare(node_plan(r, m), m);
  const auto& c = prepared.stages.at(0).models.at(0);
  const int n = paper_epochs(r);
  if (n == 0) return c.later_epoch;
  const double later = n - 1.0;
  EpochCost e = c.first_epoch;
  e.compute_s -= c.startup_s;
  e.io_s = (e.io_s + later * c.later_epoch.io_s) / n;
  e.comm_s = (e.comm_s + later * c.later_epoch.comm_s) / n;
  e.compute_s = (e.compute_s + later * c.later_epoch.compute_s) / n;
  e.h2d_s = (e.h2d_s + later * c.later_epoch.h2d_s) / n;
  e.eval_s = (e.eval_s + later * c.later_epoch.eval_s) / n;
  return e;
}

template <class Profiles>  // const or not
auto& profile_named(Profiles& ps, const std::string& name) {
  for (auto& p : ps)
    if (p.name == name) return p;
  throw std::logic_error("preprocessing paper: no profile for machine " + name);
}

double claim_value_at(const PaperClaim& c, const NodeRun& at, const std::vector<MachineProfile>& ps) {
  if (c.quantity == ClaimQuantity::decode_share) return device_decode_share(at, profile_named(ps, at.machine));
  const NodeRun num = apply_side(at, c.numerator), den = apply_side(at, c.denominator);
  return node_samples_per_s(num, profile_named(ps, num.machine)) / node_samples_per_s(den, profile_named(ps, den.machine));
}

using StudyProfiles = std::map<std::string, std::vector<MachineProfile>>;

// Whether `v` is what the claim's bound picks over `best` so far.
bool better(const PaperClaim& c, double v, double best) {
  switch (c.bound) {
    case ClaimBound::up_to: return v > best;
    case ClaimBound::at_least: return v < best;
    case ClaimBound::about: return std::abs(std::log(v / c.stated)) > std::abs(std::log(best / c.stated));
  }
  return false;
}

}  // namespace

// The baselines preprocess differently (CosmoFlow parses TFRecords and takes logs, DeepCAM reads
// HDF5 floats, section IV): the raw host rate is each application's own, the rest is the machine's.
bool fit_is_per_application(const ClaimFit& f) { return f.key == "io.host_decode_GBps"; }

NodeRun apply_side(NodeRun r, const ClaimSide& s) {
  if (s.coding) r.coding = *s.coding;
  if (s.machine) r.machine = *s.machine;
  if (s.dataset) r.dataset = *s.dataset;
  if (s.staging) r.staging = *s.staging;
  if (s.local_batch) r.local_batch = *s.local_batch;
  return r;
}

double node_samples_per_s(const NodeRun& r, const MachineProfile& m) { return samples_per_node(r, m) / paper_epoch(r, m).epoch_s(); }

double device_decode_share(const NodeRun& r, const MachineProfile& m) {
  if (r.coding.decoder != DecoderPlace::device || r.coding.codec == Codec::raw) return 0;
  MachineProfile free = m;
  free.io.codecs.at(codec_name(r.coding.codec)).device_decode_Bps = 1e30;
  // the simulator puts the device decoder in the step: what the step loses without it is its time
  const auto with = paper_epoch(r, m);
  return (with.compute_s - paper_epoch(r, free).compute_s) / with.epoch_s();
}

ClaimPrediction predict_claim(const PaperClaim& c, const std::vector<MachineProfile>& ps) {
  std::optional<ClaimPrediction> out;
  for (const auto& machine : c.machines)
    for (auto dataset : c.datasets)
      for (int batch : c.batches)
        for (auto staging : c.stagings)
          for (const auto& coding : c.codings) {
            const NodeRun at{c.app, machine, dataset, batch, staging, coding};
            const double v = claim_value_at(c, at, ps);
            if (!out || better(c, v, out->value)) out = ClaimPrediction{v, at};
          }
  if (!out) throw std::logic_error("preprocessing paper: claim " + c.id + " spans no run");
  return *out;
}

namespace {

// The profiles the study starts from (one set per application): the built-ins as the MRT paper
// calibrates them, with the codecs' entries and what the paper states put in.
std::vector<MachineProfile> study_profiles(const std::function<MachineProfile(const std::string&)>& base) {
  std::vector<MachineProfile> ps;
  for (const auto& name : preprocessing_paper_machines()) {
    MachineProfile m = base(name);
    for (const char* codec : {"lut", "diff", "deflate"}) m.io.codecs[codec] = CodecRates{};
    ps.push_back(std::move(m));
  }
  for (const auto& in : preprocessing_paper_inputs())
    for (const auto& name : in.machines) {
      auto& m = profile_named(ps, name);
      set_parameter(m, in.key, in.value);
      record_fit(m, {in.key, in.value, 0.0, "stated: preprocessing paper " + in.source});
    }
  return ps;
}

// Every profile a fit of `app`'s claim sets: its machines, in every application's set unless the
// parameter is the application's own.
template <class Fn>
void for_fit_targets(StudyProfiles& by_app, const std::string& app, const ClaimFit& f, Fn fn) {
  for (auto& [a, ps] : by_app) {
    if (fit_is_per_application(f) && a != app) continue;
    for (const auto& name : f.machines) fn(profile_named(ps, name));
  }
}

void set_fit(StudyProfiles& by_app, const std::string& app, const ClaimFit& f, double value) {
  for_fit_targets(by_app, app, f, [&](MachineProfile& m) {
    // a fraction of the GPU's memory bandwidth, in the key's unit
    const double per_Bps = f.per_memory_bandwidth ? m.compute.mem_bandwidth_Bps / find_parameter(m, f.key)->to_internal : 1.0;
    set_parameter(m, f.key, value * per_Bps);
  });
}

// The claim's own parameter, bisected in log space until its prediction meets what it states (the
// prediction moves one way with the parameter over the range, which the ends show).
FittedValue fit_claim(const PaperClaim& c, StudyProfiles& ps) {
  const auto& f = *c.fits;
  auto at = [&](double x) {
    set_fit(ps, c.app, f, x);
    return predict_claim(c, ps.at(c.app)).value;
  };
  double lo = std::log(f.lower), hi = std::log(f.upper);
  const double v_lo = at(f.lower), v_hi = at(f.upper);
  const bool rising = v_hi > v_lo;
  const double least = std::min(v_lo, v_hi), most = std::max(v_lo, v_hi);
  if (c.stated <= least || c.stated >= most) {
    const bool at_lower = (c.stated <= least) == rising;
    const double x = at_lower ? f.lower : f.upper;
    set_fit(ps, c.app, f, x);
    // the paper states two significant figures: a bound within 1% of the value meets it
    const double nearest = c.stated <= least ? least : most;
    return {c.id, c.app, f, x, std::abs(nearest / c.stated - 1) < 0.01};
  }
  for (int i = 0; i < 24; ++i) {  // the range's log over 2^24: well under 0.1% of the value
    const double mid = 0.5 * (lo + hi);
    ((at(std::exp(mid)) < c.stated) == rising ? lo : hi) = mid;
  }
  const double x = std::exp(0.5 * (lo + hi));
  set_fit(ps, c.app, f, x);
  return {c.id, c.app, f, x, true};
}

}  // namespace

PreprocessingStudy preprocessing_paper_study() {
  // the paper's own claims, on the profiles its fits made (before any machine's MLPerf logs)
  return preprocessing_paper_study([](const std::string& name) {
    MachineProfile p = calibrated_builtin_profile(before_mlperf(name));
    p.name = name;
    return p;
  });
}

void take_codec_fits(const PreprocessingStudy& s, MachineProfile& m) {
  if (s.profiles.empty()) return;
  // the codecs' fits are every application's (only the raw host rate is one application's)
  for (const auto& from : s.profiles.begin()->second) {
    if (from.name != m.name) continue;
    m.io.codecs = from.io.codecs;
    for (const auto& f : from.fitted)
      if (f.key.starts_with("io.codecs.")) record_fit(m, f);
  }
}

PreprocessingStudy preprocessing_paper_study(const std::function<MachineProfile(const std::string&)>& base) {
  PreprocessingStudy s;
  const auto claims = preprocessing_paper_claims();
  for (const auto& c : claims) s.profiles.try_emplace(c.app, study_profiles(base));
  // starting points for what the paper does not give (the fits move them)
  for (const auto& c : claims)
    if (c.fits && c.fits->key.starts_with("io.codecs."))
      set_fit(s.profiles, c.app, *c.fits, c.fits->per_memory_bandwidth ? 0.1 : 1.0);
  // the parameters move each other's claims a little: fit in turn until they settle
  for (int sweep = 0; sweep < 3; ++sweep) {
    s.fits.clear();
    for (const auto& c : claims)
      if (c.fits) s.fits.push_back(fit_claim(c, s.profiles));
  }
  for (const auto& c : claims)
    if (c.fits)
      for_fit_targets(s.profiles, c.app, *c.fits, [&](MachineProfile& m) {
        record_fit(m, {c.fits->key, parameter_value(m, c.fits->key), 0.0,
                       fmt::format("fitted: preprocessing paper claim {} ({})", c.id, c.statement)});
      });
  for (const auto& c : claims) {
    const auto p = predict_claim(c, s.profiles.at(c.app));
    s.rows.push_back({c, p, p.value / c.stated - 1});
  }
  return s;
}

}  // namespace mrplan
