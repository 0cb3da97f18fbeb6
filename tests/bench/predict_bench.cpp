// Prediction throughput: one full plan prediction (layer tables, timeline, record) and the
// per-point cost inside a sweep (a prepared plan evaluated at many switch points).
#include <benchmark/benchmark.h>

#include "calibrate/calibrated_builtins.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/optimize.hpp"
#include "sim/search_space.hpp"
#include "sim/simulate.hpp"
#include "sim/sweep.hpp"

using namespace mrplan;

static void BM_FullPredictionCosmoflow(benchmark::State& state) {
  const auto& m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("cosmoflow-mrt@summit");
  for (auto _ : state) benchmark::DoNotOptimize(simulate(p, m));
}
BENCHMARK(BM_FullPredictionCosmoflow)->Unit(benchmark::kMicrosecond);

static void BM_FullPredictionDeepcam(benchmark::State& state) {
  const auto& m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("deepcam-mrt@summit");
  for (auto _ : state) benchmark::DoNotOptimize(simulate(p, m));
}
BENCHMARK(BM_FullPredictionDeepcam)->Unit(benchmark::kMillisecond);

static void BM_FullPredictionCosmoflowMrmfTwoFusions(benchmark::State& state) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  const Plan p = builtin_plan("cosmoflow-mrmf2@perlmutter");
  for (auto _ : state) benchmark::DoNotOptimize(simulate(p, m));
}
BENCHMARK(BM_FullPredictionCosmoflowMrmfTwoFusions)->Unit(benchmark::kMicrosecond);

// An MRMF plan's stage lengths swept against a prepared plan: every point re-chains the fusions' progress.
static void BM_Sweep100kMrmfPointsOneThread(benchmark::State& state) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  const auto pp = prepare(builtin_plan("cosmoflow-mrmf2@perlmutter"), m);
  for (auto _ : state) {
    double sink = 0;
    for (int i = 0; i < 100000; ++i) sink += totals(pp, model_epochs(pp, 1.0 + (i % 1000) * 0.1)).time_s;
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_Sweep100kMrmfPointsOneThread)->Unit(benchmark::kMillisecond);

// 100,000 switch points on one thread against a prepared plan: the sweep's inner loop.
static void BM_Sweep100kPointsOneThread(benchmark::State& state) {
  const auto& m = calibrated_builtin_profile("summit");
  const auto pp = prepare(builtin_plan("cosmoflow-mrt@summit"), m);
  double sink = 0;
  for (auto _ : state) {
    for (int i = 0; i < 100000; ++i) {
      const double s = 1.0 + (i % 1000) * 0.1;
      sink += totals(pp, model_epochs(pp, s)).time_s;
    }
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_Sweep100kPointsOneThread)->Unit(benchmark::kMillisecond);

// The same through run_sweep (task split, baseline and rule points included), one thread.
static void BM_RunSweep100kOneThread(benchmark::State& state) {
  const auto& m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("cosmoflow-mrt@summit");
  SweepSpec spec;
  spec.gpus = {32};
  for (int i = 0; i < 100000; ++i) spec.switch_epochs.push_back(1.0 + (i % 1000) * 0.1);
  for (auto _ : state) benchmark::DoNotOptimize(run_sweep(p, m, spec, 1));
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_RunSweep100kOneThread)->Unit(benchmark::kMillisecond);

// A whole optimizer search on one thread, with the candidates it covered and evaluated.
static void run_search(benchmark::State& state, const SearchSpace& space, const MachineProfile& m) {
  SearchCounts counts;
  for (auto _ : state) counts = search_plans(space, m, {}, Objective::time, 100).counts;
  const double all = double(counts.evaluated + counts.no_memory + counts.too_few_samples + counts.bad_gpus);
  state.counters["candidates"] = all;
  state.counters["evaluated"] = double(counts.evaluated);
  state.counters["candidates_per_s"] = benchmark::Counter(all, benchmark::Counter::kIsIterationInvariantRate);
}

// `mrplan optimize cosmoflow@perlmutter`'s default space: baseline, MRT, MRMF with one and two
// fusions x 4..4096 GPUs x local batch 1..64 per stage x 200 switch points and the rule's own.
static void BM_OptimizeDefaultSpaceOneThread(benchmark::State& state) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  run_search(state, default_space(builtin_templates("cosmoflow", "perlmutter", {Method::baseline, Method::mrt, Method::mrmf}), m), m);
}
BENCHMARK(BM_OptimizeDefaultSpaceOneThread)->Unit(benchmark::kMillisecond);

// The space issue 18 sizes at about 10^7: baseline, MRT, one-fusion MRMF x 8..4096 GPUs x local
// batch 1..64 per stage x 200 switch points.
static void BM_OptimizeTenMillionOneThread(benchmark::State& state) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  auto space = default_space({builtin_plan("cosmoflow-baseline@perlmutter"), builtin_plan("cosmoflow-mrt@perlmutter"),
                              builtin_plan("cosmoflow-mrmf@perlmutter")}, m);
  space.gpus = doubling_values(8, 4096);
  run_search(state, space, m);
}
BENCHMARK(BM_OptimizeTenMillionOneThread)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
