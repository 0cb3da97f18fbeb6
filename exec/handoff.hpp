#pragma once
// What a model starts from when the previous stage hands on to it. exec-internal: includes torch.
#include <string>

#include "exec/spec_network.hpp"

namespace mrplan {

// At the same resolution every parameter and buffer is taken whole (MRMF: the fused model
// fine-tuned, or trained on as the next fusion stage's lower-resolution model); at another, the
// ops Op::transfer marks (convolutions, batch norms), as MRT III-C transfers coarse to dense. A
// parameter whose shape differs is an error naming it and `origin` (where `from` came from).
void initialise_from(SpecNetImpl& from, SpecNetImpl& to, const std::string& origin = "the previous stage");

}  // namespace mrplan
