#include "model/embedded_files.hpp"

namespace mrplan {

std::vector<std::string> embedded_names(std::span<const EmbeddedFile> files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.emplace_back(f.name);
  return out;
}

const EmbeddedFile* find_embedded(std::span<const EmbeddedFile> files, const std::string& name) {
  for (const auto& f : files)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace mrplan
