#pragma once
// Aligned plain-text tables for terminal output.
#include <string>
#include <vector>

namespace mrplan {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace mrplan
