#pragma once
// `mrplan validate`: re-predict the plan of every measured Record and compare, per stage and per
// quantity, measured with predicted.
#include <string>
#include <vector>

#include "model/error_summary.hpp"
#include "model/machine_profile.hpp"
#include "model/record.hpp"

namespace mrplan {

struct ValidationRow {
  std::string record;    // file it came from
  std::string stage;     // stage name, or "total"
  std::string quantity;  // io_s comm_s compute_s epoch_s, and forward_s backward_s optimizer_s where the record timed them (means per epoch); epochs, time_to_target_s;
                         // device_matmul_flops_per_s (the run's probe against the profile's peak) where the record has one;
                         // staging_s where the record or the plan stages its data
  double measured = 0, predicted = 0;
  double rel_error = 0;  // (predicted - measured) / measured; 0 when measured is 0
  bool used_for_calibration = false;
};

struct NamedRecord {
  std::string file;
  Record record;
};

// Per-epoch components are predicted for the measured number of epochs, so they test the cost
// models alone. Where the profile predicts validation passes (compute.inference_factor) epoch and
// end-to-end times include them and `eval_s` compares them; elsewhere measured times leave them
// out. `epochs` and `time_to_target_s` include the convergence model. A record counts
// as used for calibration when a fitted parameter of `profile` names its file as its source.
std::vector<ValidationRow> validate_records(const std::vector<NamedRecord>& measured, const MachineProfile& profile);

// The machine's drift between calibration and the runs: each run's matmul probe over the profile's
// peak (records used for calibration left out).
struct DriftSummary {
  int runs = 0;
  double median_ratio = 0, min_ratio = 0, max_ratio = 0;  // run / calibration
};
DriftSummary machine_drift(const std::vector<ValidationRow>& rows);

ErrorSummary summarize_validation(const std::vector<ValidationRow>& rows, const std::vector<std::string>& quantities);
std::string validation_csv(const std::vector<ValidationRow>& rows);

}  // namespace mrplan
