#include "exec/neuron_traces.hpp"

#include <array>
#include <cmath>
#include <random>

namespace mrplan {

namespace {

// The same stimulus for every sample (the real data uses a few fixed stimuli): two current steps
// and a slow chirp, over t in [0, 1).
double stimulus(double t) {
  const double steps = (t > 0.1 && t < 0.3 ? 0.6 : 0.0) + (t > 0.55 && t < 0.65 ? 1.0 : 0.0);
  const double chirp = t > 0.7 ? 0.4 * std::sin(2 * M_PI * (2 + 20 * (t - 0.7)) * (t - 0.7)) : 0.0;
  return steps + chirp;
}

}  // namespace

void neuron_traces(const float* u, uint64_t seed, int bins, float* out) {
  // FitzHugh & Nagumo (1961): v' = v - v^3/3 - w + I, w' = eps (v + a - b w); ranges keep the
  // classic excitable regime (a 0.7, b 0.8, eps 0.08) at the centre of each label.
  std::array<double, kNeuronChannels> a{}, b{}, eps{}, v{}, w{};
  for (int c = 0; c < kNeuronChannels; ++c) {
    a[c] = 0.7 + 0.2 * u[3 * c];
    b[c] = 0.8 + 0.15 * u[3 * c + 1];
    eps[c] = 0.08 * (1.0 + 0.5 * u[3 * c + 2]);
    v[c] = -1.2, w[c] = -0.6;
  }
  const double gain = 0.6 + 0.3 * u[12], coupling = 0.5 + 0.4 * u[13], offset = 0.15 * u[14];
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.01);
  constexpr int sub = 5;
  const double dt = 0.1;
  for (int i = 0; i < bins; ++i) {
    for (int s = 0; s < sub; ++s) {
      const double t = (i * sub + s) / static_cast<double>(bins * sub);
      std::array<double, kNeuronChannels> dv{}, dw{};
      for (int c = 0; c < kNeuronChannels; ++c) {
        const double drive = c == 0 ? gain * stimulus(t) : offset + coupling * (v[c - 1] - v[c]);
        dv[c] = v[c] - v[c] * v[c] * v[c] / 3 - w[c] + drive;
        dw[c] = eps[c] * (v[c] + a[c] - b[c] * w[c]);
      }
      for (int c = 0; c < kNeuronChannels; ++c) v[c] += dt * dv[c], w[c] += dt * dw[c];
    }
    for (int c = 0; c < kNeuronChannels; ++c) out[i * kNeuronChannels + c] = static_cast<float>(v[c] + noise(rng));
  }
}

}  // namespace mrplan
