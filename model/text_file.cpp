#include "model/text_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/errors.hpp"

namespace mrplan {

std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail_input(path, "", "is a folder: expected " + what);
  std::ifstream in(path);
  if (!in) fail_input(path, "", "cannot open " + what);
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail_input(path, "", "cannot read " + what);
  return ss.str();
}

}  // namespace mrplan
