#include "exec/sample_ids.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

namespace mrplan {

namespace {

// The permutation of groups over members, the same on every rank: all at once, or node by node
// (each node's members' own groups shuffled among them, nodes taken in order of their first member).
std::vector<int> group_owners(int members, std::mt19937_64& shared, const MemberNodes& nodes) {
  std::vector<int> owner(members);
  std::iota(owner.begin(), owner.end(), 0);
  if (nodes.empty()) {
    std::shuffle(owner.begin(), owner.end(), shared);
    return owner;
  }
  std::vector<int> seen;
  for (int i = 0; i < members; ++i) {
    if (std::find(seen.begin(), seen.end(), nodes[i]) != seen.end()) continue;
    seen.push_back(nodes[i]);
    std::vector<int> on_node;
    for (int k = i; k < members; ++k)
      if (nodes[k] == nodes[i]) on_node.push_back(k);
    std::vector<int> groups = on_node;
    std::shuffle(groups.begin(), groups.end(), shared);
    for (size_t k = 0; k < on_node.size(); ++k) owner[on_node[k]] = groups[k];
  }
  return owner;
}

std::pair<int64_t, int64_t> block_of(int64_t n, int member, int members) {  // the first n % members blocks one longer
  const int64_t base = n / members, extra = n % members;
  const int64_t begin = member * base + std::min<int64_t>(member, extra);
  return {begin, begin + base + (member < extra ? 1 : 0)};
}

}  // namespace

std::vector<int64_t> restricted_shuffle(int64_t n_train, int member, int members, int local_batch, uint64_t seed, int epoch,
                                        const MemberNodes& nodes) {
  const int64_t group = n_train / members;
  const int64_t iters = group / local_batch;
  std::mt19937_64 shared(seed * 1000003ULL + static_cast<uint64_t>(epoch));
  const int64_t g = group_owners(members, shared, nodes)[member];
  std::vector<int64_t> ids(static_cast<size_t>(group));
  std::iota(ids.begin(), ids.end(), g * group);
  std::mt19937_64 local(seed * 7919ULL + static_cast<uint64_t>(epoch) * 104729ULL + static_cast<uint64_t>(g));
  std::shuffle(ids.begin(), ids.end(), local);
  ids.resize(static_cast<size_t>(iters * local_batch));
  return ids;
}

std::vector<int64_t> validation_ids(int64_t n_train, int64_t n_validation, int member, int members, bool node_bound) {
  std::vector<int64_t> ids;
  if (!node_bound) {
    for (int64_t v = member; v < n_validation; v += members) ids.push_back(n_train + v);
    return ids;
  }
  const auto [begin, end] = block_of(n_validation, member, members);
  for (int64_t v = begin; v < end; ++v) ids.push_back(n_train + v);
  return ids;
}

std::vector<int64_t> recompute_ids(int64_t n_train, int member, int members, int64_t count, bool node_bound) {
  std::vector<int64_t> ids;
  if (!node_bound) {
    for (int64_t v = member; v < n_train && static_cast<int64_t>(ids.size()) < count; v += members) ids.push_back(v);
    return ids;
  }
  const int64_t group = n_train / members;
  for (int64_t v = member * group; v < (member + 1) * group && static_cast<int64_t>(ids.size()) < count; ++v) ids.push_back(v);
  return ids;
}

size_t model_of_rank(const Stage& st, int rank) {
  int first = 0;
  for (size_t j = 0; j < st.models.size(); ++j) {
    first += st.models[j].gpus;
    if (rank < first) return j;
  }
  return st.models.size() - 1;
}

int first_rank_of(const Stage& st, size_t model) {
  int first = 0;
  for (size_t j = 0; j < model; ++j) first += st.models[j].gpus;
  return first;
}

MemberNodes member_nodes(const Stage& st, size_t model, const std::vector<int>& node_of_rank) {
  const int first = first_rank_of(st, model);
  return MemberNodes(node_of_rank.begin() + first, node_of_rank.begin() + first + st.models[model].gpus);
}

std::map<int, std::vector<int64_t>> node_share_ids(const Plan& plan, const std::vector<int>& node_of_rank, int node) {
  std::map<int, std::set<int64_t>> ids;
  for (const auto& st : plan.stages)
    for (size_t m = 0; m < st.models.size(); ++m) {
      const MemberNodes nodes = member_nodes(st, m, node_of_rank);
      const int members = static_cast<int>(nodes.size());
      const int64_t group = plan.train_samples / members;
      for (int i = 0; i < members; ++i) {
        if (nodes[i] != node) continue;
        auto& mine = ids[st.models[m].resolution];
        for (int64_t v = i * group; v < (i + 1) * group; ++v) mine.insert(v);
        for (const int64_t v : validation_ids(plan.train_samples, plan.validation_samples, i, members, true)) mine.insert(v);
      }
    }
  std::map<int, std::vector<int64_t>> out;
  for (auto& [r, s] : ids) out[r].assign(s.begin(), s.end());
  return out;
}

}  // namespace mrplan
