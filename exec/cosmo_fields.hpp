#pragma once
// Synthetic CosmoFlow samples: log-normal matter density fields from a power spectrum that the
// four labels shape, at four growth stages, Poisson-sampled to particle counts.
#include <cstdint>
#include <string>

#include "exec/real_fft.hpp"

namespace mrplan {

// The labels as `unitPar` stores them, each in [-1, 1], mapped to physical values.
struct CosmoParams {
  double omega_m, sigma8, n_s, h;
};
CosmoParams cosmo_params_from_unit(const float unit[4]);

// How the particles are binned. real: as the MLPerf dataset's 128^3 samples are (sub-volumes of a
// 512^3-voxel histogram of 512^3 particles: 1 Mpc/h voxels, one particle per voxel on average;
// preprocessing paper III), which gives its lookup tables their ~4x. mini: 64 particles per 4 Mpc/h
// voxel, so that a 32^3 sample still shows its labels and mini studies train in a few epochs (on
// real counts a 32^3 mini-CosmoFlow had validation MSE 0.216 after 10 epochs, 0.202 after 3 on mini).
enum class CosmoCounts { real, mini };
const char* to_string(CosmoCounts c);

// One grid size's FFT, planned once and shared by the threads that draw samples.
class CosmoFieldGenerator {
 public:
  CosmoFieldGenerator(int size, CosmoCounts counts) : size_(size), counts_(counts), fft_({size, size, size}) {}
  int size() const { return size_; }
  // One sample, channel-last (S, S, S, 4) counts. Deterministic in (seed, params).
  void sample(const CosmoParams& p, uint64_t seed, int16_t* out) const;

 private:
  int size_;
  CosmoCounts counts_;
  RealFft fft_;
};

}  // namespace mrplan
