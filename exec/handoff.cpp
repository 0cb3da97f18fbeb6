#include "exec/handoff.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.hpp"

namespace mrplan {

namespace {

void copy_checked(const torch::Tensor& src, torch::Tensor& dst, const std::string& name, const std::string& origin) {
  if (src.sizes() != dst.sizes())
    fail_input("", "transfer", fmt::format("parameter '{}' has shape {} in {} but {} in this plan's network", name,
                                           fmt::join(src.sizes(), "x"), origin, fmt::join(dst.sizes(), "x")));
  dst.copy_(src);
}

}  // namespace

void initialise_from(SpecNetImpl& from, SpecNetImpl& to, const std::string& origin) {
  torch::NoGradGuard ng;
  const bool whole = from.table().input_shape == to.table().input_shape;
  auto src = from.named_parameters();
  auto dst = to.named_parameters();
  const auto names = whole ? dst.keys() : to.transferable_parameter_names();
  for (const auto& name : names) {
    auto* s = src.find(name);
    if (!s) fail_input("", "transfer", fmt::format("parameter '{}' has no counterpart in {}", name, origin));
    copy_checked(*s, dst[name], name, origin);
  }
  auto sb = from.named_buffers();
  for (auto& b : to.named_buffers()) {
    auto* s = sb.find(b.key());
    if (whole && !s) fail_input("", "transfer", fmt::format("buffer '{}' has no counterpart in {}", b.key(), origin));
    if (s && (whole || s->sizes() == b.value().sizes())) copy_checked(*s, b.value(), b.key(), origin);
  }
}

}  // namespace mrplan
