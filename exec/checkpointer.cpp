#include "exec/checkpointer.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

fs::path tmp_of(const fs::path& p) { return p.string() + ".tmp"; }

// Writes `p` under a temporary name, then renames it into place.
template <class Write>
void publish(const fs::path& p, Write write) {
  write(tmp_of(p).string());
  fs::rename(tmp_of(p), p);
}

void save_module(torch::nn::Module& m, const fs::path& p) {
  publish(p, [&](const std::string& tmp) {
    torch::serialize::OutputArchive a;
    m.save(a);
    a.save_to(tmp);
  });
}

void load_module(torch::nn::Module& m, const fs::path& p) {
  if (!fs::exists(p)) fail_input(p.string(), "", "the checkpoint lacks this file");
  torch::serialize::InputArchive a;
  a.load_from(p.string());
  m.load(a);
}

void write_text(const fs::path& p, const std::string& text) {
  publish(p, [&](const std::string& tmp) {
    std::ofstream out(tmp);
    out << text;
    if (!out) fail_input(tmp, "", "cannot write the checkpoint file");
  });
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) fail_input(p.string(), "", "cannot open the checkpoint file");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail_input(p.string(), "", std::string("not a checkpoint state: ") + e.what());
  }
}

}  // namespace

void Checkpointer::save_run(const RunState& s) const {
  fs::create_directories(dir_);
  nlohmann::json j;
  j["stage"] = s.stage;
  j["record"] = nlohmann::json::parse(record_to_json(s.record));
  write_text(dir_ / "state.json", j.dump(1));
}

std::optional<RunState> Checkpointer::load_run() const {
  const auto p = dir_ / "state.json";
  if (!fs::exists(p)) return std::nullopt;
  const auto j = read_json(p);
  RunState s;
  s.stage = j.at("stage").get<size_t>();
  s.record = record_from_json(j.at("record").dump(), p.string());
  return s;
}

void Checkpointer::save_handoff(torch::nn::Module& m) const {
  fs::create_directories(dir_);
  save_module(m, dir_ / "model.pt");
}

void Checkpointer::load_handoff(torch::nn::Module& m) const { load_module(m, dir_ / "model.pt"); }

fs::path Checkpointer::model_dir(size_t stage, size_t model) const {
  return dir_ / fmt::format("stage{}", stage) / fmt::format("model{}", model);
}

void Checkpointer::save_model(size_t stage, size_t model, torch::nn::Module& module, torch::optim::Optimizer& opt,
                              const ModelProgress& p) const {
  const auto d = model_dir(stage, model);
  fs::create_directories(d);
  save_module(module, d / "model.pt");
  publish(d / "optimizer.pt", [&](const std::string& tmp) {
    torch::serialize::OutputArchive o;
    opt.save(o);
    o.save_to(tmp);
  });
  publish(d / "rng.pt", [&](const std::string& tmp) { torch::save(torch::globalContext().defaultGenerator(torch::kCPU).get_state(), tmp); });
  nlohmann::json j;
  j["epoch"] = p.epoch;
  j["total_epochs"] = p.total_epochs;
  j["losses"] = p.losses;
  j["window_losses"] = p.window_losses;
  j["record"] = nlohmann::json::parse(model_record_to_json(p.record));
  write_text(d / "progress.json", j.dump(1));  // last: what a resume trusts
}

bool Checkpointer::has_model(size_t stage, size_t model) const { return fs::exists(model_dir(stage, model) / "progress.json"); }

void Checkpointer::load_model(size_t stage, size_t model, torch::nn::Module& module, torch::optim::Optimizer& opt,
                              ModelProgress& p) const {
  const auto d = model_dir(stage, model);
  const auto j = read_json(d / "progress.json");
  p.epoch = j.at("epoch");
  p.total_epochs = j.at("total_epochs");
  p.losses = j.at("losses").get<std::vector<double>>();
  p.window_losses = j.value("window_losses", std::vector<double>{});
  p.record = model_record_from_json(j.at("record").dump(), (d / "progress.json").string());
  load_module(module, d / "model.pt");
  torch::serialize::InputArchive o;
  o.load_from((d / "optimizer.pt").string());
  opt.load(o);
  torch::Tensor rng;
  torch::load(rng, (d / "rng.pt").string());
  auto gen = torch::globalContext().defaultGenerator(torch::kCPU);
  gen.set_state(rng);
}

}  // namespace mrplan
