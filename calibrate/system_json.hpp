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
};

SystemDescription system_from_json_text(const std::string& text, const std::string& file, const HardwareCatalogue& catalogue);
SystemDescription load_system_json(const std::string& path, const HardwareCatalogue& catalogue);

}  // namespace mrplan
