#pragma once
// A whole input file as text; a file that cannot be opened or read is an InputError naming it.
#include <string>

namespace mrplan {

// `what` completes "cannot open ..." ("the log file").
std::string read_text_file(const std::string& path, const std::string& what);

// Whether an argument that may be a built-in's name or a file names a file: a path (a '/'), a YAML
// file's name, or a file that is there. One rule for plans, profiles and workloads.
bool names_a_file(const std::string& name_or_file);

// `text` in lower case (ASCII), as free-text fields are compared.
std::string lower_case(std::string text);

}  // namespace mrplan
