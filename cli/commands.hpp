#pragma once
// One function per subcommand: it declares its options on `app` and sets its callback.
namespace CLI {
class App;
}

namespace mrplan {

void register_predict(CLI::App& app);
void register_sweep(CLI::App& app);
void register_optimize(CLI::App& app);
void register_show(CLI::App& app);   // plan, profile, workload
void register_study(CLI::App& app);
void register_validate(CLI::App& app);
void register_ingest_mllog(CLI::App& app);
void register_data(CLI::App& app);  // datagen, coarsen (exec builds only)
void register_run(CLI::App& app);   // run (exec builds only)
void register_calibrate(CLI::App& app);
void register_profile_compose(CLI::App& profile);  // profile compose
void register_jobscript(CLI::App& app);
void register_calibrate_compute(CLI::App& calibrate);
void register_calibrate_io(CLI::App& calibrate);
void register_calibrate_sharing(CLI::App& calibrate);
void register_calibrate_convergence(CLI::App& calibrate);
void register_calibrate_records(CLI::App& calibrate);
void register_calibrate_all(CLI::App& calibrate);  // calibrate allreduce (exec builds only)

}  // namespace mrplan
