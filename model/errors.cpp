#include "model/errors.hpp"

namespace mrplan {

std::string printable(const std::string& text) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) out += ch;
    else out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

void fail_input(const std::string& file, const std::string& key, const std::string& message) {
  // no file (a command-line value, a fit over data in memory): the key alone says where
  std::string where = file;
  if (!key.empty()) where += (where.empty() ? "" : ": ") + key;
  throw InputError(where.empty() ? message : where + ": " + message);
}

}  // namespace mrplan
