#pragma once
// Data files built into the binary (cmake/embed_text.cmake: mrplan_embed_folder), read by the
// same readers as a user's file.
#include <span>
#include <string>
#include <vector>

namespace mrplan {

struct EmbeddedFile {
  const char* name;  // the file's name without .yaml: what a user types
  const char* path;  // relative to the repository, for error messages
  const char* text;
};

std::vector<std::string> embedded_names(std::span<const EmbeddedFile> files);
// nullptr when `name` is not one of them.
const EmbeddedFile* find_embedded(std::span<const EmbeddedFile> files, const std::string& name);

// The folders built in: data/machines, data/workloads (model) and data/plans (sim).
std::span<const EmbeddedFile> builtin_machine_files();
std::span<const EmbeddedFile> builtin_workload_files();

}  // namespace mrplan
