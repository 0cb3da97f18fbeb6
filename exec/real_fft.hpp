#pragma once
// A real <-> half-complex FFT pair of one shape (FFTW, unnormalised), planned once and then run
// by many threads at once, each on its own workspace. FFTW's planner is not thread-safe, so every
// plan in the process is made and destroyed under one lock; new-array execution is thread-safe.
#include <cstddef>
#include <memory>
#include <vector>

namespace mrplan {

class RealFft {
 public:
  using Complex = double[2];  // the layout of fftw_complex

  // FFTW-aligned arrays sized for this transform: `real` holds the field (row-major), `spectrum`
  // its half-complex modes (last axis n/2+1).
  class Workspace {
   public:
    Workspace(size_t real_size, size_t spectrum_size);
    ~Workspace();
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;
    double* real;
    Complex* spectrum;
  };

  explicit RealFft(std::vector<int> dims);
  ~RealFft();
  RealFft(const RealFft&) = delete;
  RealFft& operator=(const RealFft&) = delete;

  size_t real_size() const { return real_size_; }
  size_t spectrum_size() const { return spectrum_size_; }
  Workspace workspace() const { return Workspace(real_size_, spectrum_size_); }
  void forward(Workspace& w) const;   // real -> spectrum
  void backward(Workspace& w) const;  // spectrum -> real, times real_size() (FFTW leaves it unnormalised)

 private:
  struct Plans;
  std::unique_ptr<Plans> plans_;
  size_t real_size_ = 1, spectrum_size_ = 1;
};

}  // namespace mrplan
