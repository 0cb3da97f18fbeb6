// A workload (op list): read, written back and read again, and shaped by a plan's size and width.
#include "model/workload_options.hpp"
#include "model/workload_yaml.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    const auto spec = mrplan::workload_from_yaml_text(text, "fuzz.yaml");
    mrplan::workload_from_yaml_text(mrplan::workload_to_yaml(spec), "written.yaml");
    mrplan::with_options(spec, {.size = static_cast<int64_t>(text.size() % 97) + 1, .width = 0.5}, "fuzz.yaml");
  });
}
