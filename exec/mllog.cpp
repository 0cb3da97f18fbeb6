#include "exec/mllog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace mrplan {

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

MlLog::MlLog(const std::string& path, bool append) {
  if (!path.empty()) out_.open(path, append ? std::ios::app : std::ios::trunc);
}

void MlLog::event(const std::string& key, const std::string& type, const std::string& value, const std::string& meta) {
  if (!out_.is_open()) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  out_ << fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"{}\", \"key\": \"{}\", \"value\": {}, "
                      "\"metadata\": {}}}\n",
                      ms, type, key, value, meta);
  out_.flush();
}

void MlLog::merge(const std::vector<std::string>& parts) {
  std::vector<std::pair<long long, std::string>> lines;  // (time_ms, line), stable within a part
  for (const auto& part : parts) {
    std::ifstream in(part);
    for (std::string line; std::getline(in, line);) {
      const auto at = line.find("\"time_ms\": ");
      lines.emplace_back(at == std::string::npos ? 0 : std::atoll(line.c_str() + at + 11), line);
    }
    in.close();
    std::filesystem::remove(part);
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (!out_.is_open()) return;
  for (const auto& [t, line] : lines) out_ << line << '\n';
  out_.flush();
}

}  // namespace mrplan
