#pragma once
// How samples are stored (preprocessing paper): raw and deflate are HDF5 storage, lut (CosmoFlow's
// lookup tables, section V) and diff (DeepCAM's differential lines, section IV) are sample codecs.
// The plan names one and where it decodes; the profile holds what each costs on its machine.
#include <string>

namespace mrplan {

enum class Codec { raw, deflate, lut, diff };
Codec codec_from_name(const std::string& name, const std::string& where);  // InputError naming `where`
const char* codec_name(Codec c);

enum class DecoderPlace { host, device };
DecoderPlace decoder_place_from_name(const std::string& name, const std::string& where);
const char* decoder_place_name(DecoderPlace d);

// One codec on one machine and dataset: fitted by `calibrate io --codec` (or given).
struct CodecRates {
  double ratio = 1;               // raw bytes / stored bytes
  double host_decode_Bps = 0;     // raw bytes a rank's host decoder emits per second, preprocessing included; 0: unknown
  double device_decode_Bps = 0;   // the same on the device; 0: unknown
  double output_bytes_per_value = 4;  // what crosses to the device per value when the host decodes (2: FP16)
};

}  // namespace mrplan
