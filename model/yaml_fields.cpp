#include "model/yaml_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <regex>
#include <set>
#include <string_view>

#include "model/errors.hpp"
#include "model/text_file.hpp"

namespace mrplan {

YamlFields::YamlFields(const YAML::Node& node, std::string file, std::string path)
    : node_(node), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap()) fail_input(file_, path_.empty() ? "<top>" : path_, "expected a map of key: value");
  std::set<std::string> seen;  // YAML forbids a key twice in a map; yaml-cpp keeps both and finds the first
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar()) fail_input(file_, path_.empty() ? "<top>" : path_, "a key that is not a plain name");
    const auto k = kv.first.as<std::string>();
    if (!seen.insert(k).second) fail_input(file_, key_path(k), "given twice in the same map");
  }
}

std::string YamlFields::key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void YamlFields::only(std::initializer_list<const char*> allowed) const {
  only(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void YamlFields::only(const std::vector<std::string>& allowed) const {
  std::set<std::string> ok(allowed.begin(), allowed.end());
  for (const auto& kv : node_) {
    const auto k = kv.first.as<std::string>();
    if (!ok.count(k)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail_input(file_, key_path(k), fmt::format("unknown key (expected one of: {})", list));
    }
  }
}

bool YamlFields::has(const char* key) const { return static_cast<bool>(node_[key]); }

YAML::Node YamlFields::get(const char* key) const {
  YAML::Node n = node_[key];
  if (!n) fail_input(file_, key_path(key), "missing required key");
  return n;
}

YamlFields YamlFields::child(const char* key) const { return YamlFields(get(key), file_, key_path(key)); }

std::vector<YamlFields> YamlFields::list(const char* key) const {
  YAML::Node n = get(key);
  if (!n.IsSequence()) fail_input(file_, key_path(key), "expected a list");
  std::vector<YamlFields> out;
  for (size_t i = 0; i < n.size(); ++i) out.emplace_back(n[i], file_, fmt::format("{}[{}]", key_path(key), i));
  return out;
}

double YamlFields::scalar(const char* key, const char* expected) const {
  YAML::Node n = get(key);
  try {
    if (n.IsScalar()) return n.as<double>();
  } catch (const YAML::Exception&) {
  }
  fail_input(file_, key_path(key), expected);
}
double YamlFields::number(const char* key) const {
  const double v = scalar(key, "expected a number");
  if (!std::isfinite(v)) fail_input(file_, key_path(key), "expected a finite number");
  return v;
}
double YamlFields::number(const char* key, double fallback) const { return has(key) ? number(key) : fallback; }
double YamlFields::positive(const char* key) const {
  double v = number(key);
  if (v <= 0) fail_input(file_, key_path(key), fmt::format("expected a positive number, got {}", v));
  return v;
}
double YamlFields::positive(const char* key, double fallback) const { return has(key) ? positive(key) : fallback; }
double YamlFields::non_negative(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  double v = number(key);
  if (v < 0) fail_input(file_, key_path(key), fmt::format("expected a number >= 0, got {}", v));
  return v;
}
double YamlFields::positive_at_most(const char* key, double fallback, double max) const {
  const double v = positive(key, fallback);
  if (v > max) fail_input(file_, key_path(key), fmt::format("expected 0 < value <= {}, got {}", max, v));
  return v;
}
double YamlFields::non_negative_at_most(const char* key, double fallback, double max) const {
  const double v = non_negative(key, fallback);
  if (v > max) fail_input(file_, key_path(key), fmt::format("expected 0 <= value <= {}, got {}", max, v));
  return v;
}
double YamlFields::non_negative_or_infinite(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  const double v = scalar(key, "expected a number or .inf");
  if (std::isnan(v) || v < 0) fail_input(file_, key_path(key), fmt::format("expected a number >= 0 or .inf, got {}", v));
  return v;
}
namespace {
bool decimal_integer_text(const std::string& t) {
  static const std::regex decimal("[+-]?(0|[1-9][0-9]*)");
  return std::regex_match(t, decimal);
}
}  // namespace

int64_t YamlFields::integer(const char* key) const {
  YAML::Node n = get(key);
  if (n.IsScalar() && !decimal_integer_text(n.Scalar()))
    fail_input(file_, key_path(key), fmt::format("expected a decimal integer (no leading zeros, no fraction), got '{}'", n.Scalar()));
  try {
    if (n.IsScalar()) return n.as<int64_t>();
  } catch (const YAML::Exception&) {
    fail_input(file_, key_path(key), fmt::format("'{}' is out of range for an integer", n.Scalar()));
  }
  fail_input(file_, key_path(key), "expected an integer");
}
int YamlFields::int32(const char* key) const {
  const int64_t v = integer(key);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail_input(file_, key_path(key), fmt::format("{} is out of range (at most {})", v, std::numeric_limits<int>::max()));
  return static_cast<int>(v);
}
int YamlFields::int32(const char* key, int fallback) const { return has(key) ? int32(key) : fallback; }
int64_t YamlFields::integer(const char* key, int64_t fallback) const { return has(key) ? integer(key) : fallback; }
bool YamlFields::boolean(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  try {
    return get(key).as<bool>();
  } catch (const YAML::Exception&) {
    fail_input(file_, key_path(key), "expected true or false");
  }
}
namespace {

// Whole UTF-8 sequences (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF) and no
// control character but a tab: a name goes into JSON records, logs and batch scripts.
bool clean_text(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
      ++i;
      continue;
    }
    const int n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;  // bytes that follow
    if (n < 0 || i + n >= s.size()) return false;
    uint32_t cp = c & (0x3f >> n);
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff))) return false;
    i += n + 1;
  }
  return true;
}

}  // namespace

