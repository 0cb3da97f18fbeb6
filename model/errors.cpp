#include "model/errors.hpp"

namespace mrplan {

void fail_input(const std::string& file, const std::string& key, const std::string& message) {
  std::string where = file.empty() ? std::string("<input>") : file;
  if (!key.empty()) where += ": " + key;
  throw InputError(where + ": " + message);
}

}  // namespace mrplan
