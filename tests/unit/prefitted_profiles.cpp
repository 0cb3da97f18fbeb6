// The unit tests read the built-in profiles as the programs do: fitted once at build time
// (mrplan-fit-builtins), so that no test process refits them, the preprocessing study included.
#include "calibrate/calibrated_builtins.hpp"

namespace mrplan {
extern const char* const kPrefittedProfilesYaml;  // built by mrplan-fit-builtins (cli/)
}  // namespace mrplan

namespace {
const bool kPrefitted = (mrplan::use_prefitted_profiles(mrplan::kPrefittedProfilesYaml), true);
}  // namespace
