#include "sim/optimize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <queue>

#include "model/errors.hpp"
#include "model/method_rules.hpp"
#include "model/method_table.hpp"
#include "sim/parallel_for.hpp"
#include "sim/simulate.hpp"
#include "sim/sweep.hpp"

namespace mrplan {

const char* to_string(Objective o) {
  switch (o) {
    case Objective::time: return "time";
    case Objective::gpu_hours: return "gpu-hours";
    case Objective::node_hours: return "node-hours";
  }
  return "?";
}

double objective_value(const Candidate& c, Objective o) {
  switch (o) {
    case Objective::time: return c.time_s;
    case Objective::gpu_hours: return c.gpu_hours;
    case Objective::node_hours: return c.node_hours;
  }
  return c.time_s;
}

bool ranks_before(const Candidate& a, const Candidate& b, Objective o) {
  const double x = objective_value(a, o), y = objective_value(b, o);
  return x != y ? x < y : a.order < b.order;
}

namespace {

// ---- the template's axes

bool fuses(const Plan& p) { return has_fusion_stage(p); }
// MRMF's fusion stages share one batch axis, its fine-tuning has its own; other methods one per stage.
size_t batch_axes(const Plan& p) { return fuses(p) ? 2 : p.stages.size(); }
size_t axis_of_stage(const Plan& p, size_t i) { return fuses(p) ? (i + 1 == p.stages.size() ? 1 : 0) : i; }

// A GPU count the profile can place: whole nodes, or (where the machine lends parts of nodes) a share of one.
bool placeable(int gpus, const MachineProfile& m) {
  return gpus % m.gpus_per_node == 0 || (!m.whole_nodes && m.gpus_per_node % gpus == 0);
}


double violation(const Candidate& c, const Constraints& l) { return violation(l, c.time_s, c.gpu_hours, c.node_hours); }

// a dominates b on (time, GPU-hours); exact ties go to the earlier, so the front does not depend on
// the order candidates arrive in
bool dominates(const Candidate& a, const Candidate& b) {
  if (a.time_s > b.time_s || a.gpu_hours > b.gpu_hours) return false;
  return a.time_s < b.time_s || a.gpu_hours < b.gpu_hours || a.order < b.order;
}

// The front, sorted by time (GPU-hours then fall along it).
void add_to_front(std::vector<Candidate>& front, const Candidate& c) {
  auto it = std::lower_bound(front.begin(), front.end(), c,
                             [](const Candidate& a, const Candidate& b) { return a.time_s != b.time_s ? a.time_s < b.time_s : a.order < b.order; });
  if (it != front.begin() && dominates(*std::prev(it), c)) return;
  if (it != front.end() && dominates(*it, c)) return;
  auto end = it;
  while (end != front.end() && dominates(c, *end)) ++end;
  it = front.erase(it, end);
  front.insert(it, c);
}

// What one thread keeps of the candidates it saw.
class Keeper {
 public:
  Keeper(const Constraints& limits, Objective objective, size_t keep, const CandidateSink* sink, std::mutex* sink_mu)
      : limits_(limits), objective_(objective), keep_(std::max<size_t>(keep, 1)), heap_(Worse{objective}), sink_(sink), sink_mu_(sink_mu) {}

  // Counts, the front and the nearest violator see every candidate; true when it meets the limits.
  bool observe(const Candidate& c) {
    ++result_.counts.evaluated;
    if (sink_ && *sink_) {
      batch_.push_back(c);
      if (batch_.size() >= 4096) flush();
    }
    if (!c.reached_target) {
      ++result_.counts.not_reached;
      return false;
    }
    add_to_front(fronts_[c.template_index], c);
    if (const double v = violation(c, limits_); v > 1) {
      ++result_.counts.violating;
      if (!result_.nearest || v < nearest_violation_ || (v == nearest_violation_ && c.order < result_.nearest->order))
        result_.nearest = c, nearest_violation_ = v;
      return false;
    }
    return true;
  }

  // The ranking: the best of each configuration (its best switch point) that meets the limits.
  void rank(const Candidate& c) {
    auto& best = per_template_[c.template_index];
    if (!best || ranks_before(c, *best, objective_)) best = c;
    if (heap_.size() < keep_) {
      heap_.push(c);
    } else if (ranks_before(c, heap_.top(), objective_)) {
      heap_.pop();
      heap_.push(c);
    }
  }
  SearchCounts& counts() { return result_.counts; }

  void flush() {
    if (batch_.empty()) return;
    std::lock_guard<std::mutex> lock(*sink_mu_);
    (*sink_)(batch_);
    batch_.clear();
  }

