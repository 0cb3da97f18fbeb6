#include "calibrate/system_json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <vector>

#include "calibrate/json_strict.hpp"
#include "model/errors.hpp"
#include "model/hardware_catalogue.hpp"
#include "model/text_file.hpp"

namespace mrplan {

namespace {

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out(1);
  for (const char ch : text) {
    if (std::isalnum(static_cast<unsigned char>(ch))) out.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    else if (!out.back().empty()) out.emplace_back();
  }
  if (out.back().empty()) out.pop_back();
  // a size written apart is the catalogue's one word: "A100 - PCIe - 80 GB" names A100-PCIE-80GB
  for (size_t i = 0; i + 1 < out.size(); ++i)
    if (std::all_of(out[i].begin(), out[i].end(), ::isdigit) && (out[i + 1] == "GB" || out[i + 1] == "TB"))
      out[i] += out[i + 1], out.erase(out.begin() + static_cast<long>(i) + 1);
  return out;
}

// The entries sharing most words with the text ("A100 80GB": A100-PCIE-80GB, A100-SXM4-80GB), else all.
template <class Map>
std::string nearest_parts(const Map& parts, const std::set<std::string>& have) {
  std::vector<std::string> near, all;
  long most = 0;
  for (const auto& [name, spec] : parts) {
    all.push_back(name);
    const auto w = words_of(name);
    const auto shared = std::count_if(w.begin(), w.end(), [&](const std::string& x) { return have.count(x) > 0; });
    if (shared > most) most = shared, near.clear();
    if (shared > 0 && shared == most) near.push_back(name);
  }
  return near.empty() ? fmt::format("known: {}", fmt::join(all, ", ")) : fmt::format("nearest: {}", fmt::join(near, ", "));
}

// The catalogue entry a free text names: every word of its name, or of one of its aliases, is among
// the text's words; the entry matched by the most words wins ("HDR 100" is HDR100, not HDR200's
// alias "HDR"). Empty, with the reason in `why` (quoting the field's `value`), where none or several match.
template <class Map>
std::string match_part(const Map& parts, const std::string& field, const std::string& value, std::string& why,
                       const std::string& text) {
  const auto words = words_of(text);
  const std::set<std::string> have(words.begin(), words.end());
  size_t best = 0;
  std::vector<std::string> named;
  for (const auto& [name, spec] : parts) {
    std::vector<std::string> names{name};
    names.insert(names.end(), spec.aliases.begin(), spec.aliases.end());
    size_t most = 0;
    for (const auto& n : names) {
      const auto w = words_of(n);
      if (!w.empty() && std::all_of(w.begin(), w.end(), [&](const std::string& x) { return have.count(x) > 0; })) most = std::max(most, w.size());
    }
    if (most > best) best = most, named.clear();
    if (most > 0 && most == best) named.push_back(name);
  }
  if (named.size() == 1) return named.front();
  if (!named.empty()) why = fmt::format("{} '{}' could be any of {}", field, value, fmt::join(named, ", "));
  else why = fmt::format("{} '{}' names no part of the catalogue ({})", field, value, nearest_parts(parts, have));
  return "";
}

// MLPerf's system descriptions give numbers as text ("8") or as numbers; absent or null is "".
std::string field_text(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// Free text is scanned by hand, not by std::regex, whose matching recurses with the text's length.
std::string trimmed(const std::string& t) {
  const auto b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
  return b == std::string::npos ? "" : t.substr(b, e - b + 1);
}

// A count: "8" or " 8 ", at least 1.
std::optional<int> count_in(const std::string& text) {
  const auto t = trimmed(text);
  int n = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (t.empty() || t.size() > 6 || ec != std::errc() || end != t.data() + t.size() || n < 1) return std::nullopt;
  return n;
}

std::optional<int> field_count(const nlohmann::json& j, const char* key) { return count_in(field_text(j, key)); }

// Capacities as submitters write them: "2 TB", "256 GB DDR4", "980Gb" (meaning GB); in GB. With
// several ("2x 1.92TB NVMe SSD + 30TB U.2 NVMe SSD"), the largest: the data drive, not the OS pair.
std::optional<double> largest_capacity_GB(const std::string& text) {
  std::optional<double> best;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool inside = i > 0 && (std::isdigit(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.');  // not a number's tail
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || inside) continue;
    char* end = nullptr;
    const double v = std::strtod(text.c_str() + i, &end);
    size_t at = static_cast<size_t>(end - text.c_str());
    while (at < text.size() && text[at] == ' ') ++at;
    const char unit = at < text.size() ? static_cast<char>(std::toupper(static_cast<unsigned char>(text[at]))) : 0;
    if (unit != 'G' && unit != 'T') continue;
    if (at + 1 < text.size() && std::toupper(static_cast<unsigned char>(text[at + 1])) == 'I') ++at;
    if (at + 1 >= text.size() || std::toupper(static_cast<unsigned char>(text[at + 1])) != 'B') continue;
    const double gb = v * (unit == 'T' ? 1000.0 : 1.0);
    if (std::isfinite(gb) && gb > 0 && (!best || gb > *best)) best = gb;
  }
  return best;
}

bool mentions(const std::string& text, const char* word) {
  const auto w = words_of(text);
  std::string all;
  for (const auto& x : w) all += x + " ";
  return all.find(word) != std::string::npos;
}

// "Storage: 2x ConnectX-6 IB HDR 200Gb/sec, Management: ..., Compute: 8x ConnectX-6 IB HDR ..." ->
// the compute part; "4xHDR (Mellanox 200 Gbit InfiniBand ConnectX 6)" -> all of it.
void read_network(const nlohmann::json& j, const HardwareCatalogue& c, SystemDescription& d) {
  const auto text = field_text(j, "host_networking");
  if (text.empty()) return void(d.unread["--node-network"] = "host_networking is not given");
  std::string part = text;
  const std::string lower = lower_case(text);
  if (const auto at = lower.find("compute"); at != std::string::npos) {
    const auto colon = lower.find_first_not_of(' ', at + 7);
    if (colon != std::string::npos && lower[colon] == ':') part = text.substr(colon + 1, text.find_first_of(",;", colon) - colon - 1);
  }
  std::optional<int> adapters = field_count(j, "host_network_card_count");
  part = trimmed(part);
  if (const auto x = part.find_first_of("xX"); x != std::string::npos && x > 0 && count_in(part.substr(0, x)))
    adapters = count_in(part.substr(0, x)), part = part.substr(x + 1);
  std::string why;
  const auto kind = match_part(c.links, "host_networking", text, why, part);
  if (kind.empty()) return void(d.unread["--node-network"] = why);
  if (!adapters) return void(d.unread["--node-network"] = fmt::format("host_networking '{}' gives no count of adapters per node", text));
  d.request.node_network = fmt::format("{}x {}", *adapters, kind);
}

// The NVLink generation a description names ("NVLink-3", "NVLink2", "NVLINK 3.0", "NVLINK Gen4"),
// 0 where it names none.
int named_nvlink_generation(const std::string& text) {
  const auto w = words_of(text);
  auto digits = [](const std::string& s, size_t from) {
    return from < s.size() && std::all_of(s.begin() + static_cast<long>(from), s.end(), ::isdigit) ? std::stoi(s.substr(from)) : 0;
  };
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i].rfind("NVLINK", 0) != 0) continue;
    if (w[i].size() > 6) return digits(w[i], 6);
    if (i + 1 < w.size()) return w[i + 1].rfind("GEN", 0) == 0 ? digits(w[i + 1], 3) : digits(w[i + 1], 0);
  }
  return 0;
}

