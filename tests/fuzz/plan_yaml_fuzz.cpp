// A plan file: read, and what is accepted writes back as a plan that reads again.
#include "model/plan_yaml.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    const auto plan = mrplan::plan_from_yaml_text(text, "fuzz.yaml");
    mrplan::plan_from_yaml_text(mrplan::plan_to_yaml(plan), "written.yaml");
  });
}
