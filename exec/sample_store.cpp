#include "exec/sample_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <numeric>

#include "exec/encode_dataset.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {
std::mutex hdf5_mutex;  // the serial HDF5 library is not thread-safe
}

namespace {

// DeepCAM's stats.h5 sits beside the sample files or, in the reference's layout, one folder up.
void load_min_max(const std::string& dir, int64_t channels, std::vector<float>& shift, std::vector<float>& scale) {
  fs::path p = fs::path(dir) / kStatsFile;
  if (!fs::exists(p)) p = fs::path(dir).parent_path() / kStatsFile;
  if (!fs::exists(p))
    fail_input((fs::path(dir) / kStatsFile).string(), "",
               "not found here or one folder up: this layout is min-max normalised with the per-channel climate/minval and "
               "climate/maxval it holds (`mrplan datagen deepcam` writes one)");
  H5File h5(p.string(), H5File::Mode::read);
  const auto lo = h5.read_all(kStatsMin), hi = h5.read_all(kStatsMax);
  if (static_cast<int64_t>(lo.size()) != channels || static_cast<int64_t>(hi.size()) != channels)
    fail_input(p.string(), kStatsMin, fmt::format("holds {} and {} values for {} channels", lo.size(), hi.size(), channels));
  for (int64_t c = 0; c < channels; ++c) {
    if (!(hi[c] > lo[c]))
      fail_input(p.string(), kStatsMax, fmt::format("channel {}: maxval {} is not above minval {}", c, hi[c], lo[c]));
    shift.push_back(lo[c]);
    scale.push_back(1.f / (hi[c] - lo[c]));
  }
}

}  // namespace

SampleStore::SampleStore(const std::string& dir, const DataLayout& layout, const std::string& copy_dir)
    : files_(list_h5_files(dir)), copy_dir_(copy_dir), layout_(layout) {
  std::lock_guard<std::mutex> lock(hdf5_mutex);
  const size_t lead = layout.per_sample_files ? 0 : 1;  // the sample axis, where files hold several
  std::vector<uint64_t> ref, ref_labels;
  offsets_.resize(files_.size());
  for (size_t fi = 0; fi < files_.size(); ++fi) {
    const auto& f = files_[fi];
    H5File h5(f, H5File::Mode::read);
    const auto d = stored_dims(h5, fi);
    const auto l = h5.dims(layout.labels);
    if (d.size() != lead + layout.spatial_axes + 1)
      fail_input(f, layout.data, fmt::format("expected {} axes ({}spatial..., channels), got {}", lead + layout.spatial_axes + 1,
                                             lead ? "n, " : "", d.size()));
    if (lead && (l.empty() || l[0] != d[0]))
      fail_input(f, layout.labels, fmt::format("has {} rows but {} has {}", l.empty() ? 0 : l[0], layout.data, d[0]));
    if (ref.empty()) ref = d, ref_labels = l;
    // both files named: which of them is the odd one is for the user to see
    const auto shape = [&](const std::vector<uint64_t>& v) { return fmt::format("{}", fmt::join(v.begin() + lead, v.end(), "x")); };
    if (!std::equal(d.begin() + lead, d.end(), ref.begin() + lead))
      fail_input(f, layout.data, fmt::format("samples are {} but {} holds {}", shape(d), files_.front(), shape(ref)));
    if (l.size() != ref_labels.size() || !std::equal(l.begin() + lead, l.end(), ref_labels.begin() + lead))
      fail_input(f, layout.labels, fmt::format("labels are {} but {} holds {}", shape(l), files_.front(), shape(ref_labels)));
    first_.push_back(total_);
    total_ += lead ? static_cast<int64_t>(d[0]) : 1;
  }
  open_.resize(files_.size());
  shape_ = {static_cast<int64_t>(ref.back())};
  for (size_t a = lead; a + 1 < ref.size(); ++a) shape_.push_back(static_cast<int64_t>(ref[a]));
  label_shape_.assign(ref_labels.begin() + lead, ref_labels.end());
  if (label_shape_.empty()) label_shape_ = {1};
  label_size_ = std::accumulate(label_shape_.begin(), label_shape_.end(), int64_t{1}, std::multiplies<>());
  if (layout.normalise == Normalise::min_max) load_min_max(dir, shape_[0], shift_, scale_);
}

