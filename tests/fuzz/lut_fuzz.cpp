// One lookup-table encoded sample, as the loader decodes it from a dataset (exec/codec_lut.cpp).
// The sample's shape is taken from the header, as an honest dataset's attributes would give it.
#include <cmath>
#include <cstring>
#include <vector>

#include "exec/codec_lut.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& bytes) {
    uint32_t channels = 1;
    uint64_t voxels = 1;
    if (bytes.size() >= 20) std::memcpy(&channels, bytes.data() + 8, 4), std::memcpy(&voxels, bytes.data() + 12, 8);
    if (channels == 0 || channels > 64 || voxels == 0 || voxels > (1u << 16)) channels = 1, voxels = 1;  // the output is allocated
    const mrplan::SampleShape shape{static_cast<int64_t>(voxels), static_cast<int64_t>(channels)};
    std::vector<float> out(voxels * channels);
    mrplan::ValuePipeline pipe;
    pipe.check = [](float v) {
      if (!std::isfinite(v) || v < 0) mrplan::fail_input("f.h5", "3Dmap", "not a count");
    };
    pipe.log1p = [](float* v, size_t n) {
      for (size_t i = 0; i < n; ++i) v[i] = std::log1p(v[i]);
    };
    mrplan::make_lut_codec()->decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), shape, pipe, out.data(), "sample");
  });
}
