#include "sim/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mrplan {

unsigned threads_for(size_t count, unsigned threads) {
  return std::max(1u, static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(count, 1))));
}

void parallel_for(size_t count, unsigned threads, const std::function<void(size_t k, unsigned worker)>& body) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  auto worker = [&](unsigned w) {
    try {
      for (size_t k; (k = next.fetch_add(1)) < count;) body(k, w);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!error) error = std::current_exception();
      next = count;
    }
  };
  const unsigned n = threads_for(count, threads);
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < n; ++i) pool.emplace_back(worker, i);
  worker(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace mrplan
