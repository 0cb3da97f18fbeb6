#include "cli/text_table.hpp"

#include <algorithm>

namespace mrplan {

std::string TextTable::str() const {
  std::vector<size_t> w;
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], r[i].size());
    }
  std::string out;
  for (size_t k = 0; k < rows_.size(); ++k) {
    const auto& r = rows_[k];
    for (size_t i = 0; i < r.size(); ++i) {
      // first column left-aligned (names), the rest right-aligned (numbers)
      const std::string pad(w[i] - r[i].size(), ' ');
      out += i == 0 ? r[i] + pad : pad + r[i];
      out += i + 1 < r.size() ? "  " : "";
    }
    out += "\n";
    if (k == 0) {
      size_t total = 0;
      for (auto x : w) total += x + 2;
      out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
    }
  }
  return out;
}

}  // namespace mrplan
