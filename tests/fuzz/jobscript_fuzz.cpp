// `jobscript`'s inputs (job name, account, run folder, plan file, data folder, the plan's name, the
// scheduler) as NUL-separated fields: each is refused with an InputError, or the script carries it
// as text. Asserted against the script of the same plan with every field "x": the same lines, each
// with the same shell words and the same unquoted shell syntax (`;`, `$`, backquotes, redirections),
// so no value adds a line, a directive or a command. With MRPLAN_FUZZ_SCRIPTS set, accepted scripts
// are written there too, and tests/fuzz/run.sh runs `bash -n` and shellcheck over them.
#include <cstdlib>
#include <fstream>
#include <functional>
#include <vector>

#include "cli/jobscript.hpp"
#include "sim/builtin_plans.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using mrplan::fail_input;

// One line as a POSIX shell reads it: its words, and the syntax characters it sees unquoted.
struct Lexed {
  size_t words = 0;
  std::string syntax;
};

Lexed lex(const std::string& line) {
  Lexed out;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      in_word = false;
      continue;
    }
    if (!in_word) ++out.words, in_word = true;
    if (c == '\'') {
      const auto end = line.find('\'', i + 1);
      if (end == std::string::npos) fail_input("", "", "unterminated quote");
      i = end;
    } else if (c == '"') {  // the site's folders: $USER expands there, and nothing else may appear
      for (++i; i < line.size() && line[i] != '"'; ++i)
        if (line[i] == '`' || line[i] == '\\' || (line[i] == '$' && line.compare(i, 5, "$USER") != 0)) out.syntax += line[i];
    } else if (c == '\\') {  // the next character as itself: quoting, as in '\''
      ++i;
    } else if (std::string_view(";&|`$()<>*?[]{}~!#").find(c) != std::string_view::npos) {
      out.syntax += c;
    }
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out(1);
  for (const char c : text)
    if (c == '\n') out.emplace_back();
    else out.back().push_back(c);
  return out;
}

std::string render(const std::vector<std::string>& f, bool as_x) {
  auto pick = [&](size_t i) { return as_x && !f[i].empty() ? std::string("x") : f[i]; };
  mrplan::Plan plan = mrplan::builtin_plan(f[6].size() % 2 ? "cosmoflow-mrt@summit" : "cosmoflow-mrmf@perlmutter");
  plan.data_dir = pick(4);
  plan.name = pick(5);
  if (!plan.data_dir.empty()) plan.staging = mrplan::Staging::host_memory;
  mrplan::JobRequest job;
  job.job_name = pick(0), job.account = pick(1), job.out_dir = pick(2), job.plan_file = pick(3), job.time_limit_s = 3600;
  job.staged_to = mrplan::TierKind::host_memory;
  const auto scheduler = static_cast<mrplan::Scheduler>(f[6].size() % 3);
  const auto site = mrplan::find_site(f[6].size() % 2 ? "summit" : "other", scheduler);
  return mrplan::render_jobscript(plan, site, 4, job);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return mrplan::fuzz::accept_or_refuse(data, size, [](const std::string& text) {
    std::vector<std::string> f(1);
    for (const char c : text)
      if (c == '\0') f.emplace_back();
      else f.back().push_back(c);
    f.resize(7);
    if (f[0].empty() || f[5].empty()) return;  // a job always has a name; the reference needs one too
    const auto script = render(f, false);
    const auto got = lines_of(script), want = lines_of(render(f, true));
    if (got.size() != want.size()) std::abort();  // a value added a line
    for (size_t i = 0; i < got.size(); ++i) {
      const bool comment = got[i].rfind("# ", 0) == 0;  // mrplan's own note; directives are '#X' without a space
      if (comment) continue;
      const auto a = lex(got[i]), b = lex(want[i]);
      if (a.words != b.words || a.syntax != b.syntax) std::abort();  // a value became shell syntax or split
    }
    if (const char* dir = std::getenv("MRPLAN_FUZZ_SCRIPTS")) {
      static int written = 0;
      if (written < 300) std::ofstream(std::string(dir) + "/job" + std::to_string(written++) + ".sh") << script;
    }
  });
}
