#pragma once
// The message of the InputError `f` throws, or "<no error>": tests compare messages, not types.
#include <functional>
#include <string>

#include "model/errors.hpp"

namespace mrplan::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace mrplan::testing
