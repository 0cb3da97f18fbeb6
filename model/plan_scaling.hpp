#pragma once
// A plan moved to another GPU count: each model keeps its share of its stage's GPUs, and its global
// batch (strong scaling) or its local batch (weak scaling).
#include "model/plan.hpp"

namespace mrplan {

// Each stage keeps what its own `scaling` says, else the plan's; `all` overrides both (the
// optimizer, which sets every batch itself). Throws InputError when a model's share comes to no
// GPU, or when strong scaling cannot split a global batch evenly over the new share.
Plan plan_at_gpus(const Plan& plan, int gpus, std::optional<Scaling> all = std::nullopt);

}  // namespace mrplan
