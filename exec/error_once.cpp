#include "exec/error_once.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

namespace mrplan {

bool first_to_report(const std::filesystem::path& dir, const std::string& job_token, const std::string& message, int rank) {
  std::error_code ec;
  // before the run's folder exists the ranks have only read the same inputs: rank 0 reports
  if (!std::filesystem::is_directory(dir.parent_path(), ec)) return rank == 0;
  std::filesystem::create_directories(dir, ec);
  const auto claim = dir / fmt::format("error-{}-{:016x}", job_token, std::hash<std::string>{}(message));
  const int fd = ::open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd >= 0) {
    ::close(fd);
    return true;
  }
  return errno == EEXIST ? false : rank == 0;
}

}  // namespace mrplan
