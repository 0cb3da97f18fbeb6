#pragma once
// The simulator's searches and sweeps spread their independent evaluations over threads: each
// index once, taken in turn by whichever thread is free.
#include <cstddef>
#include <functional>

namespace mrplan {

// Calls body(k, worker) for every k in [0, count) on up to `threads` threads (worker: 0..threads-1,
// the calling thread being 0). The first exception a call throws stops the indices not yet taken
// and is rethrown here once every thread has ended.
void parallel_for(size_t count, unsigned threads, const std::function<void(size_t k, unsigned worker)>& body);

// The threads parallel_for uses for `count` indices: at least one, at most one an index.
unsigned threads_for(size_t count, unsigned threads);

}  // namespace mrplan
