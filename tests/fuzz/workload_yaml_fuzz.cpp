// A workload (op list): read, its layer table built at resolutions 1 and 2, written back and read again.
#include "model/layer_table.hpp"
#include "model/workload_yaml.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    const auto spec = mrplan::workload_from_yaml_text(text, "fuzz.yaml");
    mrplan::workload_from_yaml_text(mrplan::workload_to_yaml(spec), "written.yaml");
  });
}
