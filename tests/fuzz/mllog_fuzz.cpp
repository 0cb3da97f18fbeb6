// An MLPerf HPC result log, as `ingest-mllog` reads it into a Record.
#include "calibrate/mllog_ingest.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    mrplan::MllogOptions o;
    o.gpus = 4;  // so that a log without a GPU count still reaches the rest of the reader
    mrplan::record_from_mllog(text, "fuzz.log", o);
  });
}
