#pragma once
// A job ended from outside (SIGTERM: the scheduler's time limit, scancel, bkill, a launcher passing
// on its own signal; SIGINT: Ctrl-C) says so and how to go on, on rank 0, instead of ending silent
// (issue 44). Torch-free.
#include <string>

namespace mrplan {

// From now on SIGTERM and SIGINT print `message` (rank 0 only; prepared now: a handler may not
// allocate) and end the process with 128 + the signal, as the shell reports it. Where `note_file`
// is given, rank 0 writes the message there too: a launcher that ends on the same signal may not
// pass on what its tasks wrote last, and the run's folder keeps why it ended.
void say_when_terminated(int rank, const std::string& message, const std::string& note_file = "");

}  // namespace mrplan
