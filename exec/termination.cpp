#include "exec/termination.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <algorithm>
#include <cstring>

namespace mrplan {

namespace {

std::array<char, 1024> g_message{};
size_t g_length = 0;

void on_signal(int sig) {
  if (g_length > 0) {
    const ssize_t written = ::write(STDERR_FILENO, g_message.data(), g_length);  // async-signal-safe
    (void)written;
  }
  ::_exit(128 + sig);
}

}  // namespace

void say_when_terminated(int rank, const std::string& message) {
  g_length = 0;
  if (rank == 0) {
    g_length = std::min(message.size(), g_message.size() - 1);
    std::memcpy(g_message.data(), message.data(), g_length);
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

}  // namespace mrplan
