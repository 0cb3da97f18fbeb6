#pragma once
// The studies `mrplan study NAME` runs, each printing its table and writing its CSV and plots.
#include <string>

namespace mrplan {

void run_mrt_paper_study(const std::string& csv, const std::string& plots);
void run_mrmf_paper_study(const std::string& csv, const std::string& plots);
void run_preprocessing_paper_study(const std::string& csv, const std::string& plots);

}  // namespace mrplan
