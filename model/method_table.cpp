#include "model/method_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace mrplan {

const std::vector<MethodRow>& method_table() {
  //  method            name        display              article suffixes          every  single switch split  pretrained compared
  static const std::vector<MethodRow> rows{
      {Method::baseline, "baseline", "baseline", "a", {"-baseline"}, true, true, false, false, false, Method::baseline},
      {Method::mrt, "mrt", "MRT", "an", {"-mrt"}, false, false, true, false, false, Method::baseline},
      {Method::mrmf, "mrmf", "MRMF", "an", {"-mrmf", "-mrmf2"}, false, false, true, true, false, Method::baseline},
      {Method::transfer, "transfer", "transfer learning", "a", {"-transfer"}, false, false, false, false, true, Method::baseline},
  };
  return rows;
}

const MethodRow& method_row(Method m) {
  for (const auto& r : method_table())
    if (r.method == m) return r;
  throw std::logic_error("a method without a row in the method table");
}

std::string method_names() {
  std::string out;
  const auto& t = method_table();
  for (size_t i = 0; i < t.size(); ++i) out += std::string(i == 0 ? "" : i + 1 == t.size() ? " or " : ", ") + t[i].name;
  return out;
}

Method method_of_shape(bool concurrent_models, size_t stages) {
  auto first = [](auto pred) {
    const auto& t = method_table();
    return std::find_if(t.begin(), t.end(), pred)->method;
  };
  if (concurrent_models) return first([](const MethodRow& r) { return r.splits_gpus; });
  if (stages > 1) return first([](const MethodRow& r) { return r.has_switch && !r.splits_gpus; });
  return first([](const MethodRow& r) { return r.single_stage; });
}

bool has_fusion_stage(const Plan& plan) {
  return std::any_of(plan.stages.begin(), plan.stages.end(), [](const Stage& s) { return s.handoff.kind == Handoff::Kind::fuse; });
}

bool hands_on_by_transfer(const Plan& plan, size_t i) {
  if (i + 1 >= plan.stages.size() || plan.stages[i].handoff.kind == Handoff::Kind::fuse) return false;
  const auto& next = plan.stages[i + 1].models;
  return std::any_of(next.begin(), next.end(), [](const ModelRun& m) { return m.from_previous; });
}

bool starts_from_transfer(const Plan& plan, size_t i, size_t j) {
  return i > 0 && plan.stages[i].models[j].from_previous && plan.stages[i - 1].handoff.kind != Handoff::Kind::fuse;
}

bool starts_pretrained(const Plan& plan) {
  for (const auto& s : plan.stages)
    for (const auto& m : s.models)
      if (m.pretrained) return true;
  return false;
}

void start_from(Plan& plan, const std::string& checkpoint) {
  for (auto& s : plan.stages)
    for (auto& m : s.models)
      if (m.pretrained) m.pretrained->checkpoint = checkpoint;
}

Plan baseline_of(const Plan& plan) {
  Plan b = plan;
  b.method = method_row(plan.method).compared_against;
  b.stages = {plan.stages.back()};
  auto& m = b.stages.front().models.front();  // the last stage of every method trains one model
  m.from_previous = false;
  m.pretrained.reset();
  m.stop.kind = StopRule::Kind::target;
  m.gpus = plan.stages.back().gpus();
  return b;
}

}  // namespace mrplan
