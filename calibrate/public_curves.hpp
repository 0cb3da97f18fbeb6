#pragma once
// Public learning curves the built-in convergence priors are fitted from (data, with its source).
#include <vector>

namespace mrplan {

// Neuron Inverter's validation MSE per epoch (epochs 1-100) on one Perlmutter A100, local batch 512,
// Adam 1e-3 with a plateau schedule: balewski/neuron_inverter_benchmark,
// torch/PMBS22/pm-202204/G1scan/NI_Loss_val.csv (the PMBS22 paper's run).
const std::vector<double>& neuron_inverter_validation_mse_1gpu();

// MLPerf HPC v1.0 CosmoFlow, LBNL's closed strong-scaling runs on 1024 Perlmutter A100s (global batch
// 1024, SGD, base learning rate 0.012): eval_error (validation MAE) per epoch until it reached the
// target 0.124, runs 1-3 (mlcommons/hpc_results_v1.0, LBNL/results/perlmutter_256x4_ngc21.09_mxnet/
// strong/cosmoflow/result_{1,2,3}.txt; ../shared/mlperf-logs holds the files).
const std::vector<std::vector<double>>& mlperf_cosmoflow_eval_error_runs();

}  // namespace mrplan
