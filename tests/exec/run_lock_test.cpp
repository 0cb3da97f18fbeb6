// A run's folder is held by one run at a time (exec/run_lock), and a data folder's identity tells
// another dataset from the same one moved (exec/data_identity): what a resume checks (issue 44).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "exec/data_identity.hpp"
#include "exec/data_layout.hpp"
#include "exec/run_lock.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/scratch_data.hpp"

using namespace mrplan;
using mrplan::testing::error_of;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const auto d = fs::temp_directory_path() / fmt::format("mrplan-{}-{}", name, ::getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace

TEST(RunLock, OneRunAFolderAndAStaleLockIsTakenOver) {
  const auto dir = scratch("lock");
  {
    RunLock first(dir);
    EXPECT_EQ(fs::exists(dir / "run.lock"), true);
    const auto err = error_of([&] { RunLock second(dir); });
    EXPECT_NE(err.find("another run writes here (process " + std::to_string(::getpid())), std::string::npos) << err;
  }
  EXPECT_FALSE(fs::exists(dir / "run.lock"));  // released with the run
  // a lock left by a process of this host that is gone (pid 2^22 + 1 is above Linux's pid_max default)
  const std::string host = RunLock::holder_text().substr(0, RunLock::holder_text().find(' '));
  write(dir / "run.lock", host + " 4194305");
  EXPECT_EQ(error_of([&] { RunLock taken(dir); }), "<no error>");
  write(dir / "run.lock", "another-host 12");  // another host's: cannot be told stale from here
  EXPECT_NE(error_of([&] { RunLock refused(dir); }).find("on host another-host"), std::string::npos);
  fs::remove_all(dir);
}

TEST(DataIdentity, AnotherDatasetDiffersAndTheSameOneMovedDoesNot) {
  const auto dir = scratch("data");
  const std::string big(100000, 'a');
  write(dir / "one/res1/s0.h5", big), write(dir / "one/res1/s1.h5", "xy");
  write(dir / "two/res1/s0.h5", big), write(dir / "two/res1/s1.h5", "xy");
  std::string other = big;
  other[100] = 'b';  // same names and sizes, other samples (in a slice the hash reads: it samples, docs say so)
  write(dir / "three/res1/s0.h5", other), write(dir / "three/res1/s1.h5", "xy");
  const auto id = data_identity({(dir / "one/res1").string()});
  EXPECT_EQ(id.rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(data_identity({(dir / "two/res1").string()}), id);
  EXPECT_NE(data_identity({(dir / "three/res1").string()}), id);
  EXPECT_EQ(error_of([&] { data_identity({(dir / "none").string()}); }), (dir / "none").string() + ": data folder not found");
  fs::remove_all(dir);
}

TEST(DataIdentity, TheResolutionsOfOneDatasetHoldTheSameSamples) {
  const auto dir = scratch("resolutions");
  DatagenOptions o;
  o.samples = 12, o.size = 8, o.samples_per_file = 4, o.threads = 1;
  mrplan::testing::make_two_resolutions(dir / "a", o);
  o.seed = 2;
  mrplan::testing::make_two_resolutions(dir / "b", o);  // another dataset: other labels
  o.seed = 1, o.samples = 8;
  mrplan::testing::make_two_resolutions(dir / "c", o);  // fewer samples
  const auto layout = layout_for("cosmoflow-mrt");
  auto f = [&](const char* set, const char* res) { return (dir / set / res).string(); };
  EXPECT_EQ(error_of([&] { check_same_samples({f("a", "res2"), f("a", "res1")}, layout); }), "<no error>");
  EXPECT_NE(error_of([&] { check_same_samples({f("b", "res2"), f("a", "res1")}, layout); }).find("sample 0's labels differ from"),
            std::string::npos);
  EXPECT_NE(error_of([&] { check_same_samples({f("c", "res2"), f("a", "res1")}, layout); }).find("holds 12 samples, "),
            std::string::npos);
  fs::remove_all(dir);
}
