// Built without the CUDA toolkit: no device decoders, and a reason that says how to get them.
#include <stdexcept>

#include "exec/device_decoder.hpp"

namespace mrplan {

std::string device_decoding_unavailable() {
  return "this mrplan was built without the CUDA toolkit (nvcc was not found when cmake configured it): the device decoders "
         "are not compiled";
}

struct DeviceDecoder::State {};

DeviceDecoder::DeviceDecoder(Codec c, int) {
  make_codec(c);  // InputError for raw and deflate, as with the kernels
  throw std::runtime_error("device decoder: " + device_decoding_unavailable());
}
DeviceDecoder::~DeviceDecoder() = default;
void DeviceDecoder::decode(const uint8_t*, size_t, SampleShape, const ValuePipeline&, float*, const std::string&) {}
DeviceDecoder::Timing DeviceDecoder::last() const { return {}; }

DeviceFloats::DeviceFloats(size_t) { throw std::runtime_error("device memory: " + device_decoding_unavailable()); }
DeviceFloats::~DeviceFloats() = default;
std::vector<float> DeviceFloats::to_host() const { return {}; }

}  // namespace mrplan
