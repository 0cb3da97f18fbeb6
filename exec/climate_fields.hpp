#pragma once
// Synthetic DeepCAM samples: sixteen smooth, correlated atmospheric fields with compact vortices
// (class 1, tropical-cyclone-like: pressure low, rotating wind, warm moist core) and elongated
// curved filaments (class 2, atmospheric-river-like: a band of moisture with wind along it),
// labelled per pixel as the TECA masks of the real dataset are.
#include <cstdint>
#include <memory>

namespace mrplan {

inline constexpr int kClimateChannels = 16;
inline constexpr int kClimateClasses = 3;  // 0 background, 1 vortex, 2 filament

// FFTW plans for one image size, shared by threads (new-array execution is thread-safe).
class ClimateFieldGenerator {
 public:
  ClimateFieldGenerator(int height, int width);
  ~ClimateFieldGenerator();
  ClimateFieldGenerator(const ClimateFieldGenerator&) = delete;
  ClimateFieldGenerator& operator=(const ClimateFieldGenerator&) = delete;
  // One sample: data (H, W, 16) channel-last and labels (H, W). Deterministic in seed.
  void sample(uint64_t seed, float* data, int16_t* labels) const;

 private:
  int height_, width_;
  struct Plans;
  std::unique_ptr<Plans> plans_;
};

}  // namespace mrplan
