// A Record (record.json): read, and what is accepted writes back as a Record that reads again.
#include "model/record.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    const auto record = mrplan::record_from_json(text, "fuzz.json");
    mrplan::record_from_json(mrplan::record_to_json(record), "written.json");
  });
}
