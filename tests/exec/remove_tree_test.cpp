// Folders removed without std::filesystem::remove_all (exec/durable_file): a whole tree, never
// through a link, a missing path no error (the checkpoint pruning's cases, issue 43).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "exec/durable_file.hpp"

using namespace mrplan;
namespace fs = std::filesystem;

namespace {

fs::path fresh(const std::string& name) {
  const auto d = fs::temp_directory_path() / fmt::format("mrplan-{}-{}", name, ::getpid());
  std::error_code ec;
  remove_tree(d, ec);
  fs::create_directories(d);
  return d;
}

void touch(const fs::path& p) { std::ofstream(p) << "x"; }

}  // namespace

TEST(RemoveTree, RemovesAFolderWithEverythingUnderItButNotWhatItsLinksPointTo) {
  const auto root = fresh("remove-tree");
  const auto kept = fresh("remove-tree-kept");
  fs::create_directories(root / "gen-3" / "stage0" / "model1");
  touch(root / "gen-3" / "MANIFEST.json");
  touch(root / "gen-3" / "stage0" / "model1" / "params.pt");
  touch(kept / "data.h5");
  fs::create_directory_symlink(kept, root / "gen-3" / "data");
  fs::create_symlink(kept / "data.h5", root / "gen-3" / "stage0" / "link.h5");
  std::error_code ec;
  remove_tree(root / "gen-3", ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(fs::exists(root / "gen-3"));
  EXPECT_TRUE(fs::exists(kept / "data.h5"));
  EXPECT_TRUE(fs::exists(root));
  remove_tree(root, ec);
  remove_tree(kept, ec);
}

TEST(RemoveTree, AMissingPathIsNoErrorAndAFileIsRemovedAlone) {
  const auto root = fresh("remove-tree-file");
  std::error_code ec;
  remove_tree(root / "not-there", ec);
  EXPECT_FALSE(ec);
  touch(root / "a");
  touch(root / "b");
  remove_tree(root / "a", ec);
  EXPECT_FALSE(ec);
  EXPECT_FALSE(fs::exists(root / "a"));
  EXPECT_TRUE(fs::exists(root / "b"));
  remove_tree(root, ec);
  EXPECT_FALSE(fs::exists(root));
}

TEST(RemoveTree, AFolderItCannotEmptyIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root removes from a read-only folder";
  const auto root = fresh("remove-tree-ro");
  fs::create_directories(root / "locked");
  touch(root / "locked" / "f");
  fs::permissions(root / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  std::error_code ec;
  remove_tree(root, ec);
  EXPECT_TRUE(ec);
  fs::permissions(root / "locked", fs::perms::owner_all);
  remove_tree(root, ec);
  EXPECT_FALSE(ec);
}