// The GPUs' link inside a node: their generation's NVSwitch or NVLink, where the description says one
// and names no other generation than the catalogue gives the GPU (an unknown one is not read as it).
void read_intra(const nlohmann::json& j, const HardwareCatalogue& c, SystemDescription& d) {
  const auto text = field_text(j, "accelerator_interconnect");
  const bool switched = mentions(text, "NVSWITCH");
  if (text.empty() && !implied_intra_link(c, d.request.gpu, d.request.gpus_per_node, d.request.host_link).empty())
    return;  // no link of their own to name
  if (text.empty()) {
    d.unread["--intra"] = "accelerator_interconnect is not given";
  } else if ((switched || mentions(text, "NVLINK")) && !d.request.gpu.empty()) {
    const GpuSpec& gpu = c.gpu(d.request.gpu);
    d.request.intra = switched && !gpu.nvswitch.empty() ? gpu.nvswitch : gpu.nvlink;
    const int named = named_nvlink_generation(text);
    if (d.request.intra.empty()) {
      d.unread["--intra"] = fmt::format("accelerator_interconnect '{}': the catalogue gives the {} no NVLink", text, d.request.gpu);
    } else if (named > 0 && gpu.nvlink != fmt::format("NVLink{}", named)) {
      d.unread["--intra"] = fmt::format("accelerator_interconnect '{}' names NVLink {}, but the catalogue's {} has {}", text, named,
                                        d.request.gpu, gpu.nvlink.empty() ? "none" : gpu.nvlink);
      d.request.intra.clear();
    }
  } else if (std::string why; (d.request.intra = match_part(c.links, "accelerator_interconnect", text, why, text)).empty()) {
    d.unread["--intra"] = why;
  }
}

