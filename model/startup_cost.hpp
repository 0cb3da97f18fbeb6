#pragma once
// A stage's start-up: the first steps of a new model touch every page of its working set for the
// first time (measured here: 190 MB of page faults made a 70 ms CPU step take 280 ms), and a heap
// keeps what earlier stages of the same process grew it to, so only the growth is paid again.
#include <cstdint>

#include "model/machine_profile.hpp"

namespace mrplan {

// Bytes a training step keeps live at its peak: activation_factor * activation bytes +
// param_factor * parameter bytes (compute.first_touch, fitted by calibrate compute).
double step_working_set_bytes(const ComputeParams::FirstTouch& t, double activation_bytes, int64_t params);

// Seconds the first steps spend touching the part of `working_set_bytes` beyond what the process's
// heap already holds; 0 where first touch was not measured.
double startup_s(const ComputeParams::FirstTouch& t, double working_set_bytes, double heap_held_bytes);

}  // namespace mrplan
