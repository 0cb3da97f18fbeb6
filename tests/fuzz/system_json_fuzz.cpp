// An MLPerf system description, as `profile compose --system-json` reads it into hardware parts.
#include "calibrate/system_json.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    mrplan::system_from_json_text(text, "fuzz.json", mrplan::builtin_catalogue());
  });
}
