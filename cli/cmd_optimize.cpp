#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <thread>
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "cli/front_plot.hpp"
#include "cli/gnuplot.hpp"
#include "cli/inputs.hpp"
#include "cli/optimize_args.hpp"
#include "cli/output_file.hpp"
#include "cli/text_table.hpp"
#include "model/method_table.hpp"
#include "model/errors.hpp"
#include "model/launch_env.hpp"
#include "model/plan_yaml.hpp"
#include "sim/depth_warnings.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/search_space.hpp"
#include "sim/sweep.hpp"
#include "sim/simulate.hpp"
#ifdef MRPLAN_HAVE_EXEC
#include "cli/search_exchange.hpp"
#endif

namespace mrplan {

namespace {

struct OptimizeOpts {
  PlanEdits edits;
  std::string plan = "cosmoflow@perlmutter", methods, gpus, local_batch = "1:64", switches = "1:200", splits, deadline, budget, machine,
              out, csv, plot, staging, codecs, pretrained;
  Objective minimize = Objective::time;
  double confidence = 0.9, max_global_batch = -1;
  size_t top = 10, samples = 100;
  bool variants = false;  // list every batch and switch variant, not the best of each method, fusion count and GPU count
  uint64_t seed = 1;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
};

// A kept candidate with its spread under the profile's uncertainty.
struct Judged {
  Candidate c;
  Spread spread;
  double time_q = 0, gpu_hours_q = 0, node_hours_q = 0;  // at the requested confidence
  double objective_p50 = 0;
};

// Each stage's local batch, "8/4".
std::string batches_of(const SearchSpace& s, const Candidate& c) {
  std::string batches;
  for (size_t i = 0; i < s.templates[c.template_index].stages.size(); ++i) batches += (i ? "/" : "") + std::to_string(c.local_batch[i]);
  return batches;
}

std::string describe(const SearchSpace& s, const Candidate& c, const MachineProfile& m) {
  const Plan& t = s.templates[c.template_index];
  const std::string batches = batches_of(s, c);
  const double nodes = double(c.gpus) / m.gpus_per_node;
  std::string d = fmt::format("{} on {} GPUs ({:g} node{}), batch {}", t.name, c.gpus, nodes, nodes == 1 ? "" : "s", batches);
  if (method_row(t.method).has_switch) d += c.switch_epoch ? fmt::format(", switch {:g}", *c.switch_epoch) : ", switch by rule";
  if (c.low_fraction) d += fmt::format(", low share {:g}", *c.low_fraction);
  return d;
}

// The objective at one quantile of the draws (&Quantiles::p50, p90). A plan whose P50 is below the
// winner's P90 ties with it within the band (the draws cannot tell them apart).
double objective_at(const Judged& j, Objective o, const MachineProfile& m, double Quantiles::*q) {
  switch (o) {
    case Objective::time: return j.spread.time_to_target_s.*q;
    case Objective::gpu_hours: return j.spread.gpu_hours.*q;
    case Objective::node_hours: return node_hours(m, j.c.gpus, j.spread.time_to_target_s.*q, j.spread.gpu_hours.*q);
  }
  return 0;
}

// The best of each method, fusion count (a template) and GPU count, in rank order: the alternatives a
// user chooses between, not ten batch sizes of one plan.
std::vector<Judged> distinct_alternatives(const std::vector<Judged>& ranked) {
  std::vector<Judged> out;
  std::set<std::pair<size_t, int>> seen;
  for (const auto& j : ranked)
    if (seen.insert({j.c.template_index, j.c.gpus}).second) out.push_back(j);
  return out;
}

double objective_of(const Judged& j, Objective o, const MachineProfile& m) { return objective_at(j, o, m, &Quantiles::p50); }

// The kept candidates under the draws; at `confidence`, those that still meet the limits.
std::vector<Judged> judge(const SearchSpace& space, const std::vector<Candidate>& kept, const ProfileDraws& draws,
                          const MachineProfile& m, double confidence, Objective objective) {
  std::vector<Judged> out;
  for (const auto& c : kept) {
    Judged j{c, {}, c.time_s, c.gpu_hours, c.node_hours, 0};
    if (!draws.profiles.empty()) {
      j.spread = plan_spread(plan_of(space, c), draws, c.switch_epoch);
      j.time_q = quantile(j.spread.time_s, confidence);
      j.gpu_hours_q = quantile(j.spread.gpu_hour, confidence);
      j.node_hours_q = node_hours(m, c.gpus, j.time_q, j.gpu_hours_q);
    } else {
      j.spread.time_to_target_s = {c.time_s, c.time_s, c.time_s};
      j.spread.gpu_hours = {c.gpu_hours, c.gpu_hours, c.gpu_hours};
    }
    j.objective_p50 = objective_of(j, objective, m);
    out.push_back(std::move(j));
  }
  return out;
}

double violation_at(const Judged& j, const Constraints& l) { return violation(l, j.time_q, j.gpu_hours_q, j.node_hours_q); }

[[noreturn]] void no_plan(const SearchSpace& space, const SearchResult& r, const std::vector<Judged>& judged, const Constraints& l,
                          double confidence, const MachineProfile& m) {
  std::string limits;
  if (l.deadline_s) limits += fmt::format(" deadline {:.0f} s ({:.2f} h)", *l.deadline_s, *l.deadline_s / 3600);
  if (l.budget_gpu_hours) limits += fmt::format(" budget {:g} GPU-hours", *l.budget_gpu_hours);
  if (l.budget_node_hours) limits += fmt::format(" budget {:g} node-hours", *l.budget_node_hours);
  const int pct = static_cast<int>(std::lround(confidence * 100));
  if (!judged.empty()) {
    const auto& n = *std::min_element(judged.begin(), judged.end(),
                                      [&](const Judged& a, const Judged& b) { return violation_at(a, l) < violation_at(b, l); });
    fail_input("command line", "--deadline/--budget",
               fmt::format("no plan meets the{} at P{}: the nearest is {} (P{} time {:.0f} s, GPU-hours {:.1f})", limits, pct,
                           describe(space, n.c, m), pct, n.time_q, n.gpu_hours_q));
  }
  if (r.nearest)
    fail_input("command line", "--deadline/--budget",
               fmt::format("no plan meets the{}: the nearest is {} ({:.0f} s, {:.1f} GPU-hours predicted)", limits,
                           describe(space, *r.nearest, m), r.nearest->time_s, r.nearest->gpu_hours));
  fail_input("command line", "PLAN",
             fmt::format("none of the {} candidates reaches the target within its max_epochs ({} do not fit memory, {} need more samples "
                         "than the dataset has, {} GPU counts cannot be placed)",
                         r.counts.evaluated + r.counts.no_memory + r.counts.too_few_samples + r.counts.bad_gpus, r.counts.no_memory,
                         r.counts.too_few_samples, r.counts.bad_gpus));
}

void print_table(const SearchSpace& space, const std::vector<Judged>& ranked, const MachineProfile& m, double confidence, Objective objective) {
  const long pct = std::lround(confidence * 100);
  const bool own_column = pct != 10 && pct != 50 && pct != 90;
  const double winner_p90 = objective_at(ranked.front(), objective, m, &Quantiles::p90);
  std::vector<std::string> head{"#", "plan", "GPUs (nodes)", "batch", "switch", "P10 h", "P50 h", "P90 h", "P50 GPU-h", "P90 GPU-h", "node-h", "GB/GPU", "vs #1"};
  if (own_column) head.insert(head.begin() + 8, fmt::format("P{} h", pct));
  TextTable t(head);
  for (size_t i = 0; i < ranked.size(); ++i) {
    const auto& j = ranked[i];
    const Plan& tp = space.templates[j.c.template_index];
    const std::string batches = batches_of(space, j.c);
    const auto& q = j.spread.time_to_target_s;
    std::vector<std::string> row{std::to_string(i + 1), tp.name, fmt::format("{} ({:g})", j.c.gpus, double(j.c.gpus) / m.gpus_per_node), batches,
                                 !method_row(tp.method).has_switch ? "-" : j.c.switch_epoch ? fmt::format("{:g}", *j.c.switch_epoch) : "rule",
                                 fmt::format("{:.3g}", q.p10 / 3600), fmt::format("{:.3g}", q.p50 / 3600), fmt::format("{:.3g}", q.p90 / 3600),
                                 fmt::format("{:.3g}", j.spread.gpu_hours.p50), fmt::format("{:.3g}", j.spread.gpu_hours.p90),
                                 fmt::format("{:.3g}", node_hours(m, j.c.gpus, q.p50, j.spread.gpu_hours.p50)),
                                 fmt::format("{:.1f}", j.c.memory_bytes / 1e9),
                                 i == 0 ? "-"
                                        : fmt::format("{:+.0f}%{}", 100 * (j.objective_p50 / ranked.front().objective_p50 - 1),
                                                      j.objective_p50 <= winner_p90 ? " tie" : "")};
    if (own_column) row.insert(row.begin() + 8, fmt::format("{:.3g}", j.time_q / 3600));
    t.add(row);
  }
  fmt::print("{}", t.str());
}

// The winner's split of time against the best plan of every other method (point predictions).
void print_why(const SearchSpace& space, const Candidate& w, const SearchResult& r, const MachineProfile& m) {
  fmt::print("\nwhy it wins (point predictions, seconds):\n");
  TextTable t({"plan", "time", "I/O", "comm", "compute", "eval+fusion", "GPU-h"});
  auto row = [&](const Candidate& c, const std::string& who) {
    t.add({who, fmt::format("{:.0f}", c.time_s), fmt::format("{:.0f}", c.io_s), fmt::format("{:.0f}", c.comm_s), fmt::format("{:.0f}", c.compute_s),
           fmt::format("{:.0f}", c.other_s), fmt::format("{:.3g}", c.gpu_hours)});
  };
  row(w, "chosen: " + describe(space, w, m));
  for (const auto& c : r.per_template_best)
    if (c.template_index != w.template_index) row(c, "best " + describe(space, c, m));
  fmt::print("{}", t.str());
}

std::string csv_header() {
  return "template,gpus,local_batch,switch_epoch,low_fraction,time_s,io_s,comm_s,compute_s,eval_fusion_s,gpu_hours,node_hours,"
         "memory_GB,reached_target\n";
}

std::string csv_line(const SearchSpace& s, const Candidate& c) {
  const std::string batches = batches_of(s, c);
  return fmt::format("{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.4g},{}\n", s.templates[c.template_index].name, c.gpus,
                     batches, c.switch_epoch ? fmt::format("{:g}", *c.switch_epoch) : "", c.low_fraction ? fmt::format("{:g}", *c.low_fraction) : "",
                     c.time_s, c.io_s, c.comm_s, c.compute_s, c.other_s, c.gpu_hours, c.node_hours, c.memory_bytes / 1e9, c.reached_target);
}

// With no critical batch fitted, epochs to target at a global batch far from the curves' own are a
// guess (sim/depth_warnings): the search stays within kBatchExtrapolation of it unless told otherwise.
std::optional<double> batch_cap(const OptimizeOpts& o, const MachineProfile& m, const std::string& workload, std::string& note) {
  if (o.max_global_batch == 0) return std::nullopt;
  if (o.max_global_batch > 0) return o.max_global_batch;
  const auto it = m.convergence.find(workload);
  if (it == m.convergence.end() || it->second.critical_batch > 0) return std::nullopt;
  const double cap = kBatchExtrapolation * it->second.reference_global_batch;
  note = fmt::format("global batches kept <= {:g}, {:g}x the batch the curves of {} were fitted at: no critical batch is known beyond it "
                     "(--max-global-batch N to change, 0 for none)",
                     cap, kBatchExtrapolation, workload);
  return cap;
}

SearchSpace space_from(const OptimizeOpts& o, const MachineProfile& m, std::vector<Plan> templates) {
  SearchSpace s = default_space(std::move(templates), m);
  if (!o.gpus.empty()) s.gpus = parse_int_axis(o.gpus, "--gpus", true);
  s.local_batches = parse_int_axis(o.local_batch, "--local-batch", false);
  s.switch_epochs.clear();
  for (int e : parse_int_axis(o.switches, "--switch", false)) s.switch_epochs.push_back(e);
  if (!o.splits.empty()) s.low_fractions = parse_range(o.splits, "--split");
  return s;
}

// The MPI ranks sharing the search, when it was launched under mpirun/srun (one process otherwise).
SearchPart launch_part() {
  if (const int n = detect_launch().size; n > 1) return {-1, n};
  return {};
}

// The limits a plan must keep at the confidence asked (--deadline, --budget), the options checked.
Constraints limits_from(const OptimizeOpts& o) {
  Constraints limits;
  if (!o.deadline.empty()) limits.deadline_s = parse_duration_s(o.deadline, "--deadline");
  if (!o.budget.empty()) parse_budget(o.budget, limits);
  if (!(o.confidence > 0 && o.confidence < 1))
    fail_input("command line", "--confidence", "expected a probability between 0 and 1, e.g. 0.9");
  if (o.top < 1) fail_input("command line", "--top", "expected 1 or more");
  return limits;
}

// --csv's file: one per rank where ranks share the search.
std::string csv_file(const OptimizeOpts& o, const SearchPart& part) {
  return part.parts > 1 ? fmt::format("{}.{}", o.csv, part.index) : o.csv;
}

// Every candidate's line goes here (--csv), its header written; none without --csv.
std::unique_ptr<std::ofstream> open_csv(const OptimizeOpts& o, const SearchPart& part) {
  if (o.csv.empty()) return nullptr;
  const auto file = csv_file(o, part);
  if (auto dir = std::filesystem::path(file).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
  auto csv = std::make_unique<std::ofstream>(file);
  if (!*csv) fail_input("command line", "--csv", fmt::format("cannot write {}", file));
  *csv << csv_header();
  return csv;
}

std::vector<std::string> template_names(const SearchSpace& space) {
  std::vector<std::string> names;
  for (const auto& t : space.templates) names.push_back(t.name);
  return names;
}

// The search's best judged under the draws: those that keep the limits at the confidence asked, by
// their P50 (distinct alternatives unless --variants), at most --top; none refused with why (no_plan).
std::vector<Judged> ranked_plans(const OptimizeOpts& o, const SearchSpace& space, const SearchResult& result, const ProfileDraws& draws,
                                 const MachineProfile& machine, const Constraints& limits, Objective objective) {
  const auto judged = judge(space, result.best, draws, machine, o.confidence, objective);
  std::vector<Judged> ranked;
  for (const auto& j : judged)
    if (violation_at(j, limits) <= 1) ranked.push_back(j);
  if (ranked.empty()) no_plan(space, result, judged, limits, o.confidence, machine);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Judged& a, const Judged& b) { return a.objective_p50 < b.objective_p50; });
  if (!o.variants) ranked = distinct_alternatives(ranked);
  if (ranked.size() > o.top) ranked.resize(o.top);
  return ranked;
}

// How many candidates the search saw, and why those it set aside were.
void print_search_counts(const SearchSpace& space, const MachineProfile& machine, const SearchCounts& n, double search_s, int ranks,
                         int threads) {
  fmt::print(
      "optimize {} on {}: {} candidates in {:.2f} s ({} ranks x {} threads): {} predicted, {} do not fit memory, {} exceed the "
      "dataset, {} above the batch limit, {} GPU counts not placeable, {} never reach the target, {} break the limits\n",
      fmt::join(template_names(space), ", "), machine.name, n.evaluated + n.no_memory + n.too_few_samples + n.beyond_batch + n.bad_gpus,
      search_s, ranks, threads, n.evaluated, n.no_memory, n.too_few_samples, n.beyond_batch, n.bad_gpus, n.not_reached, n.violating);
}

// --out: the chosen plan, named for what was chosen, and the command that reproduces its P50.
void write_chosen_plan(const OptimizeOpts& o, const SearchSpace& space, const Judged& chosen, const MachineProfile& machine) {
  Plan best = plan_of(space, chosen.c);
  best.name = describe(space, chosen.c, machine);
  write_output(o.out, plan_to_yaml(best), "plan file");
  fmt::print("wrote the chosen plan to {}: mrplan predict {} --samples {} --seed {} reproduces its P50 {:.1f} s, {:.2f} GPU-hours\n", o.out,
             o.out, o.samples, o.seed, chosen.spread.time_to_target_s.p50, chosen.spread.gpu_hours.p50);
}

// The plans the command line names (the methods of one application), edited, with their data paths.
std::vector<Plan> templates_for(const OptimizeOpts& o) {
  auto templates = search_templates(o.plan, o.methods.empty() ? std::vector<Method>{} : parse_methods(o.methods), o.pretrained);
  if (!o.machine.empty())
    for (auto& t : templates) t.machine = o.machine;
  for (auto& t : templates) t = edited(t, o.edits);
  return with_data_paths(templates, o.staging, o.codecs);
}

struct Searched {
  SearchResult result;
  double search_s = 0;
  size_t csv_lines = 0;
};

// Every candidate predicted, this process's part of them (under mpirun, one part a rank, the kept
// ones gathered), each written to --csv as it is.
Searched search_all(const OptimizeOpts& o, const SearchSpace& space, const MachineProfile& machine, const Constraints& limits,
                    SearchPart& part) {
#ifdef MRPLAN_HAVE_EXEC
  std::unique_ptr<Communicator> comm;
  if (part.parts > 1) comm = make_mpi_communicator(), part = {comm->rank(), comm->size()};
#else
  if (part.parts > 1) fail_input("command line", "launcher", "this build has no MPI (configured without the execution backend): run one process");
#endif
  auto csv = open_csv(o, part);
  // judged under the draws (the rest never held); wide enough for distinct alternatives among batch variants
  const size_t keep = std::max<size_t>(o.top * 20, 200);
  Searched out;
  const auto t0 = std::chrono::steady_clock::now();
  out.result = search_plans(
      space, machine, limits, o.minimize, keep, part, o.threads,
      [&](size_t d, size_t n) {
        if (part.index == 0) print_progress("optimize", d, n, "configurations");
      },
      csv ? CandidateSink([&](const std::vector<Candidate>& cs) {
        for (const auto& c : cs) *csv << csv_line(space, c);
        out.csv_lines += cs.size();
      })
          : CandidateSink{});
#ifdef MRPLAN_HAVE_EXEC
  if (comm) out.result = merge_results(allgather_results(*comm, out.result), limits, o.minimize, keep);
#endif
  out.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (csv) csv->flush();
  return out;
}

// The kept plans judged under the profile's draws, best first, what made the winner win, and the
// chosen plan written (--out) and plotted (--plot).
void report(const OptimizeOpts& o, const SearchSpace& space, const SearchResult& result, const MachineProfile& machine,
            const std::string& workload, const Constraints& limits) {
  const auto draws = draw_profiles(machine, workload, o.samples, o.seed);
  const auto ranked = ranked_plans(o, space, result, draws, machine, limits, o.minimize);
  fmt::print("best {} {}by {} (P50 over {} draws, seed {}; limits at P{}; \"tie\": within #1's P90):\n", ranked.size(),
             o.variants ? "" : "methods, fusion counts and GPU counts ", to_string(o.minimize), draws.profiles.size(), o.seed,
             std::lround(o.confidence * 100));
  print_table(space, ranked, machine, o.confidence, o.minimize);
  const auto& winner = ranked.front().c;
  print_why(space, winner, result, machine);
  for (const auto& note : draws.notes) fmt::print("note: {}\n", note);
  for (const auto& w : simulate(plan_of(space, winner), machine).warnings) fmt::print("warning (chosen plan): {}\n", w);
  if (const auto why = spread_by_source(plan_of(space, winner), machine, workload, o.samples, o.seed, ranked.front().spread); !why.empty())
    fmt::print("spread (chosen plan): {}\n", why);
  if (!o.out.empty()) write_chosen_plan(o, space, ranked.front(), machine);
  if (o.plot.empty()) return;
  if (auto dir = std::filesystem::path(o.plot).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
  if (run_gnuplot(front_plot_script(result.front, template_names(space), &winner, limits, "time vs GPU-hours on " + machine.name, o.plot),
                  o.plot))
    fmt::print("wrote {}\n", o.plot);
}

void optimize(const OptimizeOpts& o) {
  auto templates = templates_for(o);
  const auto machine = edited(machine_for(templates.front(), o.machine), o.edits);
  SearchSpace space = space_from(o, machine, std::move(templates));
  const std::string workload = plan_network(space.templates.front()).name;
  std::string cap_note;
  space.max_global_batch = batch_cap(o, machine, workload, cap_note);
  const Constraints limits = limits_from(o);
  SearchPart part = launch_part();
  const auto searched = search_all(o, space, machine, limits, part);
  if (part.index != 0) return;
  print_search_counts(space, machine, searched.result.counts, searched.search_s, part.parts, o.threads);
  if (!cap_note.empty()) fmt::print("note: {}\n", cap_note);
  report(o, space, searched.result, machine, workload, limits);
  if (!o.csv.empty())  // every candidate is a line: say how big that is (millions of lines for a wide search)
    fmt::print("wrote every candidate to {}{}: {} lines, {:.1f} MB{}\n", o.csv, part.parts > 1 ? ".<rank>" : "", searched.csv_lines + 1,
               std::filesystem::file_size(csv_file(o, part)) / 1e6, part.parts > 1 ? " (this rank's)" : "");
}

}  // namespace

void register_optimize(CLI::App& app) {
  auto* cmd = app.add_subcommand("optimize", "The best plan for a goal, with its spread: methods x GPUs x batches x switch points");
  auto o = std::make_shared<OptimizeOpts>();
  cmd->add_option("plan", o->plan, "APP@MACHINE (every method's built-in plan) or a plan file (its method and its baseline)")->capture_default_str();
  cmd->add_option("--methods", o->methods,
                  fmt::format("methods to search, comma separated ({}; default: every one APP has, transfer with --pretrained, or a plan "
                              "file's own and its baseline)",
                              method_names()));
  cmd->add_option("--pretrained", o->pretrained,
                  "a model trained on related data (an earlier run's model.pt): transfer learning from it is searched too");
  cmd->add_option("--gpus", o->gpus, "GPU counts: A:B doubling from A, A:B:STEP or A,B,C (default: one node to 4096 GPUs, doubling)");
  cmd->add_option("--local-batch", o->local_batch, "local batches per stage: A:B every one, A:B:STEP or A,B,C")->capture_default_str();
  cmd->add_option("--switch", o->switches, "MRT: coarse epochs before the switch; MRMF: each fusion stage's length (the rule's own choice "
                                           "is searched too)")
      ->capture_default_str();
  cmd->add_option("--staging", o->staging, "data placements to try, e.g. none,nearest (default: the plans' own; docs/cost-models.md)");
  cmd->add_option("--codecs", o->codecs, "sample codecs to try, CODEC or CODEC:host|device, e.g. raw,lut:device (the profile needs their rates)");
  cmd->add_option("--split", o->splits, "MRMF: shares of a fusion stage's GPUs on its lower-resolution model, e.g. 0.25,0.5");
  add_choice_option(cmd, "--minimize", o->minimize, {Objective::time, Objective::gpu_hours, Objective::node_hours}, "an objective",
                    "what the best plan has least of");
  cmd->add_option("--deadline", o->deadline, "time to target at the confidence, e.g. 2h, 90m, 3600s");
  cmd->add_option("--budget", o->budget, "GPU-hours or node-hours at the confidence, e.g. 500gpu-h, 40node-h");
  cmd->add_option("--confidence", o->confidence, "the quantile the limits hold at")->capture_default_str();
  cmd->add_option("--top", o->top, "plans to list")->capture_default_str();
  cmd->add_flag("--variants", o->variants, "list every batch and switch variant (default: the best of each method, fusion count and GPU count)");
  cmd->add_option("--samples", o->samples, "Monte Carlo draws per listed plan (0: point predictions)")
      ->check(CLI::Range(size_t{0}, kMaxDraws))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the draws")->capture_default_str();
  cmd->add_option("--max-global-batch", o->max_global_batch,
                  "largest global batch searched (0: none; default: 4x the learning curves' batch where no critical batch is known)")
      ->check(CLI::Range(0.0, 2147483647.0));
  cmd->add_option("--machine", o->machine, "override the plans' machine (built-in name or profile YAML)");
  add_plan_edit_options(cmd, o->edits, false);
  cmd->add_option("--out", o->out, "write the chosen plan here as a plan file");
  cmd->add_option("--csv", o->csv, "write every candidate predicted here (under MPI: FILE.RANK)");
  cmd->add_option("--plot", o->plot, "write the time / GPU-hours front here (PNG, gnuplot)");
  cmd->add_option("--threads", o->threads, "worker threads per rank (default: all cores)")->check(CLI::Range(1, 4096));
  cmd->callback([o] { optimize(*o); });
}

}  // namespace mrplan
