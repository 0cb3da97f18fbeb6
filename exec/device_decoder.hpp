#pragma once
// The sample decoders on the GPU (preprocessing paper, sections IV-V: decoding next to the compute,
// so that the encoded bytes, not the floats, cross the host link). A kernel per codec where the
// CUDA toolkit was found at build time; the same values, checks, preprocessing and error messages
// as the host decoders (exec/sample_codec.hpp). Neither CUDA nor torch in this header.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/sample_codec.hpp"

namespace mrplan {

// Why samples cannot be decoded on a GPU here (no kernels in this build, no GPU); empty: they can.
std::string device_decoding_unavailable();

class DeviceDecoder {
 public:
  // On CUDA device `device` (-1: the current one); InputError for raw and deflate (HDF5 reads
  // them), std::runtime_error with device_decoding_unavailable()'s reason where it is not empty.
  explicit DeviceDecoder(Codec c, int device = -1);
  ~DeviceDecoder();
  DeviceDecoder(const DeviceDecoder&) = delete;
  DeviceDecoder& operator=(const DeviceDecoder&) = delete;

  // One encoded sample in host memory into `device_out` (voxels x channels floats, channel-first,
  // in this GPU's memory); returns when it is written. A damaged sample or a value the pipeline's
  // check refuses is an InputError with the host decoder's message (it re-reads the sample).
  void decode(const uint8_t* bytes, size_t size, SampleShape shape, const ValuePipeline& pipe, float* device_out, const std::string& where);

  // The last decode(): bytes it copied to the GPU, and the seconds of that copy and of the kernels
  // (CUDA events; the host's header and table work is in neither).
  struct Timing {
    size_t copied_bytes = 0;
    double copy_s = 0, decode_s = 0;
  };
  Timing last() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// GPU memory for `count` floats (tests, benchmarks, calibration), freed with the object.
class DeviceFloats {
 public:
  explicit DeviceFloats(size_t count);
  ~DeviceFloats();
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* data() { return data_; }
  std::vector<float> to_host() const;

 private:
  float* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace mrplan
