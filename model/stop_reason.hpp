#pragma once
// Why a model's training in a stage ended: one vocabulary for the simulator, the executor and the
// log reader, kept in a Record as its text.
#include <optional>
#include <string>

namespace mrplan {

enum class StopReason {
  none,                // still training (a resumed run's model that has not stopped)
  target_reached,      // the plan's target metric
  target_missed,       // max_epochs without the target (the simulator's dense stage)
  epochs,              // a fixed number of epochs
  iterations,          // a fixed iteration budget
  switch_rule,         // MRT's switch rule fired
  switch_never_fired,  // max_epochs without the switch rule firing
  plateau,             // the metric stopped improving
  forced_switch,       // a search's switch point (sim/simulate model_epochs)
  max_epochs,          // the stage's max_epochs
  logged,              // an ingested stage before the last: it ended where its log says
  run_success,         // an ingested run's last stage, its log's run_stop status
  run_aborted,
  unknown,             // an ingested log that gives no status
};

const char* to_string(StopReason r);
// The reason `text` names (as to_string writes it); nullopt for none of them.
std::optional<StopReason> stop_reason_from_string(const std::string& text);
// Every reason's text, for messages.
std::string stop_reason_names();

}  // namespace mrplan
