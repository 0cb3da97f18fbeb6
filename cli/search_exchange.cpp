#include "cli/search_exchange.hpp"

#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace mrplan {

namespace {

static_assert(std::is_trivially_copyable_v<Candidate> && std::is_trivially_copyable_v<SearchCounts>);

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
void put_all(std::string& out, const std::vector<Candidate>& v) {
  put(out, v.size());
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(Candidate));
}

struct Cursor {
  const std::string& in;
  size_t at = 0;
  template <class T>
  T get() {
    if (at + sizeof(T) > in.size()) throw std::runtime_error("search exchange: truncated part");
    T v;
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  std::vector<Candidate> get_all() {
    std::vector<Candidate> v(get<size_t>());
    for (auto& c : v) c = get<Candidate>();
    return v;
  }
};

std::string encode(const SearchResult& r) {
  std::string out;
  put(out, r.counts);
  put_all(out, r.best);
  put_all(out, r.per_template_best);
  put_all(out, r.front);
  put(out, r.nearest.has_value());
  if (r.nearest) put(out, *r.nearest);
  return out;
}

SearchResult decode(const std::string& in) {
  Cursor c{in};
  SearchResult r;
  r.counts = c.get<SearchCounts>();
  r.best = c.get_all();
  r.per_template_best = c.get_all();
  r.front = c.get_all();
  if (c.get<bool>()) r.nearest = c.get<Candidate>();
  return r;
}

}  // namespace

std::vector<SearchResult> allgather_results(Communicator& comm, const SearchResult& mine) {
  const std::string bytes = encode(mine);
  std::vector<SearchResult> all;
  for (int r = 0; r < comm.size(); ++r) all.push_back(decode(broadcast_text(comm, r == comm.rank() ? bytes : std::string(), r)));
  return all;
}

}  // namespace mrplan
