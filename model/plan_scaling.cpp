#include "model/plan_scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/errors.hpp"

namespace mrplan {

Plan plan_at_gpus(const Plan& plan, int gpus, std::optional<Scaling> all) {
  Plan p = plan;
  for (auto& st : p.stages) {
    const Scaling scaling = all.value_or(st.scaling.value_or(plan.scaling));
    // concurrent models keep their share of the stage's GPUs
    const int before = st.gpus();
    int given = 0;
    for (size_t j = 0; j < st.models.size(); ++j) {
      auto& m = st.models[j];
      const int share = j + 1 == st.models.size() ? gpus - given : std::max(1, static_cast<int>(std::lround(double(gpus) * m.gpus / before)));
      if (share < 1)
        fail_input("command line", "--gpus", fmt::format("{} GPUs leave no GPU for model '{}' of stage '{}'", gpus, m.name, st.name));
      given += share;
      if (scaling == Scaling::strong) {
        const int global = m.gpus * m.local_batch;
        if (global % share != 0 || global < share)
          fail_input("command line", "--gpus",
                     fmt::format("{} has global batch {}, which {} GPUs cannot split evenly (keep the local batch instead: --keep local, or scaling: weak)",
                                 st.models.size() == 1 ? fmt::format("stage '{}'", st.name) : fmt::format("model '{}' of stage '{}'", m.name, st.name),
                                 global, share));
        m.local_batch = global / share;
      }
      m.gpus = share;
    }
  }
  return p;
}

}  // namespace mrplan
