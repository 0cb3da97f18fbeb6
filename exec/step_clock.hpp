#pragma once
// Times the phases of one training step (issue 3: data wait, host-to-device, forward, backward,
// exposed communication, optimizer). On a GPU it records CUDA events on the legacy default stream,
// where LibTorch queues the step's kernels, so marking costs no synchronisation and each interval
// is device time; the intervals are read once, after the step's last kernel. On a CPU, which runs
// the step as it is issued, it reads the host clock. Torch-free.
#include <chrono>
#include <vector>

namespace mrplan {

class StepClock {
 public:
  // `points` marks per step; cuda_device < 0 times with the host clock.
  StepClock(int cuda_device, int points);
  ~StepClock();
  StepClock(const StepClock&) = delete;
  StepClock& operator=(const StepClock&) = delete;

  void mark(int point);
  // Seconds from each point to the next (points - 1 values) of the step just marked. On a GPU it
  // waits for the last point's work, so call it where the step synchronises anyway.
  std::vector<double> intervals_s();
  bool on_device() const { return device_ >= 0; }

 private:
  int device_;
  std::vector<std::chrono::steady_clock::time_point> host_;
  std::vector<void*> events_;  // cudaEvent_t, opaque here so that callers need no CUDA headers
};

}  // namespace mrplan
