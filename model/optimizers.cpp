#include "model/optimizers.hpp"

#include <fmt/format.h>

#include "model/errors.hpp"

namespace mrplan {

const std::vector<OptimizerRow>& optimizer_table() {
  static const std::vector<OptimizerRow> rows{
      {Optimizer::sgd, "sgd", 0},
      {Optimizer::momentum, "momentum", 4},
      {Optimizer::adam, "adam", 8},
      {Optimizer::lamb, "lamb", 8},
  };
  return rows;
}

const char* to_string(Optimizer o) {
  for (const auto& r : optimizer_table())
    if (r.optimizer == o) return r.name;
  return "?";
}

std::optional<Optimizer> optimizer_from_string(const std::string& name) {
  for (const auto& r : optimizer_table())
    if (name == r.name) return r.optimizer;
  return std::nullopt;
}

std::string optimizer_names() {
  std::string out;
  const auto& t = optimizer_table();
  for (size_t i = 0; i < t.size(); ++i) out += (i == 0 ? "" : i + 1 == t.size() ? " or " : ", ") + std::string(t[i].name);
  return out;
}

Optimizer parse_optimizer(const std::string& name, const std::string& file, const std::string& key) {
  if (const auto o = optimizer_from_string(name)) return *o;
  fail_input(file, key, fmt::format("unknown optimizer '{}' (expected {})", name, optimizer_names()));
}

}  // namespace mrplan
