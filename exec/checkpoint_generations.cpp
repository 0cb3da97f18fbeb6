#include "exec/checkpoint_generations.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "exec/durable_file.hpp"
#include "exec/fault_injection.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "MANIFEST.json";
constexpr const char* kFormat = "mrplan checkpoint 1";

// Published generations, oldest first, by number.
std::vector<std::pair<long, fs::path>> generations(const fs::path& unit) {
  std::vector<std::pair<long, fs::path>> out;
  std::error_code ec;
  if (!fs::is_directory(unit, ec)) return out;
  for (const auto& e : fs::directory_iterator(unit, ec)) {
    const auto name = e.path().filename().string();
    if (name.size() != 10 || name.rfind("gen-", 0) != 0 || !std::all_of(name.begin() + 4, name.end(), ::isdigit)) continue;
    out.emplace_back(std::stol(name.substr(4)), e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string manifest_text(const CheckpointFacts& f, const std::map<std::string, std::string>& files) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["kind"] = f.kind, j["plan_hash"] = f.plan_hash, j["ranks"] = f.ranks;
  j["stage"] = f.stage, j["model"] = f.model, j["epoch"] = f.epoch;
  for (const auto& [name, bytes] : files) j["files"][name] = {{"bytes", bytes.size()}, {"crc32", crc32_of(bytes)}};
  return j.dump(1);
}

// Every file of `g.dir` the manifest lists, checked; throws InputError naming what is wrong.
Generation read_generation(const fs::path& dir) {
  Generation g{dir, {}, {}};
  const auto manifest = dir / kManifest;
  if (!fs::exists(manifest)) fail_input(manifest.string(), "", "missing");
  std::map<std::string, ManifestEntry> entries;
  g.facts = read_manifest(read_bytes(manifest), manifest.string(), entries);
  for (const auto& [name, want] : entries) {
    const auto p = dir / name;
    if (!fs::exists(p)) fail_input(p.string(), "", "listed in the manifest but missing");
    auto bytes = read_bytes(p);
    if (bytes.size() != want.bytes)
      fail_input(p.string(), "", fmt::format("{} bytes where the manifest says {} (truncated or overwritten)", bytes.size(), want.bytes));
    if (crc32_of(bytes) != want.crc32) fail_input(p.string(), "", "its CRC-32 differs from the manifest's (the file is damaged)");
    g.files.emplace(name, std::move(bytes));
  }
  return g;
}

}  // namespace

CheckpointFacts read_manifest(const std::string& text, const std::string& file, std::map<std::string, ManifestEntry>& entries) {
  CheckpointFacts f;
  try {
    const auto j = nlohmann::json::parse(text);
    if (j.at("format") != kFormat) fail_input(file, "format", fmt::format("expected '{}'", kFormat));
    f.kind = j.at("kind").get<std::string>(), f.plan_hash = j.at("plan_hash").get<std::string>();
    f.ranks = j.at("ranks").get<int>();
    f.stage = j.at("stage").get<size_t>(), f.model = j.at("model").get<size_t>(), f.epoch = j.at("epoch").get<int>();
    for (const auto& [name, e] : j.at("files").items()) {
      if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') fail_input(file, "files", "a file name with a path in it: " + name);
      entries[name] = {e.at("bytes").get<uint64_t>(), e.at("crc32").get<uint32_t>()};
    }
  } catch (const nlohmann::json::exception& e) {
    fail_input(file, "", std::string("not a checkpoint manifest: ") + e.what());
  }
  if (f.ranks < 1) fail_input(file, "ranks", "expected at least 1");
  return f;
}

bool has_generation(const fs::path& unit) { return !generations(unit).empty(); }

void remove_partial_generations(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> partial;
  for (auto e = fs::recursive_directory_iterator(dir, ec); !ec && e != fs::recursive_directory_iterator(); e.increment(ec))
    if (const auto name = e->path().filename().string(); e->is_directory() && name.rfind(".gen-", 0) == 0 && name.find(".tmp") != std::string::npos) {
      partial.push_back(e->path());
      e.disable_recursion_pending();
    }
  for (const auto& p : partial) remove_tree(p, ec);
}

void publish_generation(const fs::path& unit, const CheckpointFacts& facts, const std::map<std::string, std::string>& files, int keep) {
  std::error_code ec;
  remove_partial_generations(unit);
  const auto existing = generations(unit);
  const long next = existing.empty() ? 1 : existing.back().first + 1;
  const fs::path final_dir = unit / fmt::format("gen-{:06d}", next);
  const fs::path tmp = unit / fmt::format(".gen-{:06d}.tmp{}", next, ::getpid());
  try {
    fs::create_directories(unit);
    remove_tree(tmp, ec);
    fs::create_directory(tmp);
    for (const auto& [name, bytes] : files) write_synced(tmp / name, bytes);
    write_synced(tmp / kManifest, manifest_text(facts, files));  // last: a manifest vouches for files already on disk
    fsync_folder(tmp);
    act_on(fault_at("before-publish"));
    fs::rename(tmp, final_dir);
    fsync_folder(unit);
    act_on(fault_at("after-publish"));
  } catch (const fs::filesystem_error& e) {
    remove_tree(tmp, ec);
    fail_input(e.path1().string(), "", fmt::format("cannot write the checkpoint: {}", e.code().message()));
  } catch (...) {
    remove_tree(tmp, ec);
    throw;
  }
  const auto now = generations(unit);
  for (size_t i = 0; i + static_cast<size_t>(std::max(keep, 1)) < now.size(); ++i) remove_tree(now[i].second, ec);
}

std::optional<Generation> newest_sound_generation(const fs::path& unit, std::vector<std::string>& skipped,
                                                  const std::vector<std::string>& plan_hashes) {
  const auto all = generations(unit);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      auto g = read_generation(it->second);
      if (plan_hashes.empty() || std::find(plan_hashes.begin(), plan_hashes.end(), g.facts.plan_hash) != plan_hashes.end()) return g;
      skipped.push_back(fmt::format("{}: written for another plan (hash {}; this run's {}): copied in from another run?", it->second.string(),
                                    g.facts.plan_hash, plan_hashes.front()));
    } catch (const InputError& e) {
      skipped.push_back(e.what());
    }
  }
  return std::nullopt;
}

}  // namespace mrplan
