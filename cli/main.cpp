// mrplan: predict, sweep and study multi-resolution training plans.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <filesystem>

#include "calibrate/calibrated_builtins.hpp"
#include "cli/commands.hpp"
#include "cli/exec_forward.hpp"
#include "model/launch_env.hpp"
#include "cli/suggest.hpp"
#include "cli/version.hpp"
#include "model/errors.hpp"

namespace mrplan {
extern const char* const kPrefittedProfilesYaml;  // built by mrplan-fit-builtins
}

int main(int argc, char** argv) {
  mrplan::use_prefitted_profiles(mrplan::kPrefittedProfilesYaml);
  CLI::App app{"mrplan: which multi-resolution training plan reaches the target soonest, and why"};
  app.require_subcommand(1);
  app.set_version_flag("--version", mrplan::version_text());
  mrplan::register_predict(app);
  mrplan::register_sweep(app);
  mrplan::register_optimize(app);
  mrplan::register_show(app);
  mrplan::register_study(app);
  mrplan::register_validate(app);
  mrplan::register_ingest_mllog(app);
  mrplan::register_jobscript(app);
#ifdef MRPLAN_HAVE_EXEC
  mrplan::register_data(app);
  mrplan::register_run(app);
  mrplan::register_calibrate(app);
#else
  for (const auto& [name, what] : mrplan::exec_commands()) app.add_subcommand(name, what);  // listed; mrplan-exec runs them
  try {
    const std::string first = argc > 1 ? argv[1] : "";
    if (mrplan::is_exec_command(first) || (first == "optimize" && mrplan::detect_launch().size > 1)) mrplan::run_exec_program(argv);
  } catch (const mrplan::InputError& e) {
    fmt::print(stderr, "mrplan: error: {}\n", e.what());
    return 2;
  }
#endif
  std::vector<std::string> names;
  for (const auto* c : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(c->get_name());
  if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {  // a mistyped command
    const auto near = mrplan::nearest_word(argv[1], names);
    fmt::print(stderr, "mrplan: error: unknown command '{}'{} (mrplan --help lists them)\n", argv[1],
               near ? fmt::format(": did you mean '{}'?", *near) : "");
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const mrplan::InputError& e) {
    fmt::print(stderr, "mrplan: error: {}\n", e.what());
    return 2;
  } catch (const mrplan::ReportedByAnotherRank& e) {
    return e.code;
  } catch (const std::filesystem::filesystem_error& e) {  // a path the user gave: a loop of links, no permission
    fmt::print(stderr, "mrplan: error: {}: {}\n", e.path1().string(), e.code().message());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mrplan: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