  SearchResult take() {
    flush();
    while (!heap_.empty()) result_.best.push_back(heap_.top()), heap_.pop();
    for (const auto& [t, c] : per_template_) result_.per_template_best.push_back(*c);
    for (const auto& [t, f] : fronts_) result_.front.insert(result_.front.end(), f.begin(), f.end());
    return std::move(result_);
  }

 private:
  struct Worse {
    Objective o;
    bool operator()(const Candidate& a, const Candidate& b) const { return ranks_before(a, b, o); }
  };
  Constraints limits_;
  Objective objective_;
  size_t keep_;
  std::priority_queue<Candidate, std::vector<Candidate>, Worse> heap_;  // the worst kept on top
  std::map<uint32_t, std::optional<Candidate>> per_template_;
  std::map<uint32_t, std::vector<Candidate>> fronts_;
  SearchResult result_;
  double nearest_violation_ = 0;
  const CandidateSink* sink_;
  std::mutex* sink_mu_;
  std::vector<Candidate> batch_;
};

// One unit of work: a template at one GPU count (and MRMF split), every batch combination and point.
struct Unit {
  uint32_t template_index;
  int gpus;
  std::optional<double> split;
};

std::vector<Unit> units_of(const SearchSpace& s) {
  std::vector<Unit> units;
  for (uint32_t t = 0; t < s.templates.size(); ++t) {
    std::vector<std::optional<double>> splits{std::nullopt};
    if (fuses(s.templates[t]) && !s.low_fractions.empty()) splits.assign(s.low_fractions.begin(), s.low_fractions.end());
    for (int g : s.gpus)
      for (const auto& f : splits) units.push_back({t, g, f});
  }
  return units;
}

// The switch points of a template: its own stops (the rule), then each forced switch.
std::vector<std::optional<double>> points_of(const SearchSpace& s, const Plan& t) {
  if (!method_row(t.method).has_switch) return {std::nullopt};
  std::vector<std::optional<double>> pts;
  if (s.rule_points) pts.push_back(std::nullopt);
  for (double e : s.switch_epochs) pts.push_back(e);
  return pts;
}

Plan unit_plan(const SearchSpace& s, const Unit& u) {
  const Plan moved = plan_at_gpus(s.templates[u.template_index], u.gpus, Scaling::weak);
  return u.split ? plan_with_split(moved, *u.split) : moved;
}

void set_stage_batch(Plan& p, size_t i, int batch) {
  for (auto& m : p.stages[i].models) m.local_batch = batch;
}

enum class Feasible { yes, no_memory, too_few_samples, beyond_batch };
Feasible feasible(const PreparedStage& st, const Plan& plan, std::optional<double> max_global_batch) {
  for (const auto& m : st.models) {
    if (!m.memory.fits) return Feasible::no_memory;
    if (m.global_batch > plan.train_samples) return Feasible::too_few_samples;
    if (max_global_batch && m.global_batch > *max_global_batch) return Feasible::beyond_batch;
  }
  return Feasible::yes;
}

// The unit's plan prepared without its stages (stage_grid sets each stage's batch), or none where it
// cannot run at the unit's GPU count: its `n` candidates are counted out.
std::optional<PreparedPlan> unit_shell(const SearchSpace& space, const Unit& u, const MachineProfile& machine, uint64_t n,
                                       SearchCounts& counts) {
  if (!placeable(u.gpus, machine)) {
    counts.bad_gpus += n;
    return std::nullopt;
  }
  try {
    Plan p = unit_plan(space, u);
    for (size_t i = 0; i < p.stages.size(); ++i) set_stage_batch(p, i, 1);
    if (u.gpus > p.train_samples) {
      counts.too_few_samples += n;
      return std::nullopt;
    }
    return prepare_shell(p, machine);
  } catch (const InputError&) {  // a model left without a GPU at this count
    counts.bad_gpus += n;
    return std::nullopt;
  }
}

// Each stage of a unit's plan at each local batch of the space, prepared once, and why one is not feasible.
struct StageGrid {
  std::vector<std::vector<std::optional<PreparedStage>>> at;  // [stage][batch]: the feasible ones
  std::vector<std::vector<Feasible>> fit;                     // [stage][batch]
  // the first reason stages [from, to) at batch b are not feasible
  Feasible why_not(size_t from, size_t to, size_t b) const {
    for (size_t i = from; i < to; ++i)
      if (fit[i][b] != Feasible::yes) return fit[i][b];
    return Feasible::yes;
  }
};

StageGrid stage_grid(const SearchSpace& space, PreparedPlan& shell, const MachineProfile& machine) {
  const size_t ns = shell.plan.stages.size(), nb = space.local_batches.size();
  StageGrid g{std::vector<std::vector<std::optional<PreparedStage>>>(ns, std::vector<std::optional<PreparedStage>>(nb)),
              std::vector<std::vector<Feasible>>(ns, std::vector<Feasible>(nb))};
  for (size_t i = 0; i < ns; ++i)
    for (size_t b = 0; b < nb; ++b) {
      set_stage_batch(shell.plan, i, space.local_batches[b]);
      auto st = prepare_stage(shell, i, machine);
      g.fit[i][b] = feasible(st, shell.plan, space.max_global_batch);
      if (g.fit[i][b] == Feasible::yes) g.at[i][b] = std::move(st);
    }
  return g;
}

// Every tail batch's stages on head batch b0 (stages [head, ns) on the space's second batch axis):
// each with the start-ups that follow this head (a stage's start-up depends on the stages before
// it), its largest memory, and whether it is feasible; `scratch` is left holding the head's stages.
// False when no tail batch is.
struct Tails {
  std::vector<std::vector<PreparedStage>> at;  // per tail batch
  std::vector<double> memory;
  std::vector<bool> ok;
};

bool prepare_tails(const SearchSpace& space, const StageGrid& grid, size_t head, size_t b0, PreparedPlan& scratch,
                   const MachineProfile& machine, Tails& t) {
  const size_t ns = grid.at.size();
  bool any = false;
  for (size_t b1 = 0; b1 < t.at.size(); ++b1) {
    t.ok[b1] = false;
    if (head < ns && grid.why_not(head, ns, b1) != Feasible::yes) continue;
    scratch.stages.clear();
    for (size_t i = 0; i < ns; ++i) {
      const size_t b = i < head ? b0 : b1;
      scratch.stages.push_back(*grid.at[i][b]);
      set_stage_batch(scratch.plan, i, space.local_batches[b]);
    }
    add_startups(scratch, machine);
    t.at[b1].assign(std::make_move_iterator(scratch.stages.begin() + head), std::make_move_iterator(scratch.stages.end()));
    t.memory[b1] = 0;
    for (const auto& st : t.at[b1])
      for (const auto& m : st.models) t.memory[b1] = std::max(t.memory[b1], m.memory.total_bytes);
    t.ok[b1] = any = true;
  }
  return any;
}

// A candidate of the unit with totals `t` (its batches, memory, point and order are the caller's).
Candidate candidate_of(const Unit& u, const Totals& t, const MachineProfile& machine) {
  Candidate c;
  c.template_index = u.template_index;
  c.gpus = u.gpus;
  c.low_fraction = u.split;
  c.time_s = t.time_s, c.io_s = t.io_s, c.comm_s = t.comm_s, c.compute_s = t.compute_s, c.other_s = t.eval_s + t.fusion_s;
  c.gpu_hours = t.gpu_hours;
  c.node_hours = node_hours(machine, u.gpus, t.time_s, t.gpu_hours);
  c.reached_target = t.reached_target;
  return c;
}

void count_infeasible(SearchCounts& counts, Feasible why, uint64_t n) {
  (why == Feasible::no_memory ? counts.no_memory : why == Feasible::beyond_batch ? counts.beyond_batch : counts.too_few_samples) += n;
}

// The head's totals at switch point `point` (its epochs and what it hands on given) with the stages of
// tail batch b1 on top: each swapped into `scratch` and back, so the tail's prepared stages stay its
// batch's. `epochs`: the caller's scratch, reused across the hot loop.
Totals with_tail(const SearchSpace& space, PreparedPlan& scratch, Tails& tails, size_t head, size_t b1, std::optional<double> point,
                 Totals t, const std::vector<ModelEpochs>& head_epochs, double handed, std::vector<ModelEpochs>& epochs) {
  epochs = head_epochs;
  for (size_t i = head; i < scratch.stages.size(); ++i) {
    std::swap(scratch.stages[i], tails.at[b1][i - head]);
    set_stage_batch(scratch.plan, i, space.local_batches[b1]);
    stage_epochs(scratch, i, point, epochs, handed);
    add_stage(scratch.stages[i], epochs, t);
    std::swap(scratch.stages[i], tails.at[b1][i - head]);
  }
  return t;
}

// The stages before `head` at switch point `point`: their totals, their epochs and what they hand on.
Totals head_totals(const PreparedPlan& scratch, size_t head, std::optional<double> point, std::vector<ModelEpochs>& epochs,
                   double& handed) {
  handed = 0;
  Totals t = start_totals(scratch);
  for (size_t i = 0; i < head; ++i) {
    stage_epochs(scratch, i, point, epochs, handed);
    add_stage(scratch.stages[i], epochs, t);
  }
  return t;
}

double head_memory_bytes(const PreparedPlan& scratch, size_t head) {
  double bytes = 0;
  for (size_t i = 0; i < head; ++i)
    for (const auto& m : scratch.stages[i].models) bytes = std::max(bytes, m.memory.total_bytes);
  return bytes;
}

void search_unit(const SearchSpace& space, const Unit& u, uint64_t unit_index, const MachineProfile& machine, Objective objective,
                 Keeper& keeper) {
  const Plan& tmpl = space.templates[u.template_index];
  const auto points = points_of(space, tmpl);
  const size_t nb = space.local_batches.size();
  uint64_t combos = 1;
  for (size_t a = 0; a < batch_axes(tmpl); ++a) combos *= nb;
  auto& counts = keeper.counts();
  auto shell_or = unit_shell(space, u, machine, combos * points.size(), counts);
  if (!shell_or) return;
  PreparedPlan& shell = *shell_or;
  const size_t ns = tmpl.stages.size();
  const StageGrid grid = stage_grid(space, shell, machine);
  // the head (the stages on batch axis 0) is evaluated once per batch and point, the tail (the
  // stages on axis 1: the last stage) once per tail batch on top of it
  size_t head = 0;
  while (head < ns && axis_of_stage(tmpl, head) == 0) ++head;
  const size_t tail_nb = head < ns ? nb : 1;
  PreparedPlan scratch = shell;
  Tails tails{std::vector<std::vector<PreparedStage>>(tail_nb), std::vector<double>(tail_nb, 0.0), std::vector<bool>(tail_nb, false)};
  std::vector<ModelEpochs> head_epochs, epochs;
  for (size_t b0 = 0; b0 < nb; ++b0) {
    if (const auto why = grid.why_not(0, head, b0); why != Feasible::yes) {
      count_infeasible(counts, why, tail_nb * points.size());
      continue;
    }
    if (!prepare_tails(space, grid, head, b0, scratch, machine, tails)) {
      count_infeasible(counts, grid.why_not(head, ns, 0), tail_nb * points.size());  // no tail batch fits this head
      continue;
    }
    scratch.stages.resize(ns);
    const double head_memory = head_memory_bytes(scratch, head);
    std::vector<std::optional<Candidate>> best_of(tail_nb);  // per configuration (tail batch), its best point
    for (size_t k = 0; k < points.size(); ++k) {
      double head_handed = 0;
      const Totals at_head = head_totals(scratch, head, points[k], head_epochs, head_handed);
      for (size_t b1 = 0; b1 < tail_nb; ++b1) {
        if (!tails.ok[b1]) {
          count_infeasible(counts, grid.why_not(head, ns, b1), 1);
          continue;
        }
        const Totals t =
            head < ns ? with_tail(space, scratch, tails, head, b1, points[k], at_head, head_epochs, head_handed, epochs) : at_head;
        Candidate c = candidate_of(u, t, machine);
        for (size_t i = 0; i < ns; ++i) c.local_batch[i] = space.local_batches[i < head ? b0 : b1];
        c.memory_bytes = std::max(head_memory, head < ns ? tails.memory[b1] : 0.0);
        c.switch_epoch = points[k];
        c.order = (unit_index << 40) | (uint64_t(b0 + nb * b1) << 12) | k;
        if (keeper.observe(c) && (!best_of[b1] || ranks_before(c, *best_of[b1], objective))) best_of[b1] = c;
      }
    }
    for (const auto& c : best_of)
      if (c) keeper.rank(*c);
  }
}

void check_space(const SearchSpace& s) {
  if (s.templates.empty()) fail_input("command line", "--methods", "no method to search");
  if (s.gpus.empty()) fail_input("command line", "--gpus", "no GPU count to search");
  if (s.local_batches.empty()) fail_input("command line", "--local-batch", "no local batch to search");
  for (const auto& t : s.templates) {
    if (t.stages.size() > kMaxSearchStages)
      fail_input(t.source_file, "stages", fmt::format("the optimizer searches plans of at most {} stages", kMaxSearchStages));
    if (method_row(t.method).has_switch && s.switch_epochs.empty() && !s.rule_points)
      fail_input("command line", "--switch", fmt::format("no switch point to search for the {} plan", to_string(t.method)));
  }
  const uint64_t units = units_of(s).size(), combos = static_cast<uint64_t>(s.local_batches.size()) * s.local_batches.size();
  if (units >= (1u << 23) || combos >= (1ull << 28) || s.switch_epochs.size() + 1 >= (1u << 12))
    fail_input("command line", "--gpus", "the search space is too large to order (fewer GPU counts, batches or switch points)");
}

}  // namespace

double violation(const Constraints& l, double time_s, double gpu_hours, double node_hours) {
  double v = 0;
  if (l.deadline_s) v = std::max(v, time_s / *l.deadline_s);
  if (l.budget_gpu_hours) v = std::max(v, gpu_hours / *l.budget_gpu_hours);
  if (l.budget_node_hours) v = std::max(v, node_hours / *l.budget_node_hours);
  return v;
}

double node_hours(const MachineProfile& m, int gpus, double time_s, double gpu_hours) {
  return m.whole_nodes ? time_s / 3600.0 * std::ceil(double(gpus) / m.gpus_per_node) : gpu_hours / m.gpus_per_node;
}

SearchResult merge_results(std::vector<SearchResult> parts, const Constraints& limits, Objective objective, size_t keep) {
  SearchResult out;
  std::map<uint32_t, Candidate> per_template;
  std::map<uint32_t, std::vector<Candidate>> fronts;
  for (auto& r : parts) {
    out.best.insert(out.best.end(), r.best.begin(), r.best.end());
    for (const auto& c : r.per_template_best)
      if (!per_template.count(c.template_index) || ranks_before(c, per_template[c.template_index], objective)) per_template[c.template_index] = c;
    for (const auto& c : r.front) add_to_front(fronts[c.template_index], c);
    if (r.nearest) {
      const double v = violation(*r.nearest, limits), w = out.nearest ? violation(*out.nearest, limits) : 0;
      if (!out.nearest || v < w || (v == w && r.nearest->order < out.nearest->order)) out.nearest = r.nearest;
    }
    out.counts.evaluated += r.counts.evaluated, out.counts.no_memory += r.counts.no_memory;
    out.counts.too_few_samples += r.counts.too_few_samples, out.counts.bad_gpus += r.counts.bad_gpus;
    out.counts.beyond_batch += r.counts.beyond_batch;
    out.counts.not_reached += r.counts.not_reached, out.counts.violating += r.counts.violating;
  }
  std::sort(out.best.begin(), out.best.end(), [&](const Candidate& a, const Candidate& b) { return ranks_before(a, b, objective); });
  if (out.best.size() > keep) out.best.resize(keep);
  for (const auto& [t, c] : per_template) out.per_template_best.push_back(c);
  for (const auto& [t, f] : fronts) out.front.insert(out.front.end(), f.begin(), f.end());
  return out;
}

SearchResult search_plans(const SearchSpace& space, const MachineProfile& machine, const Constraints& limits, Objective objective,
                          size_t keep, SearchPart part, unsigned threads, const SearchProgress& progress, const CandidateSink& sink) {
  check_space(space);
  const auto all = units_of(space);
  std::vector<uint64_t> mine;
  for (uint64_t u = 0; u < all.size(); ++u)
    if (static_cast<int>(u % part.parts) == part.index) mine.push_back(u);
  const unsigned n = threads_for(mine.size(), threads);
  std::atomic<size_t> done{0};
  std::mutex mu, sink_mu;
  std::vector<Keeper> keepers(n, Keeper(limits, objective, keep, &sink, &sink_mu));
  parallel_for(mine.size(), n, [&](size_t k, unsigned w) {
    search_unit(space, all[mine[k]], mine[k], machine, objective, keepers[w]);
    const size_t d = ++done;
    if (progress) {
      std::lock_guard<std::mutex> lock(mu);
      progress(d, mine.size());
    }
  });
  std::vector<SearchResult> parts;
  for (auto& k : keepers) parts.push_back(k.take());
  return merge_results(std::move(parts), limits, objective, keep);
}

Plan plan_of(const SearchSpace& space, const Candidate& c) {
  Plan p = unit_plan(space, {c.template_index, c.gpus, c.low_fraction});
  for (size_t i = 0; i < p.stages.size(); ++i) set_stage_batch(p, i, c.local_batch[i]);
  if (c.switch_epoch)
    for (size_t i = 0; i < p.stages.size(); ++i)
      for (size_t j = 0; j < p.stages[i].models.size(); ++j) {
        if (!sweep_moves(p, i, j)) continue;
        auto& stop = p.stages[i].models[j].stop;
        const int max_epochs = std::max(stop.max_epochs, static_cast<int>(std::ceil(*c.switch_epoch)));
        stop = StopRule{};
        stop.kind = StopRule::Kind::epochs;
        stop.epochs = *c.switch_epoch;
        stop.max_epochs = max_epochs;
      }
  p.source_file.clear();
  return p;
}

}  // namespace mrplan
