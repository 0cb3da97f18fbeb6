#pragma once
// Runs gnuplot on a script; plots are a convenience, so a missing gnuplot is a warning.
#include <string>

namespace mrplan {

// Writes `script` next to `png_path` (as .gp) and runs gnuplot; returns false (with a warning on
// stderr) when gnuplot is not installed or fails.
bool run_gnuplot(const std::string& script, const std::string& png_path);

}  // namespace mrplan
