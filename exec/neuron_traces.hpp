#pragma once
// Neuron Inverter synthetic traces: four coupled FitzHugh-Nagumo compartments (soma first, then a
// chain) driven by one fixed stimulus at the soma; the 15 labels set each compartment's
// excitability and recovery, the stimulus gain, the coupling and a dendritic offset, so the
// inverse problem (traces -> parameters) is learnable, as in the Neuron Inverter benchmark.
#include <cstdint>

namespace mrplan {

constexpr int kNeuronParams = 15;
constexpr int kNeuronChannels = 4;

// `unit` holds 15 labels in [-1, 1]; writes bins x 4 values, channel-last, as train_frames holds them.
void neuron_traces(const float* unit, uint64_t seed, int bins, float* out);

}  // namespace mrplan
