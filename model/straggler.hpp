#pragma once
// Waiting for the slowest rank: data-parallel ranks meet at every gradient allreduce, so each
// step lasts as long as the slowest rank's; with per-rank step times spread around their mean,
// the others wait the difference.
namespace mrplan {

// E[max of n i.i.d. standard normals] (order statistics, e.g. David & Nagaraja 2003, ch. 4):
// 0 for n = 1, 1/sqrt(pi) for n = 2, ~sqrt(2 ln n) for large n.
double expected_max_std_normal(int n);

// Mean wait per step for the slowest of `ranks` whose step times are normal with mean `step_s` and
// relative standard deviation `cv`: step_s * cv * E[max of ranks standard normals].
double straggler_wait_s(double step_s, double cv, int ranks);

}  // namespace mrplan
