#pragma once
// One error type for everything a user can fix: it names where the problem is and what was expected.
#include <stdexcept>
#include <string>

namespace mrplan {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An error the ranks of a launched job met alike (a bad plan under mpirun): one rank reported it,
// the others end with `code` and say nothing, so that it is printed once.
struct ReportedByAnotherRank {
  int code = 2;
};

// A user's text as a message can show it: control characters and bytes past ASCII as \xNN, so that
// a newline or a byte that is not UTF-8 in a value cannot break the message (or its JSON).
std::string printable(const std::string& text);

// "FILE: KEY: MESSAGE" — the shape every input error takes.
[[noreturn]] void fail_input(const std::string& file, const std::string& key, const std::string& message);

}  // namespace mrplan
