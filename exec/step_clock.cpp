#include "exec/step_clock.hpp"

#include <stdexcept>
#include <string>

#ifdef MRPLAN_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace mrplan {

#ifdef MRPLAN_HAVE_CUDA
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("step timer: ") + what + ": " + cudaGetErrorString(e));
}
}  // namespace
#endif

StepClock::StepClock(int cuda_device, int points) : device_(cuda_device), host_(static_cast<size_t>(points)) {
  if (points < 2) throw std::invalid_argument("StepClock needs at least two points");
  if (device_ < 0) return;
#ifdef MRPLAN_HAVE_CUDA
  check(cudaSetDevice(device_), "cudaSetDevice");
  events_.assign(host_.size(), nullptr);
  for (auto& e : events_) {
    cudaEvent_t ev;
    check(cudaEventCreate(&ev), "cudaEventCreate");
    e = ev;
  }
#else
  throw std::runtime_error("step timer: this build has no CUDA runtime: GPU steps cannot be timed (rebuild where the CUDA toolkit is found)");
#endif
}

StepClock::~StepClock() {
#ifdef MRPLAN_HAVE_CUDA
  for (auto* e : events_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
#endif
}

void StepClock::mark(int point) {
  const auto i = static_cast<size_t>(point);
  if (device_ < 0) {
    host_.at(i) = std::chrono::steady_clock::now();
    return;
  }
#ifdef MRPLAN_HAVE_CUDA
  check(cudaEventRecord(static_cast<cudaEvent_t>(events_.at(i)), cudaStreamLegacy), "cudaEventRecord");
#endif
}

std::vector<double> StepClock::intervals_s() {
  std::vector<double> out(host_.size() - 1);
  if (device_ < 0) {
    for (size_t i = 0; i + 1 < host_.size(); ++i) out[i] = std::chrono::duration<double>(host_[i + 1] - host_[i]).count();
    return out;
  }
#ifdef MRPLAN_HAVE_CUDA
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(events_.back())), "cudaEventSynchronize");
  for (size_t i = 0; i + 1 < events_.size(); ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(events_[i]), static_cast<cudaEvent_t>(events_[i + 1])),
          "cudaEventElapsedTime");
    out[i] = ms * 1e-3;
  }
#endif
  return out;
}

}  // namespace mrplan
