#pragma once
// What a data folder holds, cheaply: a hash of its files' names and sizes and of 16 slices of each
// file's bytes, so that a resume refuses another dataset given under the same (or another) path
// while a folder moved as it is still matches (issue 44). Not a checksum of every byte: a dataset
// of terabytes is read once per epoch, not at every start. Torch-free.
#include <string>
#include <vector>

namespace mrplan {

// "fnv1a64:HEX" over the folders in order (each one's files sorted by relative path); throws
// InputError naming a folder that cannot be read.
std::string data_identity(const std::vector<std::string>& folders);

// The resolutions of one dataset: every folder holds as many samples as the first, and where a
// sample's labels do not scale with the resolution (regression: CosmoFlow's, Neuron Inverter's
// parameters), the first, middle and last samples' labels equal the first folder's. A coarse copy of
// another dataset (other labels) was trained on without a word (issue 44). InputError naming it.
struct DataLayout;
void check_same_samples(const std::vector<std::string>& folders, const DataLayout& layout);

}  // namespace mrplan
