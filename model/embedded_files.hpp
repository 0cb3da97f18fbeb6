#pragma once
// Data files built into the binary (cmake/embed_text.cmake: mrplan_embed_folder), read by the
// same readers as a user's file.
#include <map>
#include <mutex>
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

// What `parse` makes of `file`, made once and kept: the built-ins are asked for again and again
// (studies, size searches). One cache per call site (per T and Parse).
template <class T, class Parse>
const T& parsed_once(const EmbeddedFile& file, Parse parse) {
  static std::mutex mu;
  static std::map<const EmbeddedFile*, T> parsed;
  std::lock_guard lock(mu);
  auto it = parsed.find(&file);
  if (it == parsed.end()) it = parsed.emplace(&file, parse(file)).first;
  return it->second;
}

// The folders built in: data/machines, data/workloads (model) and data/plans (sim).
std::span<const EmbeddedFile> builtin_machine_files();
std::span<const EmbeddedFile> builtin_workload_files();

}  // namespace mrplan
