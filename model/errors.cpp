#include "model/errors.hpp"

namespace mrplan {

void fail_input(const std::string& file, const std::string& key, const std::string& message) {
  // no file (a command-line value, a fit over data in memory): the key alone says where
  std::string where = file;
  if (!key.empty()) where += (where.empty() ? "" : ": ") + key;
  throw InputError(where.empty() ? message : where + ": " + message);
}

}  // namespace mrplan
