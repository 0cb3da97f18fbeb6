#include "exec/sample_codec.hpp"

#include <fmt/format.h>

#include "exec/codec_diff.hpp"
#include "exec/codec_lut.hpp"
#include "model/errors.hpp"

namespace mrplan {

std::unique_ptr<SampleCodec> make_codec(Codec c) {
  if (c == Codec::lut) return make_lut_codec();
  if (c == Codec::diff) return make_diff_codec();
  fail_input("", codec_name(c), "is HDF5 storage, read as a plain dataset: it has no byte codec");
}

}  // namespace mrplan
