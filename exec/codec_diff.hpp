#pragma once
// DeepCAM's differential codec (preprocessing paper, section IV); see codec_diff.cpp for the bytes.
#include <memory>

#include "exec/sample_codec.hpp"

namespace mrplan {

std::unique_ptr<SampleCodec> make_diff_codec();

// The nearest FP16 value of `x` (round to nearest even), as a float.
float round_to_half(float x);

}  // namespace mrplan
