#pragma once
// The optimizers mrplan plans, prices and trains with, one row each (issue 41): a plan, an MLPerf
// log and the compute microbenchmark name them alike, and the state each keeps per parameter is
// said once (weights and gradients aside: Adam and LAMB two FP32 moments, momentum one).
#include <optional>
#include <string>
#include <vector>

namespace mrplan {

enum class Optimizer { sgd, momentum, adam, lamb };

struct OptimizerRow {
  Optimizer optimizer;
  const char* name;
  double state_bytes_per_param;
};

const std::vector<OptimizerRow>& optimizer_table();
const char* to_string(Optimizer o);
std::optional<Optimizer> optimizer_from_string(const std::string& name);
// "sgd, momentum, adam or lamb", for messages.
std::string optimizer_names();
// The optimizer `name` names; InputError naming `file` and `key` otherwise.
Optimizer parse_optimizer(const std::string& name, const std::string& file, const std::string& key);

}  // namespace mrplan
