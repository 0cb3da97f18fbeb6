#pragma once
// Synthetic DeepCAM samples: sixteen smooth, correlated atmospheric fields with compact vortices
// (class 1, tropical-cyclone-like: pressure low, rotating wind, warm moist core) and elongated
// curved filaments (class 2, atmospheric-river-like: a band of moisture with wind along it),
// labelled per pixel as the TECA masks of the real dataset are.
#include <cstdint>

#include "exec/real_fft.hpp"

namespace mrplan {

inline constexpr int kClimateChannels = 16;
inline constexpr int kClimateClasses = 3;  // 0 background, 1 vortex, 2 filament

// One image size's FFT, planned once and shared by the threads that draw samples.
class ClimateFieldGenerator {
 public:
  ClimateFieldGenerator(int height, int width) : height_(height), width_(width), fft_({height, width}) {}
  // One sample: data (H, W, 16) channel-last and labels (H, W). Deterministic in seed.
  void sample(uint64_t seed, float* data, int16_t* labels) const;

 private:
  int height_, width_;
  RealFft fft_;
};

}  // namespace mrplan
