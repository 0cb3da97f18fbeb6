#pragma once
// Where a command computes: the CPUs, CUDA GPUs (one per rank), or, for `run`, the GPUs where
// LibTorch sees one. No torch in this header.
namespace mrplan {

enum class DeviceKind { automatic, cpu, cuda };

inline const char* to_string(DeviceKind d) { return d == DeviceKind::cpu ? "cpu" : d == DeviceKind::cuda ? "cuda" : "auto"; }

}  // namespace mrplan
