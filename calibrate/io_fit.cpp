#include "calibrate/io_fit.hpp"

#include <numeric>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/profile_parameters.hpp"
#include "model/errors.hpp"
#include "model/least_squares.hpp"

namespace mrplan {

IoFit fit_io(const IoMeasurements& m) {
  if (m.cold.size() < 3)
    fail_input("", "io timings", fmt::format("the latency-bandwidth fit needs three cold reads or more, got {}: give a folder of two files or more (each is read cold at two sizes; datagen --samples-per-file)", m.cold.size()));
  double lo = 1e300, hi = 0;
  for (const auto& c : m.cold) {
    if (!(c.bytes > 0) || !(c.seconds > 0) || !std::isfinite(c.seconds))
      fail_input("", "io timings", fmt::format("cold read of {} bytes: times and sizes must be positive", c.bytes));
    lo = std::min(lo, c.bytes), hi = std::max(hi, c.bytes);
  }
  if (hi < 2 * lo) fail_input("", "io timings", "cold reads need sizes at least 2x apart to separate latency from bandwidth");
  if (m.warm.empty() || !(m.reader_bytes_per_s > 0) || !(m.decode_bytes_per_s > 0) || !(m.copy_bytes_per_s > 0))
    fail_input("", "io timings", "warm read, reader, decode and copy rates are all needed");
  const auto n = static_cast<Eigen::Index>(m.cold.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd b(n), w(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& c = m.cold[static_cast<size_t>(i)];
    A(i, 0) = 1, A(i, 1) = c.bytes, b(i) = c.seconds, w(i) = 1 / (c.seconds * c.seconds);
  }
  const auto f = weighted_linear_least_squares(A, b, w);
  if (!(f.params[1] > 0)) fail_input("", "io timings", "cold read times do not grow with size: the reads were served from a cache, or the files are "
                  "so small that the kernel's read-ahead fetches them whole (calibrate on files of a few MB or more)");
  IoFit fit;
  fit.per_file_latency_s = std::max(0.0, f.params[0]);
  fit.latency_std_error_s = f.std_errors[0];
  fit.bandwidth_Bps = 1 / f.params[1];
  fit.bandwidth_std_error_Bps = f.std_errors[1] / (f.params[1] * f.params[1]);  // delta method for 1/x
  const Eigen::VectorXd model = A * f.params;
  double mean = 0, tot = 0, res = 0;
  for (Eigen::Index i = 0; i < n; ++i) mean += std::log(b(i)) / static_cast<double>(n);
  for (Eigen::Index i = 0; i < n; ++i)
    tot += std::pow(std::log(b(i)) - mean, 2), res += std::pow(std::log(std::max(model(i), 1e-30)) - std::log(b(i)), 2);
  fit.r2 = tot > 0 ? 1 - res / tot : 1;
  for (const auto& wr : m.warm)
    if (wr.bytes_per_s > fit.page_cache_Bps) fit.page_cache_Bps = wr.bytes_per_s, fit.page_cache_threads = wr.threads;
  // the reader's own work: its time per byte less the page cache's (one thread each), never below zero
  const double reader_s_per_byte = std::max(0.0, 1 / m.reader_bytes_per_s - 1 / m.warm.front().bytes_per_s);
  fit.raw_decode_Bps = 1 / (reader_s_per_byte + 1 / m.decode_bytes_per_s);
  return fit;
}

namespace {

// The mean of repeated passes and its standard error.
std::pair<double, double> mean_and_std_error(const std::vector<double>& r) {
  const double n = static_cast<double>(r.size()), mean = std::accumulate(r.begin(), r.end(), 0.0) / std::max(1.0, n);
  double ss = 0;
  for (double v : r) ss += (v - mean) * (v - mean);
  return {mean, n > 1 ? std::sqrt(ss / (n - 1) / n) : 0};
}

}  // namespace

void apply_io_fit(MachineProfile& p, const IoMeasurements& m, const IoFit& fit, const std::string& source) {
  p.io.pfs.per_file_latency_s = fit.per_file_latency_s;
  p.io.pfs.per_node_bandwidth_Bps = fit.bandwidth_Bps;
  p.io.pfs.aggregate_bandwidth_Bps = fit.bandwidth_Bps;  // one node: its disk is the whole tier
  p.io.host_memory.per_node_bandwidth_Bps = fit.page_cache_Bps;
  p.io.host_decode_Bps = fit.raw_decode_Bps;
  p.io.host_to_device_Bps = m.copy_bytes_per_s;
  p.io.host_to_device_efficiency = 1.0;
  // a codec measured another time keeps its fit
  std::erase_if(p.fitted, [](const FittedParameter& f) { return f.key.rfind("io.", 0) == 0 && f.key.rfind("io.codecs.", 0) != 0; });
  record_fit(p, {"io.tiers.pfs.per_file_latency_s", fit.per_file_latency_s, fit.latency_std_error_s, source + " (" + m.tier_name + ", cold)"});
  record_fit(p, {"io.tiers.pfs.per_node_bandwidth_Bps", fit.bandwidth_Bps, fit.bandwidth_std_error_Bps, source + " (" + m.tier_name + ", cold)"});
  record_fit(p, {"io.tiers.host_memory.per_node_bandwidth_Bps", fit.page_cache_Bps, 0,
                      fmt::format("{} (page cache, best of the thread counts: {} threads)", source, fit.page_cache_threads)});
  record_fit(p, {"io.host_decode_Bps", fit.raw_decode_Bps, 0, source + " (the raw reader's work beyond the bytes, then log1p; one thread)"});
  record_fit(p, {"io.host_to_device_Bps", m.copy_bytes_per_s, 0, source + " (host copy of a batch)"});
  for (const auto& c : m.codecs) {
    const auto host = mean_and_std_error(c.decode_bytes_per_s);
    auto& rates = p.io.codecs[codec_name(c.codec)];
    rates.ratio = c.ratio, rates.host_decode_Bps = host.first;
    rates.output_bytes_per_value = c.codec == Codec::diff ? 2 : 4;  // the differential decoder emits FP16
    const std::string key = fmt::format("io.codecs.{}.", codec_name(c.codec));
    record_fit(p, {key + "ratio", c.ratio, 0, source + " (encoded samples of the dataset)"});
    record_fit(p, {key + "host_decode_GBps", host.first / 1e9, host.second / 1e9,
                   fmt::format("{} ({} passes, one thread, preprocessing fused)", source, c.decode_bytes_per_s.size())});
    if (c.device_decode_bytes_per_s.empty()) continue;
    const auto device = mean_and_std_error(c.device_decode_bytes_per_s);
    rates.device_decode_Bps = device.first;
    record_fit(p, {key + "device_decode_GBps", device.first / 1e9, device.second / 1e9,
                   fmt::format("{} ({} passes, the kernels alone, preprocessing fused)", source, c.device_decode_bytes_per_s.size())});
  }
}

}  // namespace mrplan
