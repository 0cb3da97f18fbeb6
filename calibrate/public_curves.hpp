#pragma once
// Public learning curves the built-in convergence priors are fitted from (data, with its source).
#include <vector>

namespace mrplan {

// Neuron Inverter's validation MSE per epoch (epochs 1-100) on one Perlmutter A100, local batch 512,
// Adam 1e-3 with a plateau schedule: balewski/neuron_inverter_benchmark,
// torch/PMBS22/pm-202204/G1scan/NI_Loss_val.csv (the PMBS22 paper's run).
const std::vector<double>& neuron_inverter_validation_mse_1gpu();

}  // namespace mrplan
