#pragma once
// A built-in plan's YAML with one piece of text replaced, and what the plan reader says of it: how
// the input tests reach one key without writing a whole plan.
#include <gtest/gtest.h>

#include <string>

#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "tests/support/error_of.hpp"

namespace mrplan::testing {

inline std::string plan_text() { return plan_to_yaml(builtin_plan("cosmoflow-mrt@summit")); }

// The built-in plan with the first match of `from` replaced.
inline std::string plan_with(const std::string& from, const std::string& to) {
  auto t = plan_text();
  const auto at = t.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return t.replace(at, from.size(), to);
}

// The reader's message for that plan (file "p.yaml"), or "<no error>".
inline std::string plan_error(const std::string& from, const std::string& to) {
  return error_of([&] { plan_from_yaml_text(plan_with(from, to), "p.yaml"); });
}

}  // namespace mrplan::testing
