#pragma once
// Thin RAII over the HDF5 C API: open/create files, write whole datasets, read rows of the
// first axis converted to float. Every error names the file and the dataset.
#include <cstdint>
#include <string>
#include <vector>

namespace mrplan {

class H5File {
 public:
  enum class Mode { read, create };
  H5File(const std::string& path, Mode mode);
  ~H5File();
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;

  const std::string& path() const { return path_; }
  bool has(const std::string& dataset) const;
  std::vector<uint64_t> dims(const std::string& dataset) const;  // throws InputError if missing
  bool is_float(const std::string& dataset) const;
  // Whole dataset writes (row-major, `dims` outermost first).
  void write(const std::string& dataset, const std::vector<uint64_t>& dims, const float* data);
  void write(const std::string& dataset, const std::vector<uint64_t>& dims, const int16_t* data);
  // Rows [first, first+count) of the first axis, converted to float by HDF5.
  void read_rows(const std::string& dataset, uint64_t first, uint64_t count, float* out) const;
  // The whole dataset (any rank, a scalar included), converted to float.
  std::vector<float> read_all(const std::string& dataset) const;

 private:
  std::string path_;
  int64_t id_ = -1;
};

}  // namespace mrplan
