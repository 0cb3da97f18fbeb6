#pragma once
// mrplan's own keys in its MLPerf HPC logs, beside the standard ones: the trainer (exec) writes them
// and ingest-mllog (calibrate) reads them, from this one place.
namespace mrplan {

// the plan's method, before the first epoch (value: its name; metadata: the stage count)
inline constexpr const char* kMethodKey = "mrplan_method";
// a model starting in its stage (value: its ranks; metadata: stage, model, model_index, resolution, local_batch)
inline constexpr const char* kModelKey = "mrplan_model";
// a fusion stage's hand-off (value: the fusion's seconds; metadata: the stage)
inline constexpr const char* kFusionKey = "mrplan_fusion";
// where a resumed attempt began (model/time_to_target leaves the wait before it out)
inline constexpr const char* kResumeKey = "mrplan_resume";

}  // namespace mrplan
