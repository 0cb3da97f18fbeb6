#pragma once
// What every fuzz harness asserts: a reader either accepts its input or refuses it with an
// InputError (the message a user sees); any other exception is an internal error and ends the run
// as a crash, so that libFuzzer keeps the input. ASan and UBSan catch the rest.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "model/errors.hpp"

namespace mrplan::fuzz {

template <class Read>
int accept_or_refuse(const uint8_t* data, size_t size, Read read) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    read(text);
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error (not an InputError): %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace mrplan::fuzz
