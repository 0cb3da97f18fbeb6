#include "exec/sample_codec.hpp"

#include <fmt/format.h>

#include "exec/codec_diff.hpp"
#include "exec/codec_lut.hpp"
#include "model/errors.hpp"

namespace mrplan {

Codec codec_from_name(const std::string& name, const std::string& where) {
  for (Codec c : {Codec::raw, Codec::deflate, Codec::lut, Codec::diff})
    if (name == codec_name(c)) return c;
  fail_input(where, "codec", fmt::format("unknown codec '{}': expected raw, deflate, lut or diff", name));
}

const char* codec_name(Codec c) {
  switch (c) {
    case Codec::raw: return "raw";
    case Codec::deflate: return "deflate";
    case Codec::lut: return "lut";
    case Codec::diff: return "diff";
  }
  return "?";
}

std::unique_ptr<SampleCodec> make_codec(Codec c) {
  if (c == Codec::lut) return make_lut_codec();
  if (c == Codec::diff) return make_diff_codec();
  fail_input("", codec_name(c), "is HDF5 storage, read as a plain dataset: it has no byte codec");
}

}  // namespace mrplan
