#pragma once
// JSON as the readers of public files take it: JSON allows a key twice in one object and readers
// then keep one silently; a log line or a system description that does so is ambiguous, and refused.
#include <nlohmann/json.hpp>
#include <string>

namespace mrplan {

// `text` parsed; InputError "FILE: WHERE: ..." for malformed JSON ("MALFORMED: why"), a number beyond
// double, or a key given twice in one object (named).
nlohmann::json parse_json_strict(const std::string& text, const std::string& file, const std::string& where,
                                 const std::string& malformed = "not valid JSON");

}  // namespace mrplan
