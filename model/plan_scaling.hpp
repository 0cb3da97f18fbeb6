#pragma once
// A plan moved to another GPU count: each model keeps its share of its stage's GPUs, and its global
// batch (strong scaling) or its local batch (weak scaling).
#include "model/plan.hpp"

namespace mrplan {

// Throws InputError when a model's share comes to no GPU, or when strong scaling cannot split a
// global batch evenly over the new share.
Plan plan_at_gpus(const Plan& plan, int gpus, Scaling scaling);

}  // namespace mrplan
