#pragma once
// What `mrplan --version` says: the version, the git commit and the build (type; exec, CUDA, NCCL).
#include <string>

namespace mrplan {
std::string version_text();
}  // namespace mrplan
