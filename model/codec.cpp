#include "model/codec.hpp"

#include <fmt/format.h>

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

DecoderPlace decoder_place_from_name(const std::string& name, const std::string& where) {
  if (name == "host") return DecoderPlace::host;
  if (name == "device") return DecoderPlace::device;
  fail_input(where, "decoder", fmt::format("unknown decoder place '{}': expected host or device", name));
}

const char* decoder_place_name(DecoderPlace d) { return d == DecoderPlace::host ? "host" : "device"; }

}  // namespace mrplan
