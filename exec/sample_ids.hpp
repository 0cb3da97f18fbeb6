#pragma once
// Which samples each rank reads: the MRT paper's restricted shuffling for training, a share of the
// held-out samples for validation and batch-norm recomputation, and, where a run stages each node's
// share of the data (`run --stage-to`), the same rules kept inside the node so that the node's copy
// is all its ranks read. Torch-free: the staging computes a node's files from these rules.
#include <cstdint>
#include <map>
#include <vector>

#include "model/plan.hpp"

namespace mrplan {

// The node of each member of a model's group of ranks (member i: the group's i-th rank); empty
// where the run reads one shared copy of the data and any rank may read any sample.
using MemberNodes = std::vector<int>;

// MRT III-D: N training samples in P contiguous groups; each epoch the groups are shuffled across
// the members and a member draws its batches from its group. With `nodes`, the groups are shuffled
// among the members of one node only (the per-node shards of MLPerf HPC's staged references), so
// that a node reads the same groups every epoch. Returns `member`'s ids, batch after batch
// (iterations * local_batch of them), the same on every run for (seed, epoch).
std::vector<int64_t> restricted_shuffle(int64_t n_train, int member, int members, int local_batch, uint64_t seed, int epoch,
                                        const MemberNodes& nodes = {});

// The held-out ids (after the training ids) `member` validates: every members-th one or, node-bound,
// a contiguous block, so that a node's ranks read a block of the files.
std::vector<int64_t> validation_ids(int64_t n_train, int64_t n_validation, int member, int members, bool node_bound);

// Up to `count` training ids batch norm is recomputed over before a validation: every members-th
// one or, node-bound, the first of the member's own group.
std::vector<int64_t> recompute_ids(int64_t n_train, int member, int members, int64_t count, bool node_bound);

// Ranks [0, g0) train model 0 of the stage, [g0, g0 + g1) model 1, and so on.
size_t model_of_rank(const Stage& st, int rank);
int first_rank_of(const Stage& st, size_t model);
// The nodes of model `model`'s members, from every world rank's node.
MemberNodes member_nodes(const Stage& st, size_t model, const std::vector<int>& node_of_rank);

// Every sample id the ranks on `node` read over the whole plan, node-bound: per resolution, sorted
// and unique (training groups and validation blocks of every model of every stage on the node).
std::map<int, std::vector<int64_t>> node_share_ids(const Plan& plan, const std::vector<int>& node_of_rank, int node);

}  // namespace mrplan
