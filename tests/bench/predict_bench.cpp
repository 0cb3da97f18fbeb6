// Prediction throughput: one full plan prediction (layer tables, timeline, record) and the
// per-point cost inside a sweep (a prepared plan evaluated at many switch points).
#include <benchmark/benchmark.h>

#include "calibrate/paper_calibration.hpp"
#include "sim/builtin_plans.hpp"
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

BENCHMARK_MAIN();
