// The HDF5 sample reader (exec/sample_store.cpp) on folders built from the input: one to three
// files of a workload's layout, their data raw or encoded (lut, diff) with the codec's attributes
// and offsets, shapes, labels and values as the input says, then damaged (a byte of the encoded
// samples, an offset, the codec's name, the sample dimensions). libhdf5 writes and parses the files
// (uninstrumented, not ours to fuzz); what is fuzzed is what mrplan does with what it reads.
#include <fuzzer/FuzzedDataProvider.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <vector>

#include "exec/encode_dataset.hpp"
#include "exec/sample_store.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace fs = std::filesystem;
using namespace mrplan;

namespace mrplan {
void batch_log1p(float* values, size_t n) {  // the loader's is torch's; any log1p will do here
  for (size_t i = 0; i < n; ++i) values[i] = std::log1p(values[i]);
}
}  // namespace mrplan

namespace {

float value(FuzzedDataProvider& in, bool label, int classes) {
  const auto k = in.ConsumeIntegral<uint8_t>();
  if (k >= 240) return in.ConsumeFloatingPoint<float>();  // anything: NaN, infinities, 1e38, -0
  if (classes > 0) return static_cast<float>(k % (classes + 1));
  return label ? k / 120.f - 1.f : static_cast<float>(k);
}

std::vector<uint64_t> fuzzed_dims(FuzzedDataProvider& in, std::vector<uint64_t> dims) {
  if (in.ConsumeIntegralInRange(0, 7) == 0) dims.pop_back();  // an axis short
  if (in.ConsumeIntegralInRange(0, 7) == 0) dims.push_back(in.ConsumeIntegralInRange<uint64_t>(1, 3));
  return dims;
}

uint64_t product(const std::vector<uint64_t>& v, size_t from = 0) {
  return std::accumulate(v.begin() + std::min(from, v.size()), v.end(), uint64_t{1}, std::multiplies<>());
}

void write_encoded(FuzzedDataProvider& in, H5File& h5, const DataLayout& L, const std::vector<uint64_t>& dims, const std::vector<float>& x) {
  const size_t lead = L.per_sample_files ? 0 : 1;
  const uint64_t n = lead ? dims[0] : 1, per = product(dims, lead);
  const SampleShape shape{static_cast<int64_t>(per / dims.back()), static_cast<int64_t>(dims.back()),
                          static_cast<int64_t>(dims[dims.size() - 2])};
  const Codec c = in.ConsumeBool() ? Codec::lut : Codec::diff;
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets{0};
  for (uint64_t s = 0; s < n; ++s) {
    const auto b = make_codec(c)->encode(x.data() + s * per, shape);
    bytes.insert(bytes.end(), b.begin(), b.end());
    offsets.push_back(bytes.size());
  }
  if (!bytes.empty() && in.ConsumeIntegralInRange(0, 3) == 0) bytes[in.ConsumeIntegralInRange<size_t>(0, bytes.size() - 1)] ^= in.ConsumeIntegral<uint8_t>();
  if (in.ConsumeIntegralInRange(0, 5) == 0) offsets[in.ConsumeIntegralInRange<size_t>(0, offsets.size() - 1)] = in.ConsumeIntegralInRange<uint64_t>(0, bytes.size() + 2);
  std::vector<uint64_t> sample(dims.begin() + lead, dims.end());
  if (in.ConsumeIntegralInRange(0, 5) == 0) sample = fuzzed_dims(in, sample);
  if (in.ConsumeIntegralInRange(0, 5) == 0 && !sample.empty()) sample[0] = in.ConsumeIntegralInRange<uint64_t>(0, 1u << 20);
  h5.write(L.data, {bytes.size()}, bytes.data());
  h5.write(offsets_dataset(L.data), {offsets.size()}, offsets.data());
  const char* names[] = {"lut", "diff", "deflate", "raw", "zstd", ""};
  h5.set_attribute(L.data, kCodecAttribute, in.ConsumeIntegralInRange(0, 7) == 0 ? names[in.ConsumeIntegralInRange(0, 5)] : codec_name(c));
  h5.set_attribute(L.data, kSampleDimsAttribute, sample);
}

void write_file(FuzzedDataProvider& in, const fs::path& path, const DataLayout& L, const std::vector<uint64_t>& label_dims) {
  H5File h5(path.string(), H5File::Mode::create);
  std::vector<uint64_t> dims;
  if (!L.per_sample_files) dims.push_back(in.ConsumeIntegralInRange<uint64_t>(0, 3));
  for (int a = 0; a < L.spatial_axes; ++a) dims.push_back(in.ConsumeIntegralInRange<uint64_t>(1, 4));
  dims.push_back(in.ConsumeIntegralInRange<uint64_t>(1, 5));
  dims = fuzzed_dims(in, dims);
  std::vector<float> x(product(dims));
  for (auto& v : x) v = value(in, false, 0);
  const bool encoded = dims.size() >= 2 && product(dims) > 0 && in.ConsumeBool();
  if (encoded) {
    try {
      write_encoded(in, h5, L, dims, x);
    } catch (const InputError&) {  // a value the encoder refuses (NaN): stored raw instead
      if (!h5.has(L.data)) h5.write(L.data, dims, x.data());
    }
  } else {
    h5.write(L.data, dims, x.data());
  }
  std::vector<uint64_t> ldims = label_dims;
  if (!L.per_sample_files) ldims.insert(ldims.begin(), dims.empty() ? 0 : dims[0]);
  if (L.per_sample_files) ldims = {dims[0], dims.size() > 1 ? dims[1] : 1};
  ldims = fuzzed_dims(in, ldims);
  if (in.ConsumeIntegralInRange(0, 15) == 0) return;  // no labels
  std::vector<float> y(product(ldims));
  for (auto& v : y) v = value(in, true, L.classes);
  h5.write(L.labels, ldims, y.data());
}

void write_stats(FuzzedDataProvider& in, const fs::path& dir) {
  H5File h5((dir / kStatsFile).string(), H5File::Mode::create);
  for (const char* name : {kStatsMin, kStatsMax}) {
    std::vector<float> v(in.ConsumeIntegralInRange<size_t>(0, 5));
    for (auto& f : v) f = value(in, false, 0);
    h5.write(name, {v.size()}, v.data());
  }
}

void read_all(const fs::path& dir, const DataLayout& L) {
  folder_codec(dir.string(), L);
  const SampleStore store(dir.string(), L);
  const auto& shape = store.sample_shape();
  const int64_t elems = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  if (elems > (1 << 20)) return;  // a sample that large is not allocated here (the trainer allocates what the store says)
  std::vector<float> x(static_cast<size_t>(elems)), y(static_cast<size_t>(store.label_size()));
  for (int64_t id = 0; id < std::min<int64_t>(store.size(), 4); ++id) store.read(id, x.data(), y.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path dir = (fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) / fmt::format("mrplan_sample_store_fuzz_{}", ::getpid());
  return fuzz::accept_or_refuse(data, size, [](const std::string& bytes) {
    FuzzedDataProvider in(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    fs::remove_all(dir);
    fs::create_directories(dir);
    const char* workloads[] = {"cosmoflow-mrt", "deepcam", "neuron-inverter"};
    const DataLayout L = layout_for(workloads[in.ConsumeIntegralInRange(0, 2)]);
    const std::vector<uint64_t> label_dims = L.per_sample_files ? std::vector<uint64_t>{} : std::vector<uint64_t>{L.spatial_axes == 1 ? 15u : 4u};
    const int files = in.ConsumeIntegralInRange(1, 3);
    for (int f = 0; f < files; ++f) write_file(in, dir / fmt::format("f{}.h5", f), L, label_dims);
    if (L.normalise == Normalise::min_max && in.ConsumeIntegralInRange(0, 7) != 0) write_stats(in, dir);
    read_all(dir, L);
  });
}
