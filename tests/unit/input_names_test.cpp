// One rule for "a built-in's name or a file?" (model/text_file: names_a_file), for plans, profiles
// and workloads alike (issue 41).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/text_file.hpp"

using namespace mrplan;
namespace fs = std::filesystem;

TEST(InputNames, APathAYamlNameOrAFileThereIsAFileAFolderOrABareNameIsNot) {
  EXPECT_TRUE(names_a_file("plans/mine"));
  EXPECT_TRUE(names_a_file("mine.yaml"));
  EXPECT_TRUE(names_a_file("mine.yml"));
  EXPECT_FALSE(names_a_file("perlmutter"));
  EXPECT_FALSE(names_a_file("cosmoflow-mrt@summit"));
  const auto dir = fs::temp_directory_path() / ("mrplan-names-" + std::to_string(::getpid()));
  fs::create_directories(dir / "summit");
  std::ofstream(dir / "myplan") << "name: x\n";
  const auto cwd = fs::current_path();
  fs::current_path(dir);
  EXPECT_TRUE(names_a_file("myplan"));   // a file that is there
  EXPECT_FALSE(names_a_file("summit"));  // a folder named like a built-in machine
  fs::current_path(cwd);
  fs::remove_all(dir);
}
