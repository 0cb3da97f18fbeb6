#pragma once
// The plan optimizer: every method template x GPU count x local batch per stage x switch point (MRT)
// or stage length and GPU split (MRMF), under the memory fit, the node granularity and the dataset
// size, keeping only the best (never every candidate in memory) and the time / GPU-hours front.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

enum class Objective { time, gpu_hours, node_hours };
const char* to_string(Objective o);

struct SearchSpace {
  std::vector<Plan> templates;         // one plan per method (or variant) searched, in this order
  std::vector<int> gpus;               // GPU counts (every model's share moves with it)
  std::vector<int> local_batches;      // per stage (MRMF: one for the fusion stages, one for the fine-tuning)
  std::vector<double> switch_epochs;   // MRT: coarse epochs; MRMF: every fusion stage's lower-resolution model's
  std::vector<double> low_fractions;   // MRMF: share of a fusion stage's GPUs on its lower model; empty: the template's
  bool rule_points = true;             // also the switch rule's own choice (the template's stop)
  std::optional<double> max_global_batch;  // a model's global batch above it is not searched
};

struct Constraints {
  std::optional<double> deadline_s, budget_gpu_hours, budget_node_hours;
};
// How far a plan's numbers break the limits: the largest ratio to a limit (above 1: broken).
double violation(const Constraints& limits, double time_s, double gpu_hours, double node_hours);

constexpr size_t kMaxSearchStages = 4;
struct Candidate {
  uint32_t template_index = 0;
  int gpus = 0;
  std::array<int, kMaxSearchStages> local_batch{};  // per stage of the template
  std::optional<double> switch_epoch;  // forced; none: the template's own stops
  std::optional<double> low_fraction;  // MRMF split; none: the template's
  double time_s = 0, io_s = 0, comm_s = 0, compute_s = 0, other_s = 0, gpu_hours = 0, node_hours = 0;
  double memory_bytes = 0;  // the largest per GPU over the plan's models
  bool reached_target = false;
  uint64_t order = 0;       // place in the search order: ties go to the earlier, on any partition
};

// Where a search stands: counts over the part it searched.
struct SearchCounts {
  uint64_t evaluated = 0;        // candidates whose time was predicted
  uint64_t no_memory = 0;        // left out: a model does not fit its GPU's memory
  uint64_t too_few_samples = 0;  // left out: a global batch larger than the training set
  uint64_t beyond_batch = 0;     // left out: a global batch above SearchSpace::max_global_batch
  uint64_t bad_gpus = 0;         // left out: a GPU count that is neither a share of a node nor whole nodes
  uint64_t not_reached = 0;      // predicted, but never reaches the target
  uint64_t violating = 0;        // reach the target but break a constraint
};

struct SearchResult {
  std::vector<Candidate> best;     // by objective, the `keep` best configurations (template, GPUs, split,
                                   // batches; each at its best switch point) that meet the constraints
  std::vector<Candidate> per_template_best;  // the best of each template that meets them (for "why")
  std::vector<Candidate> front;    // each template's time vs GPU-hours front (of the candidates that
                                   // reach the target), by template, then by time
  std::optional<Candidate> nearest;  // the candidate that breaks the constraints least (for the message)
  SearchCounts counts;
};

double objective_value(const Candidate& c, Objective o);
// Whether `a` ranks before `b`: lower objective, then earlier in the search order.
bool ranks_before(const Candidate& a, const Candidate& b, Objective o);

struct SearchPart {
  int index = 0, parts = 1;  // this process's share of the space (MPI rank, size)
};
using SearchProgress = std::function<void(size_t units_done, size_t units)>;
// Sees every candidate evaluated, in batches, one call at a time (a CSV of the whole space).
using CandidateSink = std::function<void(const std::vector<Candidate>&)>;
SearchResult search_plans(const SearchSpace& space, const MachineProfile& machine, const Constraints& limits,
                          Objective objective, size_t keep, SearchPart part = {}, unsigned threads = 1,
                          const SearchProgress& progress = {}, const CandidateSink& sink = {});

// Node-hours of a run on `gpus` GPUs: whole nodes where the machine allocates them, else a share.
double node_hours(const MachineProfile& m, int gpus, double time_s, double gpu_hours);
// Merges the results of the parts (in any order) into what one search over the whole space gives.
SearchResult merge_results(std::vector<SearchResult> parts, const Constraints& limits, Objective objective, size_t keep);

// The candidate as an ordinary plan: `predict` of it gives the candidate's numbers.
Plan plan_of(const SearchSpace& space, const Candidate& c);

}  // namespace mrplan
