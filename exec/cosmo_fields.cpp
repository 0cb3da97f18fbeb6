#include "exec/cosmo_fields.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "model/errors.hpp"

namespace mrplan {

namespace {

constexpr double kScaleFactors[4] = {0.25, 0.5, 0.75, 1.0};  // the four "redshift" channels
struct Binning {
  double voxel_mpc, mean_count;  // Mpc/h per voxel; particles per voxel
};
Binning binning(CosmoCounts c) { return c == CosmoCounts::real ? Binning{1.0, 1.0} : Binning{4.0, 64.0}; }

// Bardeen, Bond, Kaiser & Szalay (1986) transfer function, Gamma = Omega_m h.
double bbks(double k, double gamma) {
  const double q = k / gamma;
  if (q <= 0) return 1.0;
  const double a = std::log(1.0 + 2.34 * q) / (2.34 * q);
  const double b = 1.0 + 3.89 * q + std::pow(16.1 * q, 2) + std::pow(5.46 * q, 3) + std::pow(6.71 * q, 4);
  return a * std::pow(b, -0.25);
}

// Fourier transform of a spherical top-hat of radius R.
double top_hat(double kr) {
  if (kr < 1e-6) return 1.0;
  return 3.0 * (std::sin(kr) - kr * std::cos(kr)) / (kr * kr * kr);
}

}  // namespace

const char* to_string(CosmoCounts c) { return c == CosmoCounts::real ? "real" : "mini"; }

CosmoParams cosmo_params_from_unit(const float u[4]) {
  return {0.30 + 0.05 * u[0], 0.80 + 0.10 * u[1], 0.95 + 0.05 * u[2], 0.70 + 0.10 * u[3]};
}

void CosmoFieldGenerator::sample(const CosmoParams& p, uint64_t seed, int16_t* out) const {
  const int n = size_;
  const size_t nreal = static_cast<size_t>(n) * n * n, nz = n / 2 + 1, ncplx = static_cast<size_t>(n) * n * nz;
  auto work = fft_.workspace();
  double* field = work.real;
  RealFft::Complex* modes = work.spectrum;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  for (size_t i = 0; i < nreal; ++i) field[i] = gauss(rng);
  fft_.forward(work);

  // P(k) ∝ k^n_s T^2(k); normalised so the field smoothed on 8 Mpc/h has rms sigma8.
  const Binning bins = binning(counts_);
  const double kf = 2.0 * M_PI / (n * bins.voxel_mpc);
  const double gamma = p.omega_m * p.h;
  std::vector<double> amp(ncplx);
  double s8 = 0, var = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (size_t k = 0; k < nz; ++k) {
        const int fi = i <= n / 2 ? i : i - n, fj = j <= n / 2 ? j : j - n;
        const double kk = kf * std::sqrt(double(fi) * fi + double(fj) * fj + double(k) * k);
        const size_t idx = (static_cast<size_t>(i) * n + j) * nz + k;
        const double pk = kk > 0 ? std::pow(kk, p.n_s) * std::pow(bbks(kk, gamma), 2) : 0.0;
        amp[idx] = pk;
        const double weight = (k == 0 || (n % 2 == 0 && k == nz - 1)) ? 1.0 : 2.0;  // r2c half space
        s8 += weight * pk * std::pow(top_hat(kk * 8.0), 2);
        var += weight * pk;
      }
  // with unit white noise, Var(delta) = sum_k A(k)^2 / N (unnormalised FFTW round trip / N)
  const double norm = s8 > 0 ? p.sigma8 * p.sigma8 / (s8 / nreal) : 0.0;
  for (size_t idx = 0; idx < ncplx; ++idx) {
    const double a = std::sqrt(amp[idx] * norm) / static_cast<double>(nreal);
    modes[idx][0] *= a;
    modes[idx][1] *= a;
  }
  fft_.backward(work);
  const double field_var = var * norm / nreal;

  // four growth stages: delta scales with D(a) ≈ a^f, f = Omega_m^0.55 (linder 2005); log-normal
  // transform keeps the density positive with mean 1 (Coles & Jones 1991); Poisson counts.
  // The snapshots' scale factors stretch with h (a faster expansion reaches them sooner), so h
  // leaves its own mark across the channels instead of only through Gamma = Omega_m h.
  const double f = std::pow(p.omega_m, 0.55);
  for (int c = 0; c < 4; ++c) {
    const double d = std::pow(std::pow(kScaleFactors[c], p.h / 0.7), f);
    const double shift = 0.5 * d * d * field_var;
    for (size_t i = 0; i < nreal; ++i) {
      const double rho = std::exp(d * field[i] - shift);
      std::poisson_distribution<int> poisson(bins.mean_count * rho);
      out[i * 4 + c] = static_cast<int16_t>(std::min(poisson(rng), 32767));
    }
  }
}

}  // namespace mrplan
