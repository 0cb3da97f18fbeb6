#include "exec/node_share.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "exec/mllog.hpp"
#include "exec/sample_ids.hpp"
#include "exec/sample_store.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

int64_t size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

// `from` to `to` through `to`.part, renamed when whole. POSIX calls: std::filesystem's may resolve
// to the copy a PyTorch wheel exports (durable_file.hpp's remove_tree says why that matters).
void copy_file(const std::string& from, const std::string& to) {
  const std::string part = to + ".part";
  const int in = ::open(from.c_str(), O_RDONLY);
  if (in < 0) fail_input(from, "", fmt::format("cannot be read to stage it: {}", std::strerror(errno)));
  const int out = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) {
    ::close(in);
    fail_input(part, "", fmt::format("cannot be written to stage {}: {}", from, std::strerror(errno)));
  }
  std::vector<char> buf(8 << 20);
  bool ok = true;
  for (ssize_t n; ok && (n = ::read(in, buf.data(), buf.size())) != 0;) {
    ok = n > 0;
    for (ssize_t at = 0; ok && at < n;) {
      const ssize_t w = ::write(out, buf.data() + at, static_cast<size_t>(n - at));
      ok = w > 0, at += w;
    }
  }
  const int err = errno;
  ::close(in);
  if (::close(out) != 0 || !ok || ::rename(part.c_str(), to.c_str()) != 0) {
    ::unlink(part.c_str());
    fail_input(to, "", fmt::format("staging {} failed: {} (is the node's storage full?)", from, std::strerror(ok ? errno : err)));
  }
}

}  // namespace

std::vector<std::string> rank_hosts(Communicator& world) {
  constexpr size_t kSlot = 64;  // HOST_NAME_MAX on Linux
  std::array<char, kSlot> mine{};
  gethostname(mine.data(), kSlot - 1);
  std::vector<char> all(static_cast<size_t>(world.size()) * kSlot);
  world.allgather_bytes(mine.data(), kSlot, all.data());
  std::vector<std::string> hosts;
  for (size_t at = 0; at < all.size(); at += kSlot) hosts.emplace_back(&all[at], strnlen(&all[at], kSlot));
  return hosts;
}

std::vector<std::string> node_names(const std::vector<std::string>& rank_hosts) {
  std::vector<std::string> nodes;
  for (const auto& h : rank_hosts)
    if (std::find(nodes.begin(), nodes.end(), h) == nodes.end()) nodes.push_back(h);
  return nodes;
}

std::vector<int> nodes_of_ranks(Communicator& world, int ranks_per_node) {
  std::vector<int> node(static_cast<size_t>(world.size()));
  if (ranks_per_node > 0) {
    for (size_t r = 0; r < node.size(); ++r) node[r] = static_cast<int>(r) / ranks_per_node;
    return node;
  }
  const auto hosts = rank_hosts(world), nodes = node_names(hosts);
  for (size_t r = 0; r < node.size(); ++r) node[r] = static_cast<int>(std::find(nodes.begin(), nodes.end(), hosts[r]) - nodes.begin());
  return node;
}

StagedCopy stage_share(const Plan& plan, const DataLayout& layout, const std::string& data_dir, const NodeShare& share) {
  const auto t0 = std::chrono::steady_clock::now();
  StagedCopy c;
  for (const auto& [resolution, ids] : node_share_ids(plan, share.node_of_rank, share.node)) {
    const std::string folder = fmt::format("res{}", resolution);
    const SampleStore store((fs::path(data_dir) / folder).string(), layout);
    std::set<size_t> files;
    for (const int64_t id : ids)
      if (id < store.size()) files.insert(store.file_of(id));
    const fs::path to = fs::path(share.copy_dir) / folder;
    std::error_code ec;
    fs::create_directories(to, ec);
    if (ec) fail_input(to.string(), "", fmt::format("cannot be made to stage the data into (run --stage-to): {}", ec.message()));
    for (const size_t f : files) {
      const std::string& from = store.files()[f];
      const std::string dest = (to / fs::path(from).filename()).string();
      const int64_t bytes = size_of(from);
      if (bytes >= 0 && size_of(dest) == bytes) {
        ++c.kept;
      } else {
        copy_file(from, dest);
        ++c.files;
      }
      c.bytes += static_cast<double>(std::max<int64_t>(bytes, 0));
    }
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

NodeShare stage_run_data(Communicator& world, const Plan& plan, const DataLayout& layout, const std::string& data_dir, const RunOptions& o,
                         MlLog& log, Record& r) {
  const int rank = world.rank(), ranks = world.size();
  NodeShare share{nodes_of_ranks(world, o.ranks_per_node), 0, 0, o.stage_to};
  share.node = share.node_of_rank[rank];
  if (const auto at = share.copy_dir.find("{node}"); at != std::string::npos) share.copy_dir.replace(at, 6, std::to_string(share.node));
  share.nodes = *std::max_element(share.node_of_rank.begin(), share.node_of_rank.end()) + 1;
  const bool first_on_node = std::find(share.node_of_rank.begin(), share.node_of_rank.end(), share.node) - share.node_of_rank.begin() == rank;
  log.event("staging_start", "INTERVAL_START", "null");
  StagedCopy c;
  constexpr size_t kSlot = 512;
  std::array<char, kSlot> error{};
  if (first_on_node) try {
      c = stage_share(plan, layout, data_dir, share);
    } catch (const InputError& e) {
      std::snprintf(error.data(), kSlot, "%s", e.what());
    }
  std::vector<char> errors(static_cast<size_t>(ranks) * kSlot);
  world.allgather_bytes(error.data(), kSlot, errors.data());
  for (size_t at = 0; at < errors.size(); at += kSlot)
    if (errors[at] != 0) throw InputError(std::string(&errors[at], strnlen(&errors[at], kSlot)));
  std::array<double, 4> mine{c.seconds, c.bytes, static_cast<double>(c.files), static_cast<double>(c.kept)};
  std::vector<double> all(static_cast<size_t>(ranks) * mine.size());
  world.allgather_bytes(mine.data(), sizeof(mine), all.data());
  double slowest_s = 0, bytes = 0, files = 0, kept = 0;
  for (int k = 0; k < ranks; ++k) {
    slowest_s = std::max(slowest_s, all[k * 4]), bytes += all[k * 4 + 1], files += all[k * 4 + 2], kept += all[k * 4 + 3];
  }
  log.event("staging_stop", "INTERVAL_END", "null", fmt::format("{{\"staging_duration\": {:.3f}}}", slowest_s));
  if (!r.staging_s) r.staging_s = slowest_s;  // a resume stages again, but the run's staging was the first
  if (rank == 0)
    fmt::print("staged each node's share into {}: {} node(s), {:.1f} MB in all ({} file(s) copied, {} already there), slowest node {:.2f} s\n",
               o.stage_to, share.nodes, bytes / 1e6, files, kept, slowest_s);
  return share;
}

}  // namespace mrplan
