#pragma once
// An MLPerf submission's system description (SUBMITTER/systems/SYSTEM.json, the MLCommons system
// description fields) read into the parts `profile compose` takes, each matched against the hardware
// catalogue. The fields are free text: a part no catalogue entry matches, or that the description
// does not give, is left for the user's flags, with the reason.
#include <map>
#include <string>

#include "calibrate/compose_profile.hpp"

namespace mrplan {

struct SystemDescription {
  ComposeRequest request;                     // the parts it names; one it does not name stays empty
  std::map<std::string, std::string> unread;  // compose flag -> why the description does not give it
  std::string software;                       // its "framework" field as software_name gives it (the code's, not the machine's)
};

// The ML framework a description's "framework" field names, without versions or build tags, lower case:
// "PyTorch NVIDIA Release 22.08" -> "pytorch nvidia release" (NVIDIA's NGC build), "PyTorch 1.13.0a+d321be6"
// and "torch/1.8.0a0+56b43f4" -> "pytorch", "tensorflow/2.1.0 py37_..." -> "tensorflow". Empty for none.
std::string software_name(const std::string& framework_field);

SystemDescription system_from_json_text(const std::string& text, const std::string& file, const HardwareCatalogue& catalogue);
SystemDescription load_system_json(const std::string& path, const HardwareCatalogue& catalogue);

// The submission's system description for a result log (or its folder) where the MLPerf HPC results
// repositories' layout puts it: SUBMITTER/systems/SYSTEM.json beside SUBMITTER/results/SYSTEM/{strong,weak}/
// BENCHMARK/result_N.txt, or beside SUBMITTER/SYSTEM/BENCHMARK as ../shared/mlperf-logs keeps them. Empty
// where there is none.
std::string system_json_beside(const std::string& log_or_folder);

// The ML framework (software_name) a system description names; empty where `system_json` is empty or
// will not read (the logs beside it are read without it).
std::string software_in(const std::string& system_json);
// software_in(system_json_beside(log_or_folder)).
std::string software_beside(const std::string& log_or_folder);

}  // namespace mrplan
