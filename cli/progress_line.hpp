#pragma once
// Progress of long work on stderr: rewritten in place ("\r") on a terminal, and as plain lines at
// each tenth where stderr is a file (a batch job's log), so that lines never run together there
// ("sharing: 1/44 stepssharing: 2/44 steps", issue 42). The line ends when the work does.
#include <cstddef>
#include <string>

namespace mrplan {

// "WHAT: DONE/TOTAL UNIT".
void print_progress(const std::string& what, size_t done, size_t total, const std::string& unit);
// A status that replaces the last one (a terminal) or goes on a line of its own (a file).
void print_status(const std::string& text);
// Ends the status line on a terminal (a file's lines are whole already).
void end_status();

}  // namespace mrplan
