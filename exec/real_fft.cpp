#include "exec/real_fft.hpp"

#include <fftw3.h>

#include <mutex>
#include <stdexcept>

namespace mrplan {

namespace {
std::mutex planner_mutex;  // one for the process: FFTW's planner state is global
}  // namespace

static_assert(sizeof(RealFft::Complex) == sizeof(fftw_complex));

struct RealFft::Plans {
  fftw_plan forward = nullptr, backward = nullptr;
};

RealFft::Workspace::Workspace(size_t real_size, size_t spectrum_size)
    : real(fftw_alloc_real(real_size)), spectrum(reinterpret_cast<Complex*>(fftw_alloc_complex(spectrum_size))) {
  if (!real || !spectrum) {
    fftw_free(real), fftw_free(spectrum);
    throw std::bad_alloc();
  }
}

RealFft::Workspace::~Workspace() {
  fftw_free(real);
  fftw_free(spectrum);
}

RealFft::RealFft(std::vector<int> dims) : plans_(std::make_unique<Plans>()) {
  if (dims.empty()) throw std::invalid_argument("RealFft needs at least one axis");
  for (size_t a = 0; a < dims.size(); ++a) {
    real_size_ *= static_cast<size_t>(dims[a]);
    spectrum_size_ *= static_cast<size_t>(a + 1 < dims.size() ? dims[a] : dims[a] / 2 + 1);
  }
  Workspace w = workspace();  // FFTW_ESTIMATE plans without touching the arrays
  auto* spec = reinterpret_cast<fftw_complex*>(w.spectrum);
  const int rank = static_cast<int>(dims.size());
  std::lock_guard<std::mutex> lock(planner_mutex);
  plans_->forward = fftw_plan_dft_r2c(rank, dims.data(), w.real, spec, FFTW_ESTIMATE);
  plans_->backward = fftw_plan_dft_c2r(rank, dims.data(), spec, w.real, FFTW_ESTIMATE);
  if (!plans_->forward || !plans_->backward) throw std::runtime_error("FFTW could not plan the transform");
}

RealFft::~RealFft() {
  std::lock_guard<std::mutex> lock(planner_mutex);
  if (plans_->forward) fftw_destroy_plan(plans_->forward);
  if (plans_->backward) fftw_destroy_plan(plans_->backward);
}

void RealFft::forward(Workspace& w) const {
  fftw_execute_dft_r2c(plans_->forward, w.real, reinterpret_cast<fftw_complex*>(w.spectrum));
}

void RealFft::backward(Workspace& w) const {
  fftw_execute_dft_c2r(plans_->backward, reinterpret_cast<fftw_complex*>(w.spectrum), w.real);
}

}  // namespace mrplan
