// One differential encoded sample, as the loader decodes it from a dataset (exec/codec_diff.cpp).
// The sample's shape is taken from the header, as an honest dataset's attributes would give it.
#include <cmath>
#include <cstring>
#include <vector>

#include "exec/codec_diff.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& bytes) {
    uint32_t channels = 1, line = 1;
    uint64_t voxels = 1;
    if (bytes.size() >= 24)
      std::memcpy(&channels, bytes.data() + 8, 4), std::memcpy(&voxels, bytes.data() + 12, 8), std::memcpy(&line, bytes.data() + 20, 4);
    if (channels == 0 || channels > 64 || voxels == 0 || voxels > (1u << 16) || line == 0 || voxels % line) channels = voxels = line = 1;
    const mrplan::SampleShape shape{static_cast<int64_t>(voxels), static_cast<int64_t>(channels), static_cast<int64_t>(line)};
    std::vector<float> out(voxels * channels);
    const std::vector<float> shift(channels, 1.f), scale(channels, 0.5f);
    mrplan::ValuePipeline pipe;
    pipe.check = [](float v) {
      if (!std::isfinite(v)) mrplan::fail_input("c.h5", "climate/data", "NaN or infinity");
    };
    pipe.shift = shift.data(), pipe.scale = scale.data(), pipe.half = true;
    mrplan::make_diff_codec()->decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), shape, pipe, out.data(), "sample");
  });
}
