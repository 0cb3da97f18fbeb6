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

}  // namespace mrplan
