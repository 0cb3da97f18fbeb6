#include "exec/climate_fields.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace mrplan {

namespace {

// Channel order and rough climatology (mean, spread) of the CAM5 variables DeepCAM reads, so that
// the channels span very different magnitudes and min-max normalisation matters as it does there.
enum Ch { TMQ, U850, V850, UBOT, VBOT, QREFHT, PS, PSL, T200, T500, PRECT, TS, TREFHT, Z1000, Z200, ZBOT };
constexpr double kMean[kClimateChannels] = {25, 0, 0, 0, 0, 0.01, 98000, 101000, 215, 255, 3e-8, 285, 284, 100, 11800, 60};
constexpr double kSpread[kClimateChannels] = {12, 8, 8, 6, 6, 0.005, 1500, 1200, 5, 6, 2e-8, 15, 14, 150, 250, 10};
constexpr int kLatent = 4;      // independent smooth fields that the channels mix
constexpr double kCorrCells = 3;  // background smoothing: a Gaussian of height / (2 pi 3) pixels

double uniform(std::mt19937_64& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

// A grid's anomalies per channel (in units of its spread, channel-last) and labels, with the one
// random stream every part of a sample draws from in turn.
struct Canvas {
  int H, W;
  std::vector<float>& anom;
  int16_t* labels;
  std::mt19937_64& rng;
  void add(size_t p, int c, double v) { anom[p * kClimateChannels + c] += static_cast<float>(v); }
};

// Background: unit-variance Gaussian random fields, white noise smoothed by a Gaussian kernel
// (amplitude exp(-k^2 / 2 k0^2) in Fourier space) through FFTW: weather-scale blobs larger
// than the vortices.
std::vector<std::vector<double>> latent_fields(int H, int W, const RealFft& fft, std::mt19937_64& rng,
                                               std::normal_distribution<double>& gauss) {
  const size_t npix = static_cast<size_t>(H) * W, nx = W / 2 + 1;
  std::vector<std::vector<double>> latent(kLatent, std::vector<double>(npix));
  auto work = fft.workspace();
  double* field = work.real;
  RealFft::Complex* modes = work.spectrum;
  const double k0 = kCorrCells / H;  // in cycles per pixel
  for (int l = 0; l < kLatent; ++l) {
    for (size_t i = 0; i < npix; ++i) field[i] = gauss(rng);
    fft.forward(work);
    for (int i = 0; i < H; ++i)
      for (size_t j = 0; j < nx; ++j) {
        const double fy = (i <= H / 2 ? i : i - H) / double(H), fx = double(j) / W;
        const double a = std::exp(-0.5 * (fx * fx + fy * fy) / (k0 * k0));
        modes[i * nx + j][0] *= a;
        modes[i * nx + j][1] *= a;
      }
    fft.backward(work);
    double mean = 0, var = 0;
    for (size_t i = 0; i < npix; ++i) mean += field[i];
    mean /= npix;
    for (size_t i = 0; i < npix; ++i) var += (field[i] - mean) * (field[i] - mean);
    const double sd = std::sqrt(std::max(var / npix, 1e-30));
    for (size_t i = 0; i < npix; ++i) latent[l][i] = (field[i] - mean) / sd;
  }

  return latent;
}

// Filaments first: a curved band of moisture and along-band wind, tapering at both ends.
void add_filaments(Canvas& c) {
  const int H = c.H, W = c.W;
  auto& rng = c.rng;
  auto* labels = c.labels;
  const int n_fil = std::poisson_distribution<int>(1.5)(rng);
  for (int f = 0; f < n_fil; ++f) {
    const double x0 = uniform(rng, 0, W), y0 = uniform(rng, 0, H), len = uniform(rng, 0.35, 0.7) * W;
    const double theta = uniform(rng, -M_PI, M_PI), curve = uniform(rng, -1.5, 1.5) / len;  // radians per pixel
    const double half = uniform(rng, 0.02, 0.035) * H, amp = uniform(rng, 2.0, 3.5);
    constexpr int kPts = 64;
    double px[kPts], py[kPts], dir[kPts];
    for (int s = 0; s < kPts; ++s) {
      const double t = len * s / (kPts - 1);
      dir[s] = theta + curve * t;
      px[s] = s ? px[s - 1] + std::cos(dir[s]) * len / (kPts - 1) : x0;
      py[s] = s ? py[s - 1] + std::sin(dir[s]) * len / (kPts - 1) : y0;
    }
    const double reach = 3 * half;
    const int xlo = std::max(0, int(*std::min_element(px, px + kPts) - reach)), xhi = std::min(W - 1, int(*std::max_element(px, px + kPts) + reach));
    const int ylo = std::max(0, int(*std::min_element(py, py + kPts) - reach)), yhi = std::min(H - 1, int(*std::max_element(py, py + kPts) + reach));
    for (int y = ylo; y <= yhi; ++y)
      for (int x = xlo; x <= xhi; ++x) {
        double best = 1e30;
        int at = 0;
        for (int s = 0; s < kPts; ++s) {
          const double d2 = (x - px[s]) * (x - px[s]) + (y - py[s]) * (y - py[s]);
          if (d2 < best) best = d2, at = s;
        }
        const double taper = std::sqrt(std::sin(M_PI * (at + 0.5) / kPts));
        const double w = std::exp(-best / (2 * half * half)) * taper;
        if (w < 0.02) continue;
        const size_t p = static_cast<size_t>(y) * W + x;
        c.add(p, TMQ, 1.5 * amp * w);
        c.add(p, QREFHT, amp * w);
        c.add(p, PRECT, 0.5 * amp * w);
        c.add(p, U850, amp * w * std::cos(dir[at]));
        c.add(p, V850, amp * w * std::sin(dir[at]));
        if (w > 0.25) labels[p] = 2;
      }
  }
}

// Vortices on top: a deep pressure low, a warm moist core and tangential wind
// v(d) = a (d/r) exp((1 - d^2/r^2)/2), peaking at d = r; they turn the other way south of the
// middle row, as cyclones do across the equator.
void add_vortices(Canvas& c) {
  const int H = c.H, W = c.W;
  auto& rng = c.rng;
  auto* labels = c.labels;
  const int n_vort = std::poisson_distribution<int>(2.0)(rng);
  for (int v = 0; v < n_vort; ++v) {
    const double cx = uniform(rng, 0, W), cy = uniform(rng, 0, H), r = uniform(rng, 0.03, 0.06) * H;
    const double amp = uniform(rng, 2.5, 4.0), spin = cy < H / 2.0 ? 1.0 : -1.0;
    const int reach = static_cast<int>(std::ceil(4 * r));
    for (int y = std::max(0, int(cy) - reach); y <= std::min(H - 1, int(cy) + reach); ++y)
      for (int x = std::max(0, int(cx) - reach); x <= std::min(W - 1, int(cx) + reach); ++x) {
        const double dx = x - cx, dy = y - cy, d2 = dx * dx + dy * dy, d = std::sqrt(d2);
        const double g = std::exp(-d2 / (2 * r * r));
        const double vt = amp * (d / r) * std::exp(0.5 * (1 - d2 / (r * r)));
        const double ux = d > 1e-9 ? -dy / d : 0, uy = d > 1e-9 ? dx / d : 0;
        const size_t p = static_cast<size_t>(y) * W + x;
        c.add(p, PS, -2 * amp * g);
        c.add(p, PSL, -2 * amp * g);
        c.add(p, Z1000, -amp * g);
        c.add(p, TMQ, amp * g);
        c.add(p, PRECT, 2 * amp * g);
        c.add(p, T200, 0.5 * amp * g);
        c.add(p, T500, 0.5 * amp * g);
        c.add(p, U850, spin * vt * ux);
        c.add(p, V850, spin * vt * uy);
        c.add(p, UBOT, 0.7 * spin * vt * ux);
        c.add(p, VBOT, 0.7 * spin * vt * uy);
        if (g > 0.25) labels[p] = 1;
      }
  }
}

}  // namespace

void ClimateFieldGenerator::sample(uint64_t seed, float* data, int16_t* labels) const {
  const int H = height_, W = width_;
  const size_t npix = static_cast<size_t>(H) * W;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const auto latent = latent_fields(H, W, fft_, rng, gauss);
  // anomaly per channel in units of its spread: each channel mixes two latent fields plus noise
  std::vector<float> anom(npix * kClimateChannels);
  for (size_t p = 0; p < npix; ++p)
    for (int c = 0; c < kClimateChannels; ++c)
      anom[p * kClimateChannels + c] =
          static_cast<float>(0.8 * latent[c % kLatent][p] + 0.55 * latent[(c + 1) % kLatent][p] + 0.15 * gauss(rng));
  std::fill(labels, labels + npix, int16_t{0});
  Canvas canvas{H, W, anom, labels, rng};
  add_filaments(canvas);
  add_vortices(canvas);
  for (size_t p = 0; p < npix; ++p)
    for (int c = 0; c < kClimateChannels; ++c)
      data[p * kClimateChannels + c] = static_cast<float>(kMean[c] + kSpread[c] * anom[p * kClimateChannels + c]);
}

}  // namespace mrplan
