#pragma once
// Synthetic CosmoFlow samples: log-normal matter density fields from a power spectrum that the
// four labels shape, at four growth stages, Poisson-sampled to particle counts.
#include <cstdint>

#include "exec/real_fft.hpp"

namespace mrplan {

// The labels as `unitPar` stores them, each in [-1, 1], mapped to physical values.
struct CosmoParams {
  double omega_m, sigma8, n_s, h;
};
CosmoParams cosmo_params_from_unit(const float unit[4]);

// One grid size's FFT, planned once and shared by the threads that draw samples.
class CosmoFieldGenerator {
 public:
  explicit CosmoFieldGenerator(int size) : size_(size), fft_({size, size, size}) {}
  int size() const { return size_; }
  // One sample, channel-last (S, S, S, 4) counts. Deterministic in (seed, params).
  void sample(const CosmoParams& p, uint64_t seed, int16_t* out) const;

 private:
  int size_;
  RealFft fft_;
};

}  // namespace mrplan
