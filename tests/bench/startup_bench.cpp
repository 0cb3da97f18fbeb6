// The command as a user meets it: `mrplan predict` from a fresh process (start-up, the built-in
// profile, the prediction, the output), stdout to /dev/null.
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace {

void run(std::vector<std::string> args, benchmark::State& state) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1 /* O_WRONLY */, 0);
  pid_t pid = 0;
  int status = 0;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0 || waitpid(pid, &status, 0) < 0 || status != 0)
    state.SkipWithError("mrplan failed");
  posix_spawn_file_actions_destroy(&fa);
}

void BM_ProcessPredictCosmoflowMrtSummit(benchmark::State& state) {
  for (auto _ : state) run({MRPLAN_BINARY, "predict", "cosmoflow-mrt@summit", "--samples", "0"}, state);
}
BENCHMARK(BM_ProcessPredictCosmoflowMrtSummit)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ProcessHelp(benchmark::State& state) {
  for (auto _ : state) run({MRPLAN_BINARY, "--help"}, state);
}
BENCHMARK(BM_ProcessHelp)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