void read_host(const nlohmann::json& j, const HardwareCatalogue& c, SystemDescription& d) {
  std::string why;
  const auto model = field_text(j, "host_processor_model_name");
  const auto cpu = model.empty() ? "" : match_part(c.cpus, "host_processor_model_name", model, why, model);
  const auto sockets = field_count(j, "host_processors_per_node");
  if (!cpu.empty() && sockets) d.request.cpu = fmt::format("{}x {}", *sockets, cpu);
  else d.unread["--cpu"] = model.empty() ? "host_processor_model_name is not given" : !why.empty() ? why : "host_processors_per_node is not a count";
  const auto memory = field_text(j, "host_memory_capacity");
  if (const auto gb = largest_capacity_GB(memory)) d.request.host_memory_GB = *gb;
  else d.unread["--host-memory-GB"] = fmt::format("host_memory_capacity '{}' gives no size", memory);
  if (!mentions(field_text(j, "host_storage_type"), "NVME")) return;
  const auto storage = field_text(j, "host_storage_capacity");
  if (const auto gb = largest_capacity_GB(storage)) d.request.nvme_TB = *gb / 1000;
  else d.unread["--nvme-TB"] = fmt::format("host_storage_capacity '{}' gives no size", storage);
}

}  // namespace

std::string software_name(const std::string& framework_field) {
  std::vector<std::string> kept;
  for (const auto& word : words_of(framework_field)) {
    if (std::any_of(word.begin(), word.end(), [](unsigned char ch) { return std::isdigit(ch); })) continue;  // a version or a build
    const auto w = lower_case(word);
    kept.push_back(w == "torch" ? "pytorch" : w);
  }
  return fmt::format("{}", fmt::join(kept, " "));
}

SystemDescription system_from_json_text(const std::string& text, const std::string& file, const HardwareCatalogue& c) {
  const auto j = parse_json_strict(text, file, "");
  if (!j.is_object()) fail_input(file, "", "expected an MLPerf system description: a JSON object of fields");
  SystemDescription d;
  if (const auto name = field_text(j, "system_name"); !name.empty()) d.request.name = name;
  std::string why;
  const auto gpu = field_text(j, "accelerator_model_name");
  d.request.gpu = gpu.empty() ? "" : match_part(c.gpus, "accelerator_model_name", gpu, why, gpu);
  if (d.request.gpu.empty()) d.unread["--gpu"] = gpu.empty() ? "accelerator_model_name is not given" : why;
  if (const auto n = field_count(j, "accelerators_per_node")) d.request.gpus_per_node = *n;
  else d.unread["--gpus-per-node"] = fmt::format("accelerators_per_node '{}' is not a count of GPUs", field_text(j, "accelerators_per_node"));
  read_network(j, c, d);
  read_intra(j, c, d);
  read_host(j, c, d);
  d.software = software_name(field_text(j, "framework"));
  return d;
}

SystemDescription load_system_json(const std::string& path, const HardwareCatalogue& c) {
  return system_from_json_text(read_text_file(path, "the system description"), path, c);
}

std::string system_json_beside(const std::string& log_or_folder) {
  namespace fs = std::filesystem;
  // SYSTEM is two (../shared: SYSTEM/BENCHMARK/log) or three (results/SYSTEM/strong/BENCHMARK/log) levels above a log
  fs::path system = fs::path(log_or_folder);
  for (int up = 0; up < 4 && system.has_relative_path(); ++up, system = system.parent_path()) {
    const fs::path json = fs::path(system.filename().string() + ".json");
    for (const fs::path& submitter : {system.parent_path(), system.parent_path().parent_path()})
      if (const auto f = submitter / "systems" / json; !submitter.empty() && fs::is_regular_file(f)) return f.string();
  }
  return "";
}

std::string software_in(const std::string& system_json) {
  if (system_json.empty()) return "";
  try {
    return load_system_json(system_json, builtin_catalogue()).software;
  } catch (const InputError&) {  // a description that will not read names no framework: the logs stay usable
    return "";
  }
}

std::string software_beside(const std::string& log_or_folder) { return software_in(system_json_beside(log_or_folder)); }

}  // namespace mrplan
