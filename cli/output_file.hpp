#pragma once
// What a command writes for the user (CSV tables, records): its folder made, a failure to write
// refused naming the file, and "wrote PATH" printed.
#include <string>

namespace mrplan {

void write_output(const std::string& path, const std::string& text, const std::string& what);

}  // namespace mrplan
