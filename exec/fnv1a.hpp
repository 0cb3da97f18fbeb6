#pragma once
// FNV-1a, 64 bits (Fowler, Noll, Vo): a stable hash that needs no library, for a data folder's
// identity and for checking that ranks hold the same model. Torch-free.
#include <cstddef>
#include <cstdint>
#include <string>

namespace mrplan {

struct Fnv1a {
  uint64_t h = 14695981039346656037ull;
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  void add(const std::string& s) { add(s.data(), s.size() + 1); }  // with its end, so "ab","c" != "a","bc"
};

}  // namespace mrplan
