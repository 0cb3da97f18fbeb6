#pragma once
// `mrplan study mrt-paper`: every number of the MRT paper's Tables I-VIII beside mrplan's
// prediction from the calibrated built-in profiles.
#include <string>
#include <vector>

#include "calibrate/mrt_paper_tables.hpp"
#include "model/error_summary.hpp"

namespace mrplan {

struct StudyRow {
  PaperValue paper;
  double predicted = 0;
  double rel_error = 0;  // (predicted - paper) / paper; 0 when the paper reports 0
};

std::vector<StudyRow> mrt_paper_study();

// Over held-out rows (not used for calibration) whose quantity is in `quantities`.
ErrorSummary summarize_held_out(const std::vector<StudyRow>& rows, const std::vector<std::string>& quantities);

}  // namespace mrplan
