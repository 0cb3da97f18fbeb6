#pragma once
// `mrplan` starts at once because it links no LibTorch, MPI or CUDA; the commands that train or
// time the machine live in `mrplan-exec` beside it, and `mrplan` hands them over.
#include <string>
#include <utility>
#include <vector>

namespace mrplan {

// The commands mrplan-exec runs, with what `mrplan --help` says of them.
const std::vector<std::pair<std::string, std::string>>& exec_commands();
bool is_exec_command(const std::string& name);

// Replaces this process with mrplan-exec (same arguments, same environment: an MPI launcher's
// rank stays the rank); throws InputError when the build has none.
[[noreturn]] void run_exec_program(char** argv);

}  // namespace mrplan
