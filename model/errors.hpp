#pragma once
// One error type for everything a user can fix: it names where the problem is and what was expected.
#include <stdexcept>
#include <string>

namespace mrplan {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "FILE: KEY: MESSAGE" — the shape every input error takes.
[[noreturn]] void fail_input(const std::string& file, const std::string& key, const std::string& message);

}  // namespace mrplan
