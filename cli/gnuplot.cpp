#include "cli/gnuplot.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace mrplan {

bool run_gnuplot(const std::string& script, const std::string& png_path) {
  const auto gp = std::filesystem::path(png_path).replace_extension(".gp");
  {
    std::ofstream f(gp);
    f << script;
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    spdlog::warn("gnuplot is not installed: wrote {} but no plot (apt-get install gnuplot-nox)", gp.string());
    return false;
  }
  const int rc = std::system(fmt::format("gnuplot '{}' 2>&1", gp.string()).c_str());
  if (rc != 0) {
    spdlog::warn("gnuplot failed on {} (exit {})", gp.string(), rc);
    return false;
  }
  return true;
}

}  // namespace mrplan
