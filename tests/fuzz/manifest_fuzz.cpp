// A checkpoint generation's MANIFEST.json, as a resume reads it before trusting any file.
#include <map>

#include "exec/checkpoint_generations.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    std::map<std::string, mrplan::ManifestEntry> entries;
    mrplan::read_manifest(text, "MANIFEST.json", entries);
  });
}
