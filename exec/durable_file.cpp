#include "exec/durable_file.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include <boost/crc.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "exec/fault_injection.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail_io(const fs::path& p, const std::string& doing, int err) {
  fail_input(p.string(), "", doing + ": " + std::strerror(err));
}

}  // namespace

void write_synced(const fs::path& path, const std::string& bytes) {
  const auto fault = fault_at("checkpoint-write");
  act_on(fault);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_io(path, "cannot create the file", errno);
  size_t done = 0;
  int err = fault == FaultAction::enospc ? ENOSPC : 0;
  while (err == 0 && done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    else done += static_cast<size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    std::error_code ignored;
    fs::remove(path, ignored);
    fail_io(path, "cannot write the file", err);
  }
}

void fsync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_io(folder, "cannot open the folder", errno);
  const int rc = ::fsync(fd), err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) fail_io(folder, "cannot sync the folder", err);  // EINVAL: a file system without folder sync
}

void write_atomically(const fs::path& path, const std::string& bytes) {
  const fs::path tmp = path.string() + ".tmp";
  write_synced(tmp, bytes);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    fail_io(path, "cannot rename the file into place", ec.value());
  }
  fsync_folder(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_input(path.string(), "", "cannot open the file");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail_input(path.string(), "", "cannot read the file");
  return std::move(s).str();
}

uint32_t crc32_of(const std::string& bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

void remove_tree(const fs::path& path, std::error_code& ec) {
  ec.clear();
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) ec.assign(errno, std::generic_category());
    return;
  }
  // children before their folder (FTW_DEPTH), links removed as links (FTW_PHYS)
  auto remove_one = [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p) == 0 || errno == ENOENT ? 0 : errno; };
  if (const int err = ::nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS); err != 0) ec.assign(err > 0 ? err : errno, std::generic_category());
}

}  // namespace mrplan
