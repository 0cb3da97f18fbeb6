#pragma once
// Strict reading of YAML maps: every key is known and given once, every value has the expected type
// and range, and each failure names the file, the key path and what was expected. Heavy yaml-cpp include stays here,
// only included by the .cpp files that parse inputs.
#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace mrplan {

class YamlFields {
 public:
  YamlFields(const YAML::Node& node, std::string file, std::string path);

  // Refuses keys not in `allowed`; call once per map.
  void only(std::initializer_list<const char*> allowed) const;
  void only(const std::vector<std::string>& allowed) const;
  bool has(const char* key) const;
  YamlFields child(const char* key) const;            // required map
  std::vector<YamlFields> list(const char* key) const; // required sequence of maps
  const YAML::Node& node() const { return node_; }
  std::string key_path(const std::string& key) const;
  const std::string& file() const { return file_; }

  double number(const char* key) const;  // required, finite
  double number(const char* key, double fallback) const;
  double positive(const char* key) const;  // required, > 0
  double positive(const char* key, double fallback) const;
  double non_negative(const char* key, double fallback) const;
  double positive_at_most(const char* key, double fallback, double max) const;      // 0 < value <= max
  double non_negative_at_most(const char* key, double fallback, double max) const;  // 0 <= value <= max
  double non_negative_or_infinite(const char* key, double fallback) const;          // 0 <= value, .inf allowed
  int64_t integer(const char* key) const;  // decimal, no leading zeros (YAML 1.1 reads 040 as octal)
  int64_t integer(const char* key, int64_t fallback) const;
  int int32(const char* key) const;  // an integer that fits an int, never narrowed
  int int32(const char* key, int fallback) const;
  bool boolean(const char* key, bool fallback) const;
  std::string text(const char* key) const;
  std::string text(const char* key, const std::string& fallback) const;
  std::vector<int64_t> integers(const char* key) const;
  std::vector<double> numbers(const char* key) const;
  std::vector<std::vector<double>> number_rows(const char* key) const;  // a list of lists of numbers
  std::vector<std::string> texts(const char* key) const;  // a string or a sequence of strings

 private:
  YAML::Node get(const char* key) const;
  double scalar(const char* key, const char* expected) const;  // any double YAML reads, .inf and .nan too
  YAML::Node node_;
  std::string file_;
  std::string path_;
};

// Loads a YAML file; a missing or malformed file is an InputError naming it.
YAML::Node load_yaml_file(const std::string& path);
// Parses YAML text; malformed text is an InputError naming `file` and the line.
YAML::Node parse_yaml_text(const std::string& text, const std::string& file);

}  // namespace mrplan
