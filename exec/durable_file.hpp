#pragma once
// Files that survive a crash: written whole, fsync'ed, then renamed into place with the folder
// fsync'ed too (the order POSIX needs for a rename to be durable). A failed write (a full disk) is
// an InputError naming the path, and leaves no temporary behind. Torch-free.
#include <cstdint>
#include <filesystem>
#include <string>

namespace mrplan {

// Writes `bytes` to `path` and fsyncs it (no rename: `path` is already a temporary's).
void write_synced(const std::filesystem::path& path, const std::string& bytes);
// Writes `path` whole or not at all: a temporary beside it, fsync, rename, fsync of the folder.
void write_atomically(const std::filesystem::path& path, const std::string& bytes);
void fsync_folder(const std::filesystem::path& folder);
std::string read_bytes(const std::filesystem::path& path);
uint32_t crc32_of(const std::string& bytes);

}  // namespace mrplan
