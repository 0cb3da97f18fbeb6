#pragma once
// The profile's one-number keys as a Markdown table (`mrplan profile --keys`), made from the
// registry the profile reader goes through: docs/profile-format.md holds this table, checked by
// tests/cli/format_docs.py.
#include <string>

namespace mrplan {

std::string profile_keys_markdown();

}  // namespace mrplan
