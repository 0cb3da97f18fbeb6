#include "exec/checkpointer.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "exec/durable_file.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

template <class Save>
std::string bytes_of(Save save) {
  std::ostringstream s(std::ios::binary);
  save(s);
  return std::move(s).str();
}

nlohmann::json parse_json(const std::string& text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail_input(what, "", std::string("not a checkpoint state: ") + e.what());
  }
}

// LibTorch's reader errors (c10::Error) become errors naming the file.
template <class Load>
void load_or_fail(const std::string& what, Load load) {
  try {
    load();
  } catch (const c10::Error& e) {
    fail_input(what, "", fmt::format("cannot be read back: {}", e.what_without_backtrace()));
  }
}

// Float buffers (batch-norm running statistics) differ per rank: flattened, one tensor per rank.
torch::Tensor flat_buffers(torch::nn::Module& m) {
  std::vector<torch::Tensor> parts;
  for (const auto& b : m.buffers())
    if (b.is_floating_point()) parts.push_back(b.detach().to(torch::kCPU, torch::kFloat32).reshape(-1));
  return parts.empty() ? torch::zeros({0}) : torch::cat(parts);
}

void set_flat_buffers(torch::nn::Module& m, const torch::Tensor& flat, const std::string& what) {
  torch::NoGradGuard ng;
  int64_t at = 0;
  for (auto& b : m.buffers()) {
    if (!b.is_floating_point()) continue;
    if (at + b.numel() > flat.numel()) fail_input(what, "", "holds fewer buffer values than the network has");
    b.copy_(flat.slice(0, at, at + b.numel()).view_as(b));
    at += b.numel();
  }
  if (at != flat.numel()) fail_input(what, "", "holds more buffer values than the network has");
}

std::string rank_buffers_name(int r) { return fmt::format("buffers.rank{}.pt", r); }

}  // namespace

std::string module_to_bytes(torch::nn::Module& m) {
  return bytes_of([&](std::ostream& s) {
    torch::serialize::OutputArchive a;
    m.save(a);
    a.save_to(s);
  });
}

void module_from_bytes(torch::nn::Module& m, const std::string& bytes, const std::string& what) {
  load_or_fail(what, [&] {
    std::istringstream s(bytes, std::ios::binary);
    torch::serialize::InputArchive a;
    a.load_from(s);
    m.load(a);
  });
}

std::string plan_hash(const std::string& plan_yaml) { return fmt::format("{:08x}", crc32_of(plan_yaml)); }

Checkpointer::Checkpointer(fs::path dir, CheckpointIdentity id, bool report) : dir_(std::move(dir)), id_(std::move(id)), report_(report) {}

fs::path Checkpointer::model_unit(size_t stage, size_t model) const {
  return dir_ / fmt::format("stage{}", stage) / fmt::format("model{}", model);
}

Generation Checkpointer::sound_or_throw(const fs::path& unit, const std::vector<std::string>& plan_hashes) const {
  std::vector<std::string> skipped;
  auto g = newest_sound_generation(unit, skipped, plan_hashes);
  for (const auto& why : skipped)
    if (report_) fmt::print(stderr, "mrplan: warning: skipping a damaged checkpoint: {}\n", why);
  if (!g) {
    std::string all;
    for (const auto& why : skipped) all += "\n  " + why;
    fail_input(unit.string(), "", "no sound checkpoint here:" + all);
  }
  return std::move(*g);
}

void Checkpointer::save_run(const RunState& s, torch::nn::Module* handed) const {
  nlohmann::json j;
  j["stage"] = s.stage;
  j["record"] = nlohmann::json::parse(record_to_json(s.record));
  std::map<std::string, std::string> files{{"state.json", j.dump(1)}};
  if (handed) files["handoff.pt"] = module_to_bytes(*handed);
  publish_generation(dir_ / "run", {"run", id_.plan_hash, id_.ranks, s.stage, 0, 0}, files, id_.keep);
}

std::optional<LoadedRun> Checkpointer::load_run() const {
  if (report_) remove_partial_generations(dir_);
  if (!has_generation(dir_ / "run")) return std::nullopt;
  auto g = sound_or_throw(dir_ / "run", {});
  const auto what = (g.dir / "state.json").string();
  const auto j = parse_json(g.files.at("state.json"), what);
  LoadedRun r;
  r.dir = g.dir, r.facts = g.facts;
  try {
    r.state.stage = j.at("stage").get<size_t>();
  } catch (const nlohmann::json::exception& e) {
    fail_input(what, "stage", e.what());
  }
  r.state.record = record_from_json(j.at("record").dump(), what);
  if (r.state.stage != r.facts.stage || r.state.record.stages.size() != r.state.stage)
    fail_input(what, "stage", fmt::format("stage {} with {} finished stages recorded and {} in the manifest: not one run's state",
                                          r.state.stage, r.state.record.stages.size(), r.facts.stage));
  if (r.state.stage > 0 && !g.files.count("handoff.pt")) fail_input(g.dir.string(), "", "a later stage's checkpoint without handoff.pt");
  if (g.files.count("handoff.pt")) r.handoff_bytes = std::move(g.files.at("handoff.pt"));
  return r;
}

