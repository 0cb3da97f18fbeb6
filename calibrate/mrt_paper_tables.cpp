#include "calibrate/mrt_paper_tables.hpp"

namespace mrplan {

bool PaperValue::used_for_calibration() const { return (app == "cosmoflow" && gpus == 32) || (app == "deepcam" && gpus == 64); }

namespace {

void breakdown(std::vector<PaperValue>& v, const char* table, const char* machine, int gpus, const char* app,
               const char* dataset, double io, double comm, double comp, double epoch) {
  v.push_back({table, machine, gpus, app, dataset, "io_s", io});
  v.push_back({table, machine, gpus, app, dataset, "comm_s", comm});
  v.push_back({table, machine, gpus, app, dataset, "compute_s", comp});
  v.push_back({table, machine, gpus, app, dataset, "epoch_s", epoch});
}

// Tables I/II (epochs) and V/VI (iterations) with total times on Cori and Summit.
void totals(std::vector<PaperValue>& v, const char* table, int gpus, const char* app, const char* unit, double coarse_n,
            double dense_n, double mrt_coarse_n, double mrt_dense_n, double coarse_cori, double coarse_summit,
            double dense_cori, double dense_summit, double mrt_cori, double mrt_summit) {
  v.push_back({table, "all", gpus, app, "coarse", unit, coarse_n});
  v.push_back({table, "all", gpus, app, "dense", unit, dense_n});
  v.push_back({table, "all", gpus, app, "mrt-coarse", unit, mrt_coarse_n});
  v.push_back({table, "all", gpus, app, "mrt-dense", unit, mrt_dense_n});
  v.push_back({table, "cori-gpu", gpus, app, "coarse", "total_s", coarse_cori});
  v.push_back({table, "summit", gpus, app, "coarse", "total_s", coarse_summit});
  v.push_back({table, "cori-gpu", gpus, app, "dense", "total_s", dense_cori});
  v.push_back({table, "summit", gpus, app, "dense", "total_s", dense_summit});
  v.push_back({table, "cori-gpu", gpus, app, "mrt", "total_s", mrt_cori});
  v.push_back({table, "summit", gpus, app, "mrt", "total_s", mrt_summit});
}

std::vector<PaperValue> build() {
  std::vector<PaperValue> v;
  totals(v, "I", 32, "cosmoflow", "epochs", 85, 88, 55, 54, 145.35, 148.75, 1073.60, 858.00, 752.85, 622.75);
  totals(v, "II", 64, "cosmoflow", "epochs", 85, 88, 55, 54, 102.00, 90.95, 561.44, 483.12, 410.52, 355.31);
  breakdown(v, "III", "summit", 32, "cosmoflow", "coarse", 0.04, 0.23, 1.48, 1.75);
  breakdown(v, "III", "summit", 32, "cosmoflow", "dense", 0.00, 0.44, 9.31, 9.75);
  breakdown(v, "III", "summit", 64, "cosmoflow", "coarse", 0.00, 0.28, 1.07, 1.35);
  breakdown(v, "III", "summit", 64, "cosmoflow", "dense", 0.04, 0.59, 4.86, 5.49);
  breakdown(v, "IV", "cori-gpu", 32, "cosmoflow", "coarse", 0.09, 0.13, 1.49, 1.71);
  breakdown(v, "IV", "cori-gpu", 32, "cosmoflow", "dense", 1.27, 0.21, 10.72, 12.20);
  breakdown(v, "IV", "cori-gpu", 64, "cosmoflow", "coarse", 0.05, 0.19, 0.96, 1.20);
  breakdown(v, "IV", "cori-gpu", 64, "cosmoflow", "dense", 0.37, 0.19, 5.67, 6.38);
  totals(v, "V", 64, "deepcam", "iterations", 4500, 8900, 1888, 5100, 2301.29, 2318.26, 4924.79, 4324.53, 3787.59, 3450.74);
  totals(v, "VI", 128, "deepcam", "iterations", 4500, 4500, 1652, 2800, 1326.16, 1552.50, 2507.44, 2159.24, 2047.04, 1913.47);
  breakdown(v, "VII", "summit", 64, "deepcam", "coarse", 3.15, 8.24, 110.19, 121.58);
  breakdown(v, "VII", "summit", 64, "deepcam", "dense", 8.23, 30.69, 421.23, 460.15);
  breakdown(v, "VII", "summit", 128, "deepcam", "coarse", 2.29, 10.38, 68.75, 81.42);
  breakdown(v, "VII", "summit", 128, "deepcam", "dense", 4.89, 16.19, 205.88, 226.96);
  breakdown(v, "VIII", "cori-gpu", 64, "deepcam", "coarse", 2.19, 3.66, 114.84, 120.69);
  breakdown(v, "VIII", "cori-gpu", 64, "deepcam", "dense", 8.96, 19.14, 495.92, 524.02);
  breakdown(v, "VIII", "cori-gpu", 128, "deepcam", "coarse", 2.39, 8.92, 58.25, 69.55);
  breakdown(v, "VIII", "cori-gpu", 128, "deepcam", "dense", 4.09, 12.78, 246.69, 263.56);
  return v;
}

}  // namespace

const std::vector<PaperValue>& mrt_paper_values() {
  static const std::vector<PaperValue> v = build();
  return v;
}

}  // namespace mrplan
