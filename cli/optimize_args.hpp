#pragma once
// The optimize command's arguments turned into a search: which plans, which axes, which limits.
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "sim/optimize.hpp"

namespace mrplan {

// PLAN is APP@MACHINE (APP an application, cosmoflow, or one of its built-in plans, cosmoflow-mrt:
// the built-in plan of every method asked) or a plan file (its own method, and its baseline); no
// methods: every method APP has, or the file's own and its baseline.
// pretrained: the model.pt transfer learning starts from (its plans are searched only with one).
std::vector<Plan> search_templates(const std::string& plan_arg, const std::vector<Method>& methods, const std::string& pretrained = "");
std::vector<Method> parse_methods(const std::string& text);

// Every template once per data path: each staging of `staging` ("none,nearest") with each codec of
// `codecs` ("raw,lut:device"; CODEC or CODEC:host|device), named after the template with what was
// asked; combinations that do not go together (device memory without a device decoder) are left
// out. An empty list keeps the templates' own.
std::vector<Plan> with_data_paths(const std::vector<Plan>& templates, const std::string& staging, const std::string& codecs);

// An axis: "A,B,C"; "A:B:STEP"; or "A:B", which doubles from A for GPU counts and steps by one otherwise.
std::vector<int> parse_int_axis(const std::string& text, const std::string& option, bool doubling);
// "2h", "90m", "3600s" or seconds.
double parse_duration_s(const std::string& text, const std::string& option);
// "500gpu-h" or "40node-h" into the limits.
void parse_budget(const std::string& text, Constraints& limits);

}  // namespace mrplan