std::string YamlFields::text(const char* key) const {
  YAML::Node n = get(key);
  if (!n.IsScalar()) fail_input(file_, key_path(key), "expected a string");
  auto s = n.as<std::string>();
  if (!clean_text(s))
    fail_input(file_, key_path(key), fmt::format("'{}' is not text: expected UTF-8 without control characters", printable(s)));
  return s;
}
std::string YamlFields::text(const char* key, const std::string& fallback) const {
  return has(key) ? text(key) : fallback;
}
std::vector<int64_t> YamlFields::integers(const char* key) const {
  YAML::Node n = get(key);
  std::vector<int64_t> out;
  try {
    if (n.IsScalar() && decimal_integer_text(n.Scalar())) return {n.as<int64_t>()};
    if (!n.IsSequence()) throw YAML::Exception(YAML::Mark::null_mark(), "");
    for (const auto& e : n) {
      if (!e.IsScalar() || !decimal_integer_text(e.Scalar())) throw YAML::Exception(YAML::Mark::null_mark(), "");
      out.push_back(e.as<int64_t>());
    }
  } catch (const YAML::Exception&) {
    fail_input(file_, key_path(key), "expected an integer or a list of integers");
  }
  return out;
}
std::vector<double> YamlFields::numbers(const char* key) const {
  YAML::Node n = get(key);
  std::vector<double> out;
  try {
    if (n.IsScalar()) return {n.as<double>()};
    if (!n.IsSequence()) throw YAML::Exception(YAML::Mark::null_mark(), "");
    for (const auto& e : n) out.push_back(e.as<double>());
  } catch (const YAML::Exception&) {
    fail_input(file_, key_path(key), "expected a number or a list of numbers");
  }
  return out;
}
std::vector<std::vector<double>> YamlFields::number_rows(const char* key) const {
  YAML::Node n = get(key);
  std::vector<std::vector<double>> out;
  try {
    if (!n.IsSequence()) throw YAML::Exception(YAML::Mark::null_mark(), "");
    for (const auto& row : n) {
      if (!row.IsSequence()) throw YAML::Exception(YAML::Mark::null_mark(), "");
      out.emplace_back();
      for (const auto& e : row) out.back().push_back(e.as<double>());
    }
  } catch (const YAML::Exception&) {
    fail_input(file_, key_path(key), "expected a list of lists of numbers");
  }
  return out;
}
std::vector<std::string> YamlFields::texts(const char* key) const {
  YAML::Node n = get(key);
  if (n.IsScalar()) return {n.as<std::string>()};
  if (!n.IsSequence()) fail_input(file_, key_path(key), "expected a string or a list of strings");
  std::vector<std::string> out;
  for (const auto& e : n) out.push_back(e.as<std::string>());
  return out;
}

namespace {

// One document a file: a second (after a `---` or `...` line) would be dropped unread, so it is
// refused. Found in the text: yaml-cpp's LoadAll can loop for ever on damaged input (found by
// tests/fuzz/plan_yaml_fuzz), and Load reads the first document only.
void only_document(const std::string& text, const std::string& file) {
  bool content = false, ended = false;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size(); ++line_no) {
    const size_t eol = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, eol - at);
    at = eol + 1;
    const bool marker = (line.rfind("---", 0) == 0 || line.rfind("...", 0) == 0) && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    const auto first = line.find_first_not_of(" \t\r");
    const bool blank = first == std::string_view::npos || line[first] == '#' || (line[0] == '%' && !content);
    if (marker) {
      if (content) ended = true;
      const auto rest = line.substr(3).find_first_not_of(" \t\r");
      if (rest == std::string_view::npos || line[3 + rest] == '#') continue;
    } else if (blank) {
      continue;
    }
    if (ended) fail_input(file, fmt::format("line {}", line_no + 1), "a second YAML document (after --- or ...): expected one a file");
    content = true;
  }
}

}  // namespace

YAML::Node parse_yaml_text(const std::string& text, const std::string& file) {
  only_document(text, file);
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail_input(file, fmt::format("line {}", e.mark.line + 1), "not valid YAML: " + e.msg);
  }
}

YAML::Node load_yaml_file(const std::string& path) {
  if (!std::filesystem::exists(path)) fail_input(path, "", "file not found");
  if (std::filesystem::is_directory(path)) fail_input(path, "", "is a folder: expected a YAML file");
  return parse_yaml_text(read_text_file(path, "YAML file"), path);
}

}  // namespace mrplan
