#pragma once
// Fixed-width fields of the codecs' byte layouts (little-endian hosts, as x86 and Arm servers are).
#include <cstdint>
#include <cstring>
#include <vector>

namespace mrplan::codec_bytes {

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

template <class T>
T get(const uint8_t* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

}  // namespace mrplan::codec_bytes
