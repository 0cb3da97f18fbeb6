#include "exec/real_fft.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

namespace mrplan {
namespace {

TEST(RealFft, SizesHalveTheLastAxis) {
  const RealFft fft({4, 6, 8});
  EXPECT_EQ(fft.real_size(), 4u * 6 * 8);
  EXPECT_EQ(fft.spectrum_size(), 4u * 6 * 5);
}

TEST(RealFft, ForwardOfACosineIsTwoSpikesAndTheRoundTripScalesByTheSize) {
  const int H = 6, W = 8;
  const RealFft fft({H, W});
  auto w = fft.workspace();
  // 3 + cos(2 pi x / W): DC = 3 H W, mode (0, 1) = H W / 2, every other mode 0
  for (int i = 0; i < H; ++i)
    for (int j = 0; j < W; ++j) w.real[i * W + j] = 3 + std::cos(2 * M_PI * j / W);
  std::vector<double> in(w.real, w.real + fft.real_size());
  fft.forward(w);
  for (size_t k = 0; k < fft.spectrum_size(); ++k) {
    const double want = k == 0 ? 3.0 * H * W : k == 1 ? H * W / 2.0 : 0.0;
    EXPECT_NEAR(w.spectrum[k][0], want, 1e-9) << "mode " << k;
    EXPECT_NEAR(w.spectrum[k][1], 0.0, 1e-9) << "mode " << k;
  }
  fft.backward(w);
  for (size_t i = 0; i < fft.real_size(); ++i) EXPECT_NEAR(w.real[i], in[i] * H * W, 1e-9);
}

TEST(RealFft, PlansMadeOnManyThreadsAtOnceAllWork) {
  // plans are made under one process-wide lock: concurrent construction must not corrupt FFTW
  std::vector<std::thread> pool;
  std::vector<double> dc(8, 0.0);
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&, t] {
      const RealFft fft({8 + 2 * t, 8});
      auto w = fft.workspace();
      for (size_t i = 0; i < fft.real_size(); ++i) w.real[i] = 1;
      fft.forward(w);
      dc[static_cast<size_t>(t)] = w.spectrum[0][0] / static_cast<double>(fft.real_size());
    });
  for (auto& th : pool) th.join();
  for (double v : dc) EXPECT_DOUBLE_EQ(v, 1.0);
}

}  // namespace
}  // namespace mrplan
