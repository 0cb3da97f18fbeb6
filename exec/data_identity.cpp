#include "exec/data_identity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "exec/fnv1a.hpp"
#include "exec/sample_store.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

void add_file(Fnv1a& hash, const fs::path& file, uintmax_t size) {
  constexpr int kSlices = 16;
  constexpr uintmax_t kSlice = 4096;
  hash.add(&size, sizeof size);
  std::ifstream in(file, std::ios::binary);
  if (!in) fail_input(file.string(), "", "cannot be read");
  std::string buf(kSlice, '\0');
  for (int k = 0; k < kSlices; ++k) {
    const uintmax_t at = size <= kSlice ? 0 : (size - kSlice) * k / (kSlices - 1);
    in.seekg(static_cast<std::streamoff>(at));
    in.read(buf.data(), static_cast<std::streamsize>(std::min(kSlice, size)));
    hash.add(buf.data(), static_cast<size_t>(in.gcount()));
    in.clear();
    if (size <= kSlice) break;
  }
}

}  // namespace

std::string data_identity(const std::vector<std::string>& folders) {
  Fnv1a hash;
  for (const auto& folder : folders) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) fail_input(folder, "", "data folder not found");
    std::vector<std::pair<std::string, uintmax_t>> files;
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file()) files.emplace_back(fs::relative(it->path(), folder).string(), it->file_size());
    if (ec) fail_input(folder, "", fmt::format("cannot be listed: {}", ec.message()));
    std::sort(files.begin(), files.end());
    hash.add(fmt::format("{} files", files.size()));
    for (const auto& [name, size] : files) {
      hash.add(name);
      add_file(hash, fs::path(folder) / name, size);
    }
  }
  return fmt::format("fnv1a64:{:016x}", hash.h);
}

void check_same_samples(const std::vector<std::string>& folders, const DataLayout& layout) {
  if (folders.size() < 2) return;
  const SampleStore first(folders.front(), layout);
  std::vector<float> want(static_cast<size_t>(first.label_size())), got(want.size());
  for (size_t k = 1; k < folders.size(); ++k) {
    const SampleStore other(folders[k], layout);
    if (other.size() != first.size())
      fail_input(folders[k], "", fmt::format("holds {} samples, {} holds {}: the resolutions of one dataset hold the same samples "
                                             "(mrplan coarsen makes them)", other.size(), folders.front(), first.size()));
    if (layout.task != Task::regression || other.label_size() != first.label_size()) continue;
    for (const int64_t id : {int64_t{0}, first.size() / 2, first.size() - 1}) {
      first.read_labels(id, want.data());
      other.read_labels(id, got.data());
      if (want != got)
        fail_input(folders[k], "", fmt::format("sample {}'s labels differ from {}'s: a coarse copy of another dataset? (mrplan coarsen "
                                               "makes one from the dense folder)", id, folders.front()));
    }
  }
}

}  // namespace mrplan
