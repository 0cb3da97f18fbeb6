#pragma once
// Faults on demand, for the fault-injection tests (ctest label `faults`): MRPLAN_FAULT names a point,
// which occurrence of it in this process, what to do there and, optionally, on which rank:
//   MRPLAN_FAULT=checkpoint-write:3:kill       SIGKILL at the third durable file write
//   MRPLAN_FAULT=checkpoint-write:1:enospc     the first durable write fails as on a full disk
//   MRPLAN_FAULT=before-publish:2:kill         SIGKILL before the second checkpoint's rename
//   MRPLAN_FAULT=after-publish:1:kill          SIGKILL right after the first checkpoint's rename
//   MRPLAN_FAULT=step:5:stop:1                 rank 1 stops itself (SIGSTOP) at its fifth step
//   MRPLAN_FAULT=step:3:error:1                rank 1 meets an input error (as a bad sample) at its third step
// Unset (always, outside tests): every call is one comparison. Torch-free.
#include <string>

namespace mrplan {

enum class FaultAction { none, kill, stop, enospc, error };

// The action due at this occurrence of `point` on world rank `rank` (counted per process).
FaultAction fault_at(const std::string& point, int rank = 0);
// Carries out kill, stop and error (throws InputError); enospc is the caller's to simulate.
void act_on(FaultAction action);

}  // namespace mrplan
