#pragma once
// Work over samples on a few threads, with a progress bar on stderr (datagen, coarsen, encode).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mrplan {

class ProgressBar {
 public:
  ProgressBar(std::string what, int64_t total, bool on) : what_(std::move(what)), total_(total), on_(on) {}
  void add(int64_t n) {
    const int64_t d = done_ += n;
    if (!on_) return;
    std::lock_guard<std::mutex> lock(mu_);
    int pct = static_cast<int>(100 * d / std::max<int64_t>(1, total_));
    if (!tty_) pct -= pct % 25;  // a log file gets a line per quarter, a terminal a live bar
    if (pct == last_ && d != total_) return;
    last_ = pct;
    const int bars = pct / 4;
    fmt::print(stderr, "{}{} [{}{}] {:3d}% ({}/{})", tty_ ? "\r" : "", what_, std::string(bars, '#'),
               std::string(25 - bars, '.'), pct, d, total_);
    if (d >= total_ || !tty_) fmt::print(stderr, "\n");
  }

 private:
  std::string what_;
  int64_t total_;
  bool on_;
  std::atomic<int64_t> done_{0};
  std::mutex mu_;
  int last_ = -1;
  bool tty_ = isatty(2) != 0;
};

inline unsigned thread_count(unsigned requested) { return requested ? requested : std::max(1u, std::thread::hardware_concurrency()); }

template <class F>
void parallel_for(int64_t n, unsigned threads, F&& f) {
  std::atomic<int64_t> next{0};
  std::exception_ptr err;
  std::mutex mu;
  auto work = [&] {
    try {
      for (int64_t i; (i = next++) < n;) f(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!err) err = std::current_exception();
      next = n;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (err) std::rethrow_exception(err);
}

}  // namespace mrplan