std::vector<uint64_t> SampleStore::stored_dims(const H5File& h5, size_t f) {
  const std::string name = h5.text_attribute(layout_.data, kCodecAttribute);
  const Codec c = name.empty() ? Codec::raw : codec_from_name(name, h5.path());
  if (f == 0) codec_ = c;
  if (c != codec_)
    fail_input(h5.path(), layout_.data, fmt::format("is stored {} but {} is {}: a folder holds one codec", codec_name(c), files_[0], codec_name(codec_)));
  if (c == Codec::raw || c == Codec::deflate) return h5.dims(layout_.data);
  if (!decoder_) decoder_ = make_codec(c);
  auto dims = h5.counts_attribute(layout_.data, kSampleDimsAttribute);
  auto off = h5.read_u64(offsets_dataset(layout_.data));
  const auto bytes = h5.dims(layout_.data);
  if (bytes.size() != 1 || off.size() < 2 || off.front() != 0 || off.back() != bytes[0] || !std::is_sorted(off.begin(), off.end()))
    fail_input(h5.path(), offsets_dataset(layout_.data), "the encoded samples' offsets do not cover the data from 0 to its end in order");
  const uint64_t n = off.size() - 1;
  if (layout_.per_sample_files && n != 1) fail_input(h5.path(), layout_.data, fmt::format("holds {} encoded samples: this layout has one per file", n));
  offsets_[f] = std::move(off);
  if (!layout_.per_sample_files) dims.insert(dims.begin(), n);
  return dims;
}

Codec folder_codec(const std::string& dir, const DataLayout& layout) {
  const auto files = list_h5_files(dir);
  std::lock_guard<std::mutex> lock(hdf5_mutex);
  const std::string name = H5File(files.front(), H5File::Mode::read).text_attribute(layout.data, kCodecAttribute);
  return name.empty() ? Codec::raw : codec_from_name(name, files.front());
}

std::pair<size_t, int64_t> SampleStore::locate(int64_t id) const {
  const auto it = std::upper_bound(first_.begin(), first_.end(), id) - 1;
  return {static_cast<size_t>(it - first_.begin()), id - *it};
}

std::string SampleStore::read_path(size_t f) const {
  if (copy_dir_.empty()) return files_[f];
  const fs::path copy = fs::path(copy_dir_) / fs::path(files_[f]).filename();
  if (!fs::exists(copy))
    fail_input(copy.string(), "", fmt::format("is not in this node's staged share of {} (run --stage-to): the ranks of a node read only "
                                              "the files staged for them; stage again, or run without --stage-to", files_[f]));
  return copy.string();
}

const H5File& SampleStore::opened(size_t f) const {
  if (!open_[f]) open_[f] = std::make_unique<H5File>(read_path(f), H5File::Mode::read);
  return *open_[f];
}

void SampleStore::read_labels(int64_t id, float* y) const {
  const auto [f, row] = locate(id);
  {
    std::lock_guard<std::mutex> lock(hdf5_mutex);
    if (layout_.per_sample_files) {
      const auto labels = opened(f).read_all(layout_.labels);
      std::copy(labels.begin(), labels.end(), y);
    } else {
      opened(f).read_rows(layout_.labels, row, 1, y);
    }
  }
  check_labels(f, row, y);
}

