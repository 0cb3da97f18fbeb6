#include "cli/output_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "model/errors.hpp"

namespace mrplan {

void write_output(const std::string& path, const std::string& text, const std::string& what) {
  if (auto dir = std::filesystem::path(path).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
  std::ofstream f(path);
  f << text;
  if (!f) fail_input(path, "", fmt::format("cannot write the {}", what));
  fmt::print("wrote {}\n", path);
}

}  // namespace mrplan
