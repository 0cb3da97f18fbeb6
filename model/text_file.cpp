#include "model/text_file.hpp"

#include <algorithm>
#include <cctype>

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

bool names_a_file(const std::string& name_or_file) {
  std::error_code ec;
  return name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".yaml") || name_or_file.ends_with(".yml") ||
         std::filesystem::is_regular_file(name_or_file, ec);
}

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return text;
}

}  // namespace mrplan