void Checkpointer::save_model(size_t stage, size_t model, torch::nn::Module& module, torch::optim::Optimizer& opt,
                              const ModelProgress& p, Communicator& group) const {
  std::map<std::string, std::string> files;
  auto mine = flat_buffers(module).contiguous();
  for (int r = 1; r < group.size(); ++r) {  // the root collects every other rank's buffers, one rank at a time
    auto t = group.rank() == r ? mine.clone() : torch::empty_like(mine);
    group.broadcast(t.data_ptr<float>(), static_cast<size_t>(t.numel()), r);
    if (group.rank() == 0) files[rank_buffers_name(r)] = bytes_of([&](std::ostream& s) { torch::save(t, s); });
  }
  if (group.rank() != 0) return;
  files["model.pt"] = module_to_bytes(module);
  files["optimizer.pt"] = bytes_of([&](std::ostream& s) {
    torch::serialize::OutputArchive o;
    opt.save(o);
    o.save_to(s);
  });
  files["rng.pt"] = bytes_of([&](std::ostream& s) { torch::save(torch::globalContext().defaultGenerator(torch::kCPU).get_state(), s); });
  nlohmann::json j;
  j["epoch"] = p.epoch;
  j["total_epochs"] = p.total_epochs;
  j["losses"] = p.losses;
  j["window_losses"] = p.window_losses;
  j["record"] = nlohmann::json::parse(model_record_to_json(p.record));
  files["progress.json"] = j.dump(1);
  publish_generation(model_unit(stage, model), {"model", id_.plan_hash, group.size(), stage, model, p.epoch}, files, id_.keep);
}

bool Checkpointer::has_model(size_t stage, size_t model) const { return has_generation(model_unit(stage, model)); }

void Checkpointer::load_model(size_t stage, size_t model, torch::nn::Module& module, torch::optim::Optimizer& opt, ModelProgress& p,
                              int group_rank) const {
  std::vector<std::string> hashes{id_.plan_hash};
  if (!id_.resumed_plan_hash.empty()) hashes.push_back(id_.resumed_plan_hash);
  const auto g = sound_or_throw(model_unit(stage, model), hashes);
  const auto file = [&](const std::string& name) -> const std::string& {
    if (!g.files.count(name)) fail_input((g.dir / name).string(), "", "the checkpoint lacks this file");
    return g.files.at(name);
  };
  const auto what = (g.dir / "progress.json").string();
  const auto j = parse_json(file("progress.json"), what);
  try {
    p.epoch = j.at("epoch");
    p.total_epochs = j.at("total_epochs");
    p.losses = j.at("losses").get<std::vector<double>>();
    p.window_losses = j.value("window_losses", std::vector<double>{});
  } catch (const nlohmann::json::exception& e) {
    fail_input(what, "", e.what());
  }
  p.record = model_record_from_json(j.at("record").dump(), what);
  module_from_bytes(module, file("model.pt"), (g.dir / "model.pt").string());
  if (group_rank > 0) {
    torch::Tensor flat;
    load_or_fail((g.dir / rank_buffers_name(group_rank)).string(), [&] {
      std::istringstream s(file(rank_buffers_name(group_rank)), std::ios::binary);
      torch::load(flat, s);
    });
    set_flat_buffers(module, flat, (g.dir / rank_buffers_name(group_rank)).string());
  }
  load_or_fail((g.dir / "optimizer.pt").string(), [&] {
    std::istringstream s(file("optimizer.pt"), std::ios::binary);
    torch::serialize::InputArchive o;
    o.load_from(s);
    opt.load(o);
  });
  torch::Tensor rng;
  load_or_fail((g.dir / "rng.pt").string(), [&] {
    std::istringstream s(file("rng.pt"), std::ios::binary);
    torch::load(rng, s);
    auto gen = torch::globalContext().defaultGenerator(torch::kCPU);
    gen.set_state(rng);
  });
}

std::string Checkpointer::last_good() const {
  // published whole, so the newest generation is sound unless damaged since (a resume checks that)
  fs::path newest;
  fs::file_time_type at{};
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir_, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.rfind("gen-", 0) != 0 || !it->is_directory()) continue;
    const auto t = fs::last_write_time(it->path(), ec);
    if (!ec && (newest.empty() || t > at)) newest = it->path(), at = t;
  }
  return newest.empty() ? "none yet" : newest.string();
}

}  // namespace mrplan
