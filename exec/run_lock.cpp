#include "exec/run_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

std::string this_host() {
  std::array<char, 256> name{};
  gethostname(name.data(), name.size() - 1);
  return name.data();
}

bool create_exclusive(const fs::path& file, const std::string& text) {
  const int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    fail_input(file.string(), "", fmt::format("cannot create the run's lock: {}", std::strerror(errno)));
  }
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) fail_input(file.string(), "", "cannot write the run's lock");
  return true;
}

// A holder on this host whose pid no longer runs: its run was killed.
bool stale(const std::string& host, long pid) {
  return host == this_host() && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string RunLock::holder_text() { return fmt::format("{} {}", this_host(), static_cast<long>(::getpid())); }

RunLock::RunLock(const fs::path& dir) {
  if (dir.empty()) return;
  const auto file = dir / "run.lock";
  // a holder of this host still running is waited for a little: a job's launcher can return while
  // the ranks it ended are still exiting, and a resume started right after must not be refused
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (bool took_over = false;;) {
    if (create_exclusive(file, holder_text())) {
      file_ = file;
      return;
    }
    std::ifstream in(file);
    std::string host;
    long pid = 0;
    in >> host >> pid;
    if (!took_over && stale(host, pid)) {  // taken over once; a second run doing the same loses the race
      std::error_code ec;
      fs::remove(file, ec);
      took_over = true;
      continue;
    }
    if (host == this_host() && pid > 0 && pid != static_cast<long>(::getpid()) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    fail_input(dir.string(), "", fmt::format("another run writes here (process {} on host {}): wait for it to end; if it is gone "
                                             "(its node lost), remove {} and resume",
                                             pid, printable(host), file.string()));
  }
}

RunLock::~RunLock() {
  if (file_.empty()) return;
  std::error_code ec;
  fs::remove(file_, ec);
}

}  // namespace mrplan
