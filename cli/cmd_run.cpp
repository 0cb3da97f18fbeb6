#include "cli/commands.hpp"
namespace CLI { class App; }
namespace mrplan { void register_run(CLI::App&) {} }
