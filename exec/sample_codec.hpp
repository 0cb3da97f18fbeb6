#pragma once
// Encoded samples (preprocessing paper, sections IV-V): a codec turns one channel-last sample into
// bytes and back into the network's channel-first input, with the reader's checks and
// preprocessing applied where they are cheapest (a lookup table's unique values, not every voxel).
// No torch here: the loader passes its own log1p so that both paths agree bit for bit.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/codec.hpp"

namespace mrplan {

// Codec (model/codec.hpp): raw and deflate are read by HDF5 as plain datasets; lut and diff here.

struct SampleShape {
  int64_t voxels = 0;  // every spatial position of the sample
  int64_t channels = 0;
  int64_t line = 0;    // the last spatial axis' extent (diff encodes lines along it)
};

// What the reader does to each stored value, in the reference's order (data_layout.hpp).
struct ValuePipeline {
  std::function<void(float)> check;                   // throws InputError naming file and row
  std::function<void(float* values, size_t n)> log1p;  // empty: none
  const float* shift = nullptr;                        // min-max per channel, x' = (x - shift) * scale
  const float* scale = nullptr;
  bool half = false;  // round the input to FP16 precision, as the paper's decoders emit it
};

class SampleCodec {
 public:
  virtual ~SampleCodec() = default;
  virtual Codec kind() const = 0;
  virtual bool lossless() const = 0;
  // A channel-last sample (voxel-major, channels innermost) as bytes; lossless codecs keep every bit.
  virtual std::vector<uint8_t> encode(const float* sample, SampleShape shape) const = 0;
  // Bytes back into `out`, channel-first, checked and preprocessed; InputError (`where`) if the
  // bytes are not a sample of this shape.
  virtual void decode(const uint8_t* bytes, size_t size, SampleShape shape, const ValuePipeline& pipe, float* out,
                      const std::string& where) const = 0;
};

// The byte codec for `c`; InputError for raw and deflate, which HDF5 reads itself.
std::unique_ptr<SampleCodec> make_codec(Codec c);

}  // namespace mrplan
