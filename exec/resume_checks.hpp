#pragma once
// What a run checks before it writes into a folder or continues a checkpoint: an output folder is
// never silently overwritten, and a resume continues the same plan on the same ranks unless --force
// names the fields that may change (recorded in the Record). exec-internal: includes torch.
#include <filesystem>
#include <string>
#include <vector>

#include "exec/checkpointer.hpp"
#include "exec/communicator.hpp"
#include "model/plan.hpp"

namespace mrplan {

// Refuses an `out` that holds a run (record.json, mllog.txt, checkpoints/) unless `overwrite`,
// which removes them first. Every rank calls it.
void claim_out_dir(const std::filesystem::path& out, bool overwrite, Communicator& world);

// The checkpoint's state, checked against the plan (`plan_yaml`: plan_to_yaml) and the ranks; the
// changes `force` allows are recorded in the returned state's record.
RunState resumable_state(const Plan& plan, const std::string& plan_yaml, const LoadedRun& loaded, int ranks,
                         const std::vector<std::string>& force);

}  // namespace mrplan
