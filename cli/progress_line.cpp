#include "cli/progress_line.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace mrplan {

namespace {
bool terminal() {
  static const bool tty = ::isatty(STDERR_FILENO) != 0;
  return tty;
}
}  // namespace

void print_progress(const std::string& what, size_t done, size_t total, const std::string& unit) {
  const auto text = fmt::format("{}: {}/{} {}", what, done, total, unit);
  if (terminal()) {
    fmt::print(stderr, "\r{}{}", text, done >= total ? "\n" : "");
  } else {
    const bool new_tenth = total == 0 || done == 0 || done * 10 / total != (done - 1) * 10 / total;
    if (new_tenth || done >= total) fmt::print(stderr, "{}\n", text);
  }
  std::fflush(stderr);
}

void print_status(const std::string& text) {
  if (terminal()) fmt::print(stderr, "\r{:<40}", text);
  else fmt::print(stderr, "{}\n", text);
  std::fflush(stderr);
}

void end_status() {
  if (terminal()) fmt::print(stderr, "\n");
}

}  // namespace mrplan