void SampleStore::check_value(size_t f, int64_t row, float val) const {
  if (!std::isfinite(val)) fail_input(files_[f], layout_.data, fmt::format("row {} holds NaN or infinity", row));
  // counts go through log1p (below -1: NaN); any value beyond 1e15 overflows float sums (batch norm's variance)
  if (layout_.normalise == Normalise::log1p && val < 0)
    fail_input(files_[f], layout_.data, fmt::format("row {} holds the count {}: counts are >= 0", row, val));
  if (std::fabs(val) > 1e15f) fail_input(files_[f], layout_.data, fmt::format("row {} holds {}: beyond 1e15, float32 training overflows", row, val));
}

void SampleStore::read(int64_t id, float* x, float* y) const {
  if (decoder_) {
    const auto e = read_encoded(id, y);
    decoder_->decode(e.bytes.data(), e.bytes.size(), e.shape, pipeline(e), x, e.where);
    return;
  }
  const auto [f, row] = locate(id);
  int64_t elems = 1;
  for (auto v : shape_) elems *= v;
  std::vector<float> raw;
  {
    std::lock_guard<std::mutex> lock(hdf5_mutex);
    if (layout_.per_sample_files) {
      raw = opened(f).read_all(layout_.data);
    } else {
      raw.resize(static_cast<size_t>(elems));
      opened(f).read_rows(layout_.data, row, 1, raw.data());
    }
  }
  read_labels(id, y);
  // channel-last on disk -> channel-first for the network
  const int64_t C = shape_[0], V = elems / C;
  const bool min_max = !shift_.empty();
  for (int64_t v = 0; v < V; ++v)
    for (int64_t c = 0; c < C; ++c) {
      const float val = raw[v * C + c];
      check_value(f, row, val);
      x[c * V + v] = min_max ? (val - shift_[c]) * scale_[c] : val;
    }
}

SampleStore::Encoded SampleStore::read_encoded(int64_t id, float* y) const {
  const auto [f, row] = locate(id);
  if (!decoder_) fail_input(files_[f], layout_.data, fmt::format("is stored {}, not encoded: it has no encoded bytes", codec_name(codec_)));
  Encoded e;
  {
    std::lock_guard<std::mutex> lock(hdf5_mutex);
    const auto& off = offsets_[f];
    e.bytes = opened(f).read_bytes(layout_.data, off[row], off[row + 1] - off[row]);
  }
  read_labels(id, y);
  int64_t elems = 1;
  for (auto v : shape_) elems *= v;
  e.shape = {elems / shape_[0], shape_[0], shape_.back()};
  e.where = fmt::format("{}: {} row {}", files_[f], layout_.data, row);
  e.file = f, e.row = row;
  return e;
}

ValuePipeline SampleStore::pipeline(const Encoded& e) const {
  ValuePipeline pipe;
  pipe.check = [this, f = e.file, row = e.row](float v) { check_value(f, row, v); };
  if (layout_.normalise == Normalise::log1p) pipe.log1p = batch_log1p;
  if (!shift_.empty()) pipe.shift = shift_.data(), pipe.scale = scale_.data();
  pipe.half = !decoder_->lossless();  // a lossy decoder emits FP16 (paper IV); a lossless one keeps the raw path's bits
  return pipe;
}

void SampleStore::check_labels(size_t f, int64_t row, const float* y) const {
  if (layout_.task == Task::segmentation) {
    for (int64_t k = 0; k < label_size_; ++k)
      if (!(y[k] >= 0.f && y[k] < static_cast<float>(layout_.classes) && y[k] == std::floor(y[k])))
        fail_input(files_[f], layout_.labels,
                   fmt::format("row {} pixel {} = {} is not a class number in 0..{}", row, k, y[k], layout_.classes - 1));
    return;
  }
  for (int64_t k = 0; k < label_size_; ++k)
    if (!(y[k] >= -1.f && y[k] <= 1.f))
      fail_input(files_[f], layout_.labels, fmt::format("row {} label {} = {} is outside [-1, 1]", row, k, y[k]));
}

}  // namespace mrplan
