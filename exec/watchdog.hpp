#pragma once
// Bounded failure of a stalled job: every rank reports its progress (each step, each validation
// batch, each checkpoint); a thread ends the process when none came for the timeout (the larger of
// the configured one and 20 times the longest gap between reports seen so far) and no other rank
// progressed either. A heartbeat file per rank (alive time, last progress, count, where) lets the
// rank that fires name the one that stalled: stopped or dead (its heartbeat is old) or furthest
// behind. The launcher then ends the others, as it does for a rank killed. Torch-free.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

namespace mrplan {

class Watchdog {
 public:
  Watchdog(double min_timeout_s, int rank, int ranks, std::filesystem::path heartbeat_dir);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void progress(std::string where);
  // Where the run's last good checkpoint is, for the message (set as checkpoints are written).
  void set_last_checkpoint(std::string where);

 private:
  using Clock = std::chrono::steady_clock;
  // What the training thread last reported, copied under the lock so that files are written and read
  // without holding it (progress() never waits on the watchdog's I/O).
  struct Beat {
    Clock::time_point last;
    long count = 0;
    double longest_gap_s = 0;
    std::string where, checkpoint;
  };
  Beat snapshot_locked() const;
  void watch();
  void write_heartbeat(double alive_unix_s, const Beat& b) const;
  [[noreturn]] void fire(double idle_s, double limit_s, const Beat& b) const;

  const double min_timeout_s_;
  const int rank_, ranks_;
  const std::filesystem::path dir_;
  std::mutex m_;
  std::condition_variable wake_;
  bool stop_ = false;
  Clock::time_point last_ = Clock::now();
  Clock::time_point next_survey_ = Clock::now();  // the watchdog thread's own: not under m_
  double longest_gap_s_ = 0;
  long count_ = 0;
  std::string where_ = "starting", checkpoint_ = "none yet";
  std::thread thread_;
};

}  // namespace mrplan
