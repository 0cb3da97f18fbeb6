#pragma once
// Checkpoint generations: a folder `gen-NNNNNN/` of files and a MANIFEST.json (the files' sizes and
// CRC-32s, the plan's hash, ranks, stage, model, epoch), written in a temporary folder, each file
// and the folder fsync'ed, then published by one rename; the last `keep` are kept. A reader takes
// the newest sound generation and reports each damaged one it skips. Torch-free.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mrplan {

// What a generation says about itself besides its files.
struct CheckpointFacts {
  std::string kind;       // "run" (state and hand-off) or "model" (one model's training state)
  std::string plan_hash;  // CRC-32 of the plan as the run wrote it (model/plan_yaml)
  int ranks = 0;
  size_t stage = 0, model = 0;
  int epoch = 0;
};

struct Generation {
  std::filesystem::path dir;
  CheckpointFacts facts;
  std::map<std::string, std::string> files;  // name -> bytes, every one checked against the manifest
};

// Publishes `files` as the next generation under `unit`, then removes all but the newest `keep`;
// first it removes what a writer killed mid-publish left (.gen-*.tmp* folders): one writer a unit.
void publish_generation(const std::filesystem::path& unit, const CheckpointFacts& facts,
                        const std::map<std::string, std::string>& files, int keep);

// The newest generation under `unit` whose manifest and files check out and, where `plan_hashes` is
// not empty, that was written for one of those plans (one copied in from another run is not); each
// one skipped is added to `skipped` as "FOLDER: why". nullopt: none is sound (or there is none).
std::optional<Generation> newest_sound_generation(const std::filesystem::path& unit, std::vector<std::string>& skipped,
                                                  const std::vector<std::string>& plan_hashes = {});
bool has_generation(const std::filesystem::path& unit);
// Removes, anywhere under `dir`, the .gen-*.tmp* folders that writers killed mid-publish left.
void remove_partial_generations(const std::filesystem::path& dir);

// A manifest's text read back into facts and per-file (bytes, crc); throws InputError naming `file`.
struct ManifestEntry {
  uint64_t bytes = 0;
  uint32_t crc32 = 0;
};
CheckpointFacts read_manifest(const std::string& text, const std::string& file, std::map<std::string, ManifestEntry>& entries);

}  // namespace mrplan
