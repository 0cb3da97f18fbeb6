#include "exec/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace mrplan {

namespace fs = std::filesystem;

namespace {

constexpr double kHeartbeatPeriodS = 1.0;
constexpr double kGapsPerTimeout = 20;  // a step may take this many times the slowest seen before it counts as stalled

double unix_now_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

struct Heartbeat {
  int rank = 0;
  double alive_unix_s = 0, progress_unix_s = 0;
  long count = 0;
  std::string where;
};

std::vector<Heartbeat> read_heartbeats(const fs::path& dir, int ranks) {
  std::vector<Heartbeat> out;
  for (int r = 0; r < ranks; ++r) {
    std::ifstream in(dir / fmt::format("rank{}", r));
    Heartbeat h;
    h.rank = r;
    if (in >> h.alive_unix_s >> h.progress_unix_s >> h.count) std::getline(in >> std::ws, h.where);
    out.push_back(h);
  }
  return out;
}

}  // namespace

Watchdog::Watchdog(double min_timeout_s, int rank, int ranks, fs::path heartbeat_dir)
    : min_timeout_s_(min_timeout_s), rank_(rank), ranks_(ranks), dir_(std::move(heartbeat_dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  write_heartbeat(unix_now_s(), snapshot_locked());  // no thread yet: nothing to lock against
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::progress(std::string where) {
  std::lock_guard<std::mutex> lock(m_);
  const auto now = Clock::now();
  if (count_ > 0) longest_gap_s_ = std::max(longest_gap_s_, std::chrono::duration<double>(now - last_).count());
  last_ = now;
  ++count_;
  where_ = std::move(where);
}

void Watchdog::set_last_checkpoint(std::string where) {
  std::lock_guard<std::mutex> lock(m_);
  checkpoint_ = std::move(where);
}

Watchdog::Beat Watchdog::snapshot_locked() const { return {last_, count_, longest_gap_s_, where_, checkpoint_}; }

void Watchdog::write_heartbeat(double alive_unix_s, const Beat& b) const {
  // written beside and renamed, so a reader never sees half a line
  const auto p = dir_ / fmt::format("rank{}", rank_), tmp = dir_ / fmt::format(".rank{}.tmp", rank_);
  {
    std::ofstream out(tmp);
    const double progress_unix_s = alive_unix_s - std::chrono::duration<double>(Clock::now() - b.last).count();
    out << fmt::format("{:.3f} {:.3f} {} {}\n", alive_unix_s, progress_unix_s, b.count, b.where);
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
}

void Watchdog::watch() {
  for (;;) {
    Beat b;
    {
      std::unique_lock<std::mutex> lock(m_);
      if (wake_.wait_for(lock, std::chrono::duration<double>(kHeartbeatPeriodS), [this] { return stop_; })) return;
      b = snapshot_locked();
    }
    write_heartbeat(unix_now_s(), b);
    const double idle_s = std::chrono::duration<double>(Clock::now() - b.last).count();
    const double limit_s = std::max(min_timeout_s_, kGapsPerTimeout * b.longest_gap_s);
    if (idle_s <= limit_s) continue;
    // a rank that waits for another group (MRMF: one model stops before the other) is not stalled
    // while some rank still makes progress; the others' heartbeats are read at most every few s
    if (Clock::now() < next_survey_) continue;
    next_survey_ = Clock::now() + std::chrono::seconds(5);
    const double now = unix_now_s();
    bool job_progressing = false;
    for (const auto& h : read_heartbeats(dir_, ranks_))
      if (h.rank != rank_ && now - h.alive_unix_s < 5 * kHeartbeatPeriodS && now - h.progress_unix_s <= limit_s) job_progressing = true;
    if (!job_progressing) fire(idle_s, limit_s, b);
  }
}

void Watchdog::fire(double idle_s, double limit_s, const Beat& b) const {
  const double now = unix_now_s();
  std::string others;
  const auto beats = read_heartbeats(dir_, ranks_);
  long least = -1;
  int behind = -1;
  for (const auto& h : beats) {
    if (h.rank == rank_) continue;
    const double silent_s = now - h.alive_unix_s;
    if (h.alive_unix_s == 0)
      others += fmt::format("\n  rank {} never reported a heartbeat in {}", h.rank, dir_.string());
    else if (silent_s > 5 * kHeartbeatPeriodS)
      others += fmt::format("\n  rank {} stopped responding {:.0f} s ago (stopped, killed or its node lost); its last progress: {}", h.rank,
                            silent_s, h.where);
    if (least < 0 || h.count < least) least = h.count, behind = h.rank;
  }
  if (others.empty() && behind >= 0)
    others = fmt::format("\n  every rank is alive; rank {} is furthest behind, at: {}", behind, beats[behind].where);
  fmt::print(stderr,
             "mrplan: error: rank {} made no progress for {:.0f} s (the watchdog's limit: {:.0f} s, --watchdog-s) while at: {}{}\n"
             "  the last good checkpoint: {}; ending the job\n",
             rank_, idle_s, limit_s, b.where, others, b.checkpoint);
  std::fflush(stderr);
  std::_Exit(3);
}

}  // namespace mrplan
