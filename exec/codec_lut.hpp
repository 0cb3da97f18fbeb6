#pragma once
// CosmoFlow's lookup-table codec (preprocessing paper, section V); see codec_lut.cpp for the bytes.
#include <memory>

#include "exec/sample_codec.hpp"

namespace mrplan {

std::unique_ptr<SampleCodec> make_lut_codec();

}  // namespace mrplan
