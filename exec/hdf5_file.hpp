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

  // Encoded samples (exec/sample_codec.hpp): one byte string per sample, concatenated, and offsets.
  void write(const std::string& dataset, const std::vector<uint64_t>& dims, const uint8_t* data);
  void write(const std::string& dataset, const std::vector<uint64_t>& dims, const uint64_t* data);
  std::vector<uint8_t> read_bytes(const std::string& dataset, uint64_t first, uint64_t count) const;
  std::vector<uint64_t> read_u64(const std::string& dataset) const;
  // Attributes of a dataset: a string, a list of counts; "" / {} where absent.
  void set_attribute(const std::string& dataset, const std::string& key, const std::string& value);
  void set_attribute(const std::string& dataset, const std::string& key, const std::vector<uint64_t>& value);
  std::string text_attribute(const std::string& dataset, const std::string& key) const;
  std::vector<uint64_t> counts_attribute(const std::string& dataset, const std::string& key) const;

  uint64_t stored_bytes(const std::string& dataset) const;  // on disk, after any filter

  // Every dataset of the file, by path (groups walked).
  std::vector<std::string> datasets() const;
  // Copies a dataset of `src` as it is (type, attributes, storage).
  void copy_from(const H5File& src, const std::string& dataset);
  // Copies a dataset of `src` in its own type, deflated at `deflate_level` (0: contiguous).
  // `per_row`: chunks of one row of the first axis (a sample), else one chunk for the whole.
  void copy_from(const H5File& src, const std::string& dataset, int deflate_level, bool per_row);

 private:
  std::string path_;
  int64_t id_ = -1;
};

}  // namespace mrplan
