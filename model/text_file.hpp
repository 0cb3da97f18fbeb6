#pragma once
// A whole input file as text; a file that cannot be opened or read is an InputError naming it.
#include <string>

namespace mrplan {

// `what` completes "cannot open ..." ("the log file").
std::string read_text_file(const std::string& path, const std::string& what);

}  // namespace mrplan
