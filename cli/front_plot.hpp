#pragma once
// gnuplot script for an optimizer's answer: the time / GPU-hours front, one colour per plan
// template (method), the chosen plan marked and the deadline and budget drawn.
#include <string>
#include <vector>

#include "sim/optimize.hpp"

namespace mrplan {

std::string front_plot_script(const std::vector<Candidate>& front, const std::vector<std::string>& template_names,
                              const Candidate* chosen, const Constraints& limits, const std::string& title, const std::string& png);

}  // namespace mrplan
