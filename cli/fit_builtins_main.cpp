// mrplan-fit-builtins: the built-in profiles fitted once, at build time, as YAML documents that the
// mrplan programs embed (calibrate/paper_calibration use_prefitted_profiles).
#include <fmt/format.h>

#include <exception>

#include "calibrate/paper_calibration.hpp"

int main() {
  try {
    fmt::print("{}\n", mrplan::prefitted_profiles_yaml());
  } catch (const std::exception& e) {
    fmt::print(stderr, "mrplan-fit-builtins: {}\n", e.what());
    return 1;
  }
  return 0;
}
