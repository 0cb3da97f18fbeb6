#pragma once
// One run at a time in a run's folder: rank 0 holds `--out`/run.lock (its host and pid) for the
// run's life, so that two runs, or a run and its own resume, never write into each other's files
// (issue 44). A lock whose process is gone (same host, no such pid) is stale and taken over; one
// held on another host is refused with what to check. Torch-free.
#include <filesystem>
#include <string>

namespace mrplan {

class RunLock {
 public:
  // Takes the lock or throws InputError naming the holder. An empty `dir`: holds nothing.
  explicit RunLock(const std::filesystem::path& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  // "host pid" of a lock's text, and this process's own.
  static std::string holder_text();

 private:
  std::filesystem::path file_;
};

}  // namespace mrplan
