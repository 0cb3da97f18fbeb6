// A machine profile: read, and what is accepted writes back as a profile that reads again.
#include "model/profile_yaml.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    const auto profile = mrplan::profile_from_yaml_text(text, "fuzz.yaml");
    mrplan::profile_from_yaml_text(mrplan::profile_to_yaml(profile), "written.yaml");
  });
}
