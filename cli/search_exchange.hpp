#pragma once
// An MPI-partitioned search: every rank's part of the result to every rank, as bytes (a Candidate
// is a plain struct), so that merge_results gives each rank the whole answer.
#include <vector>

#include "exec/communicator.hpp"
#include "sim/optimize.hpp"

namespace mrplan {

std::vector<SearchResult> allgather_results(Communicator& comm, const SearchResult& mine);

}  // namespace mrplan
