#pragma once
// Numbers written to YAML in the shortest form that reads back to the same double (fmt's
// shortest round trip): 0.0025, where yaml-cpp's own 17 digits give 0.0025000000000000001.
#include <fmt/format.h>
#include <yaml-cpp/emitter.h>

#include <cmath>
#include <type_traits>

namespace mrplan {

struct ShortestNumber {
  double value;
};

inline YAML::Emitter& operator<<(YAML::Emitter& e, ShortestNumber n) {
  if (std::isnan(n.value)) return e << ".nan";
  if (std::isinf(n.value)) return e << (n.value > 0 ? ".inf" : "-.inf");
  return e << fmt::format("{}", n.value);
}

// A value as the emitter should see it: floating point through ShortestNumber, the rest as it is.
template <class T>
auto yaml_value(const T& v) {
  if constexpr (std::is_floating_point_v<T>) return ShortestNumber{static_cast<double>(v)};
  else return v;
}

}  // namespace mrplan
