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
// Removes `path` and, where it is a folder, everything under it, never following a link; a path
// that does not exist is no error. Not std::filesystem::remove_all: PyTorch's wheels export the
// copy of it they link statically (pytorch/pytorch#133437), and where that copy took the call a
// run's first pruned checkpoint jumped to address 0 (an H200, 2026-11-27).
void remove_tree(const std::filesystem::path& path, std::error_code& ec);
uint32_t crc32_of(const std::string& bytes);

}  // namespace mrplan
