#include "cli/suggest.hpp"

#include <algorithm>
#include <numeric>

namespace mrplan {

namespace {

// Damerau-Levenshtein (optimal string alignment): a swap of two neighbours is one edit (predcit).
size_t edits(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> nearest_word(const std::string& typed, const std::vector<std::string>& known) {
  std::optional<std::string> best;
  size_t best_edits = 3;  // more than two edits away: no suggestion
  for (const auto& k : known)
    if (const size_t e = edits(typed, k); e < best_edits) best_edits = e, best = k;
  return best;
}

}  // namespace mrplan
