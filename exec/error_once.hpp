#pragma once
// An error the ranks of a job meet alike (the same bad file, the same non-finite loss) is printed
// once: the first rank to claim it in the run's folder, which the ranks share as they share the
// heartbeats, prints it; the others end quietly.
#include <filesystem>
#include <string>

namespace mrplan {

// True when this rank is the first of the job (named by `job_token`, so that an earlier run's
// claims in the same folder do not count) to report `message`. Where no claim can be written (the
// run's folder, dir's parent, does not exist yet), rank 0 reports.
bool first_to_report(const std::filesystem::path& dir, const std::string& job_token, const std::string& message, int rank);

}  // namespace mrplan
