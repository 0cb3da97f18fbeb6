#include "exec/mllog.hpp"

#include <fmt/format.h>

#include <chrono>

namespace mrplan {

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

}  // namespace mrplan
