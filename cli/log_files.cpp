#include "cli/log_files.hpp"

#include <algorithm>
#include <filesystem>

#include "model/errors.hpp"

namespace mrplan {

namespace {

bool is_result_log(const std::filesystem::path& p) {
  const auto name = p.filename().string();
  return name.starts_with("result") && p.extension() == ".txt";
}

bool is_record(const std::filesystem::path& p) { return p.filename().string().ends_with(".record.json"); }

}  // namespace

std::vector<LogArgument> expand_log_folders(const std::vector<std::string>& args, bool records_too, const std::string& option) {
  namespace fs = std::filesystem;
  std::vector<LogArgument> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) {
      out.push_back({a, false});
      continue;
    }
    std::vector<std::string> found;
    for (fs::recursive_directory_iterator it(a, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && (is_result_log(it->path()) || (records_too && is_record(it->path()))))
        found.push_back(it->path().string());
    if (ec) fail_input(a, option, "cannot list the folder: " + ec.message());
    if (found.empty())
      fail_input(a, option,
                 records_too ? "the folder holds no MLPerf result logs (result*.txt) and no records (*.record.json)"
                             : "the folder holds no MLPerf result logs (result*.txt)");
    std::sort(found.begin(), found.end());
    for (auto& f : found) out.push_back({std::move(f), true});
  }
  return out;
}

}  // namespace mrplan
