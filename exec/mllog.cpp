#include "exec/mllog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace mrplan {

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

namespace {

// The key and time of a line this class wrote (its fixed layout; not a reader of other logs).
LoggedTime logged_time(const std::string& line) {
  LoggedTime t;
  if (const auto at = line.find("\"time_ms\": "); at != std::string::npos) t.time_ms = std::atof(line.c_str() + at + 11);
  if (const auto at = line.find("\"key\": \""); at != std::string::npos) t.key = line.substr(at + 8, line.find('"', at + 8) - at - 8);
  return t;
}

}  // namespace

MlLog::MlLog(const std::string& path, bool append) {
  if (path.empty()) return;
  if (append) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) times_.push_back(logged_time(line));
  }
  out_.open(path, append ? std::ios::app : std::ios::trunc);
}

void MlLog::event(const std::string& key, const std::string& type, const std::string& value, const std::string& meta) {
  if (!out_.is_open()) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  out_ << fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"{}\", \"key\": \"{}\", \"value\": {}, "
                      "\"metadata\": {}}}\n",
                      ms, type, key, value, meta);
  times_.push_back({key, static_cast<double>(ms)});
  out_.flush();
}

void MlLog::merge(const std::vector<std::string>& parts) {
  std::vector<std::pair<LoggedTime, std::string>> lines;  // stable within a part
  for (const auto& part : parts) {
    std::ifstream in(part);
    for (std::string line; std::getline(in, line);) lines.emplace_back(logged_time(line), line);
    in.close();
    std::filesystem::remove(part);
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first.time_ms < b.first.time_ms; });
  if (!out_.is_open()) return;
  for (const auto& [t, line] : lines) out_ << line << '\n', times_.push_back(t);
  out_.flush();
}

}  // namespace mrplan
