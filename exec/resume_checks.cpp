#include "exec/resume_checks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exec/durable_file.hpp"
#include "model/errors.hpp"
#include "model/plan_diff.hpp"

namespace mrplan {

namespace fs = std::filesystem;

void claim_out_dir(const fs::path& out, bool overwrite, Communicator& world) {
  std::vector<std::string> held;
  for (const char* name : {"record.json", "mllog.txt", "checkpoints"})
    if (fs::exists(out / name)) held.push_back(name);
  world.barrier();  // every rank looked before any removes
  if (held.empty()) return;
  if (!overwrite) {
    fail_input(out.string(), "", fmt::format("holds a run already ({}): resume it with --resume {}, or pass --overwrite to replace it",
                                             fmt::join(held, ", "), out.string()));
  }
  if (world.rank() == 0)
    for (const auto& h : held) {
      std::error_code ec;
      remove_tree(out / h, ec);
      if (ec) fail_input((out / h).string(), "", fmt::format("cannot be removed for --overwrite: {}", ec.message()));
    }
  world.barrier();
}

RunState resumable_state(const Plan& plan, const std::string& plan_yaml, const LoadedRun& loaded, int ranks,
                         const std::vector<std::string>& force) {
  const auto where = (loaded.dir / "MANIFEST.json").string();
  if (loaded.facts.ranks != ranks)
    fail_input(where, "ranks", fmt::format("the checkpoint was written by {} ranks but {} were launched", loaded.facts.ranks, ranks));
  RunState s = loaded.state;
  if (s.stage > plan.stages.size())
    fail_input(where, "stage", fmt::format("stage {} of a plan with {} stages", s.stage, plan.stages.size()));
  const auto changes = plan_changes(s.record.plan_spec, plan_yaml);
  const auto refused = changes_not_allowed(changes, force);
  if (!refused.empty()) {
    std::string list;
    for (const auto& c : refused) list += fmt::format("\n  {}: {} -> {}", c.path, c.was, c.now);
    fail_input(plan.source_file, "",
               fmt::format("differs from the plan the checkpoint in {} was trained with:{}\nresume with that plan, or name the fields "
                           "that may change: --force {}",
                           loaded.dir.parent_path().parent_path().string(), list, refused.front().path));
  }
  if (changes.empty()) return s;
  std::vector<std::string> paths;
  for (const auto& c : changes) {
    s.record.warnings.push_back(fmt::format("resumed with a changed plan (--force): {}: {} -> {}", c.path, c.was, c.now));
    paths.push_back(c.path);
  }
  s.record.provenance["resumed_with_changes"] = fmt::format("{}", fmt::join(paths, ", "));
  s.record.plan_spec = plan_yaml;
  return s;
}

}  // namespace mrplan
