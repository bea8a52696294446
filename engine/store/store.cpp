// Opening a store and reading its columns, frames and lists (colflow/store/store.hpp).
#include "colflow/store/store.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "store/format_internal.hpp"
#include "store/store_text_internal.hpp"

namespace colflow {

std::string_view value_type_name(value_type type) noexcept {
  switch (type) {
    case value_type::float64:
      return "float64";
    case value_type::float32:
      return "float32";
    case value_type::genotype:
      return "genotype";
    case value_type::dosage:
      return "dosage";
  }
  return "unknown";
}

std::uint64_t decoded_column_bytes(value_type type, std::uint64_t rows) noexcept {
  switch (type) {
    case value_type::float64:
      return 8 * rows;
    case value_type::float32:
      return 4 * rows;
    case value_type::genotype:
      return genotype_column_bytes(rows);
    case value_type::dosage:
      return 2 * rows;
  }
  return 0;
}

struct store::impl {
  std::filesystem::path path;
  open_options options;
  std::string data_path, index_path;
  file_descriptor data_fd, index_fd;
  mapped_file data_map, index_map;
  std::vector<std::byte> index_copy;  // pread mode: the index read into memory
  std::span<const std::byte> entries;
  detail::file_header header;
  std::uint64_t data_size = 0, index_size = 0;
  std::string source;
  // From the manifest (stores of version 1.3 and later): checked at open, and again on the
  // bytes parsed at first use.
  std::optional<std::uint64_t> samples_checksum, columns_checksum;
  std::vector<std::pair<std::string, std::uint64_t>> attached;  // docs/FORMAT.md §9.4

  // Hashes each list that has a recorded checksum, and each attached file, and compares.
  void check_lists() const {
    for (const auto& [name, sum] : attached) {
      const auto file = path / name;
      detail::check_list_checksum(file, sum, detail::checksum_file(file));
    }
    if (samples_checksum) {
      const auto file = path / detail::samples_file_name;
      detail::check_list_checksum(file, *samples_checksum, detail::checksum_file(file));
    }
    if (columns_checksum) {
      const auto file = path / detail::columns_file_name;
      detail::check_list_checksum(file, *columns_checksum, detail::checksum_file(file));
    }
  }

  mutable std::once_flag samples_once, columns_once;
  mutable std::vector<sample_info> samples;
  mutable std::vector<column_info> columns;

  column_entry entry(std::size_t j) const noexcept {
    return detail::decode_entry(entries.data() + j * detail::index_entry_size);
  }

  // Adds the column and file to an error raised while decoding column j.
  [[noreturn]] void rethrow_for_column(const error& e, std::size_t j) const {
    throw error(e.kind(),
                "column " + std::to_string(j) + ": " + e.message() + " (" + data_path + ")");
  }

  // The frame's bytes: a view into the mapping, or read into this thread's buffer.
  std::span<const std::byte> frame(const column_entry& e) const {
    if (options.access == access_mode::mmap)
      return data_map.bytes().subspan(e.offset, e.frame_size);
    thread_local std::vector<std::byte> buffer;
    buffer.resize(e.frame_size);
    data_fd.pread_exact(buffer, e.offset);
    return buffer;
  }

  void check(std::size_t j, const column_entry& e, std::span<const std::byte> f) const {
    const std::uint64_t computed = checksum64(f);
    if (computed != e.checksum) {
      std::ostringstream s;
      s << "column " << j << ": frame checksum mismatch: index records 0x" << std::hex << e.checksum
        << ", frame hashes to 0x" << computed << " (" << data_path << ")";
      throw error(errc::checksum_mismatch, s.str());
    }
  }

  // The width of one value, the unit of the byte-shuffle filter.
  static std::size_t element_bytes(value_type type) noexcept {
    return type == value_type::float32 ? 4 : type == value_type::dosage ? 2 : 8;
  }

  // Decodes the payload (decompressed, unshuffled) into `dst` (decoded_size bytes).
  void decode_payload(std::size_t j, const column_entry& e, std::span<std::byte> dst) const {
    const std::span<const std::byte> f = frame(e);
    if (options.verify_checksums) check(j, e, f);
    try {
      if (!(e.flags & column_flag::shuffled)) {
        decompress_frame(e.codec, f, dst);
        return;
      }
      thread_local std::vector<std::byte> shuffled;
      shuffled.resize(e.decoded_size);
      decompress_frame(e.codec, f, shuffled);
      unshuffle_bytes(shuffled, element_bytes(header.type), dst);
    } catch (const error& err) {
      rethrow_for_column(err, j);
    }
  }

  // The payload without a copy when the frame is stored uncompressed in the mapping;
  // otherwise decoded into this thread's buffer.
  std::span<const std::byte> payload_view(std::size_t j, const column_entry& e) const {
    if (e.codec == codec_id::none && !(e.flags & column_flag::shuffled) &&
        options.access == access_mode::mmap) {
      const std::span<const std::byte> f = frame(e);
      if (options.verify_checksums) check(j, e, f);
      return f;
    }
    thread_local std::vector<std::byte> buffer;
    buffer.resize(e.decoded_size);
    decode_payload(j, e, buffer);
    return buffer;
  }

  template <typename Out>
  void read_values(std::size_t j, std::span<Out> out, decode_as as) const {
    if (j >= header.columns)
      throw error(errc::invalid_argument, "column " + std::to_string(j) + " is past the last (" +
                                              std::to_string(header.columns) + " columns)");
    if (out.size() != header.rows)
      throw error(errc::invalid_argument, "read_column: buffer of " + std::to_string(out.size()) +
                                              " values for " + std::to_string(header.rows) +
                                              " rows");
    const column_entry e = entry(j);
    if (header.type == value_type::genotype) {
      const auto codes = payload_view(j, e);
      const auto* u8 = reinterpret_cast<const std::uint8_t*>(codes.data());
      if constexpr (std::is_same_v<Out, double>) {
        decode_genotypes({u8, codes.size()},
                         as == decode_as::standardized ? standardized_lut(e.stats) : dosage_lut(),
                         out);
      } else {
        decode_genotypes(
            {u8, codes.size()},
            as == decode_as::standardized ? standardized_lut_f32(e.stats) : dosage_lut_f32(), out);
      }
      return;
    }
    if (header.type == value_type::dosage) {
      const auto payload = payload_view(j, e);
      // Frames start at any byte of the mapping: an aligned copy is taken when needed.
      std::span<const std::uint16_t> values;
      thread_local std::vector<std::uint16_t> aligned;
      if (reinterpret_cast<std::uintptr_t>(payload.data()) % alignof(std::uint16_t) == 0) {
        values = {reinterpret_cast<const std::uint16_t*>(payload.data()), out.size()};
      } else {
        aligned.resize(out.size());
        std::memcpy(aligned.data(), payload.data(), payload.size());
        values = aligned;
      }
      // A value the writer never produces (past two copies, not missing) means damage that
      // the checksum did not catch (it is checked only on request).
      if (const std::size_t bad = first_invalid_dosage(values); bad != values.size())
        rethrow_for_column(
            error(errc::corrupt_frame, "row " + std::to_string(bad) + " holds dosage value " +
                                           std::to_string(values[bad]) + ", past two copies"),
            j);
      decode_dosages(values, e.stats, as == decode_as::standardized, out);
      return;
    }
    const bool standardize =
        as == decode_as::standardized && !(e.flags & column_flag::standardized);
    // docs/DESIGN.md §2 on the fly, in double from the stored value: missing -> 0, (x - mean) / sd,
    // SD 0 -> all zeros.
    const double mean = e.stats.mean, sd = e.stats.sd;
    const auto convert = [&](double x) -> Out {
      if (!standardize) return static_cast<Out>(x);
      return (std::isnan(x) || !(sd > 0)) ? Out(0) : static_cast<Out>((x - mean) / sd);
    };
    const bool same_type = (header.type == value_type::float64) == std::is_same_v<Out, double>;
    if (same_type) {
      decode_payload(j, e, std::as_writable_bytes(out));
      if (standardize)
        for (Out& v : out) v = convert(static_cast<double>(v));
      return;
    }
    const auto payload = payload_view(j, e);
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (header.type == value_type::float64) {
        double v;
        std::memcpy(&v, payload.data() + 8 * i, 8);
        out[i] = convert(v);
      } else {
        float v;
        std::memcpy(&v, payload.data() + 4 * i, 4);
        out[i] = convert(static_cast<double>(v));
      }
    }
  }
};

store::store(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
store::store(store&&) noexcept = default;
store& store::operator=(store&&) noexcept = default;
store::~store() = default;

store store::open(const std::filesystem::path& path, const open_options& options) {
  auto s = std::make_unique<impl>();
  s->path = path;
  s->options = options;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw error(errc::not_found, "no store at " + path.string());
  if (!std::filesystem::is_directory(status))
    throw error(errc::bad_magic,
                path.string() + " is not a directory (a colflow store is a directory)");
  s->index_path = (path / detail::index_file_name).string();
  s->data_path = (path / detail::data_file_name).string();
  if (!std::filesystem::exists(s->index_path, ec))
    throw error(errc::not_found, "not a colflow store: " + std::string(detail::index_file_name) +
                                     " is missing (" + path.string() + ")");

  // The index: header, exact size, checksum.
  s->index_fd = open_read(s->index_path);
  s->index_size = s->index_fd.size();
  std::span<const std::byte> index;
  if (options.access == access_mode::mmap) {
    s->index_map = mapped_file(s->index_fd, access_hint::will_need);
    index = s->index_map.bytes();
  } else {
    s->index_copy.resize(s->index_size);
    s->index_fd.pread_exact(s->index_copy, 0);
    index = s->index_copy;
  }
  s->header = detail::decode_index_header(index, s->index_path);
  const std::uint64_t expected =
      detail::index_header_size + s->header.columns * detail::index_entry_size;
  if (s->index_size != expected)
    throw error(errc::corrupt_index, "corrupt index: " + std::to_string(s->index_size) +
                                         " bytes, expected " + std::to_string(expected) + " for " +
                                         std::to_string(s->header.columns) + " columns (" +
                                         s->index_path + ")");
  s->entries = index.subspan(detail::index_header_size);
  detail::validate_index_checksum(index.first(detail::index_header_size), s->entries,
                                  s->index_path);

  // The data file: its header must describe the same store.
  s->data_fd = open_read(s->data_path);
  s->data_size = s->data_fd.size();
  std::array<std::byte, detail::data_header_size> data_header{};
  if (s->data_size < detail::data_header_size)
    throw error(errc::corrupt_header, "data file is " + std::to_string(s->data_size) +
                                          " bytes, shorter than its 64-byte header (" +
                                          s->data_path + ")");
  s->data_fd.pread_exact(data_header, 0);
  const detail::file_header dh = detail::decode_data_header(data_header, s->data_path);
  if (dh.store_id != s->header.store_id)
    throw error(errc::mismatched_store, "data and index belong to different stores: Store_Id of " +
                                            s->data_path + " differs from " + s->index_path);
  if (dh.rows != s->header.rows || dh.columns != s->header.columns || dh.type != s->header.type ||
      dh.minor != s->header.minor)
    throw error(
        errc::mismatched_store,
        "data and index disagree on rows, columns, value type or version (" + path.string() + ")");
  detail::validate_entries(s->entries, s->header, s->data_size, s->index_path);
  if (options.access == access_mode::mmap)
    s->data_map = mapped_file(s->data_fd, access_hint::sequential);

  const detail::manifest m = detail::read_manifest(path / detail::manifest_file_name);
  if (m.store_id != s->header.store_id)
    throw error(
        errc::mismatched_store,
        "manifest.json belongs to another store (Store_Id differs) (" + path.string() + ")");
  s->source = m.source;
  // Since 1.3 the lists are covered by checksums: a store of that version without them lost
  // them, and would otherwise relabel results silently.
  if (s->header.minor >= detail::list_checksums_minor &&
      (!m.samples_checksum || !m.columns_checksum))
    throw error(errc::corrupt_header,
                std::string("manifest.json records no checksum of ") +
                    (m.samples_checksum ? detail::columns_file_name : detail::samples_file_name) +
                    ", which a store of format version 1." + std::to_string(s->header.minor) +
                    " carries (" + (path / detail::manifest_file_name).string() + ")");
  s->samples_checksum = m.samples_checksum;
  s->columns_checksum = m.columns_checksum;
  s->attached = m.attached;
  s->check_lists();
  return store(std::move(s));
}

const std::filesystem::path& store::path() const noexcept { return impl_->path; }
std::uint64_t store::num_rows() const noexcept { return impl_->header.rows; }
std::uint64_t store::num_columns() const noexcept { return impl_->header.columns; }
value_type store::type() const noexcept { return impl_->header.type; }
std::array<std::uint8_t, 16> store::store_id() const noexcept { return impl_->header.store_id; }

std::string store::store_id_text() const {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  for (const std::uint8_t b : impl_->header.store_id) {
    text += digits[b >> 4];
    text += digits[b & 15];
  }
  return text;
}
access_mode store::access() const noexcept { return impl_->options.access; }
std::uint16_t store::version_minor() const noexcept { return impl_->header.minor; }
bool store::has_list_checksums() const noexcept {
  return impl_->samples_checksum && impl_->columns_checksum;
}
void store::verify_list_checksums() const { impl_->check_lists(); }

std::vector<std::string> store::attached_files() const {
  std::vector<std::string> names;
  for (const auto& a : impl_->attached) names.push_back(a.first);
  return names;
}

std::string store::read_attached(const std::string& name) const {
  for (const auto& [attached, sum] : impl_->attached) {
    if (attached != name) continue;
    const auto file = impl_->path / name;
    std::string text = read_text_file(file);
    detail::check_list_checksum(file, sum, checksum64(std::as_bytes(std::span(text))));
    return text;
  }
  throw error(errc::not_found,
              "the store " + impl_->path.string() + " has no attached file " + name);
}
column_entry store::entry(std::size_t j) const noexcept { return impl_->entry(j); }

const std::vector<sample_info>& store::samples() const {
  std::call_once(impl_->samples_once, [&] {
    impl_->samples = detail::read_samples(impl_->path / detail::samples_file_name, num_rows(),
                                          impl_->samples_checksum);
  });
  return impl_->samples;
}

const std::vector<column_info>& store::columns() const {
  std::call_once(impl_->columns_once, [&] {
    impl_->columns = detail::read_columns(impl_->path / detail::columns_file_name, num_columns(),
                                          impl_->columns_checksum);
  });
  return impl_->columns;
}

std::vector<chromosome_run> store::chromosome_runs() const {
  return detail::read_chromosome_runs(impl_->path / detail::columns_file_name, num_columns(),
                                      impl_->columns_checksum);
}

store_summary store::summary() const {
  store_summary s;
  s.rows = num_rows();
  s.columns = num_columns();
  s.type = type();
  s.data_bytes = impl_->data_size;
  s.index_bytes = impl_->index_size;
  s.decoded_bytes = decoded_column_bytes(s.type, s.rows) * s.columns;
  for (std::size_t j = 0; j < s.columns; ++j)
    ++s.columns_per_codec[static_cast<std::uint8_t>(entry(j).codec)];
  s.source = impl_->source;
  return s;
}

void store::read_column(std::size_t j, std::span<double> out, decode_as as) const {
  impl_->read_values(j, out, as);
  check_mapping();
}
void store::read_column(std::size_t j, std::span<float> out, decode_as as) const {
  impl_->read_values(j, out, as);
  check_mapping();
}

void store::check_mapping() const {
  if (impl_->data_map.damaged())
    throw error(errc::io_error, impl_->data_path +
                                    ": the data file shrank while it was being read (truncated or "
                                    "rewritten by another program?); the store must be reopened "
                                    "and verified");
}

void store::read_payload(std::size_t j, std::span<std::byte> out) const {
  if (j >= num_columns())
    throw error(errc::invalid_argument, "column " + std::to_string(j) + " is past the last");
  const column_entry e = entry(j);
  if (out.size() != e.decoded_size)
    throw error(errc::invalid_argument, "read_payload: buffer of " + std::to_string(out.size()) +
                                            " bytes, payload is " + std::to_string(e.decoded_size));
  impl_->decode_payload(j, e, out);
  check_mapping();
}

void store::read_frame(std::size_t j, std::vector<std::byte>& frame) const {
  if (j >= num_columns())
    throw error(errc::invalid_argument, "column " + std::to_string(j) + " is past the last");
  const auto f = impl_->frame(entry(j));
  frame.assign(f.begin(), f.end());
  check_mapping();
}

std::span<const std::byte> store::mapped_frame(std::size_t j) const noexcept {
  if (impl_->options.access != access_mode::mmap || j >= num_columns()) return {};
  const column_entry e = entry(j);
  return impl_->data_map.bytes().subspan(e.offset, e.frame_size);
}

void store::map_resident_pages(std::size_t first, std::size_t last,
                               const std::atomic<bool>& stop) const noexcept {
  if (impl_->options.access != access_mode::mmap || first > last || last >= num_columns()) return;
  const column_entry a = entry(first), b = entry(last);
  if (b.offset + b.frame_size <= a.offset) return;
  impl_->data_map.map_resident(a.offset, b.offset + b.frame_size - a.offset, stop);
}

void store::drop_pages(std::size_t first, std::size_t last) const noexcept {
  if (impl_->options.access != access_mode::mmap || first > last || last >= num_columns()) return;
  const column_entry a = entry(first), b = entry(last);
  if (b.offset + b.frame_size <= a.offset) return;
  impl_->data_map.drop(a.offset, b.offset + b.frame_size - a.offset);
}

bool store::prepare_pass(std::span<const std::size_t> order) const noexcept {
  if (impl_->options.access != access_mode::mmap || order.empty()) return false;
  const bool ascending = std::is_sorted(order.begin(), order.end());
  if (ascending && order.back() - order.front() < 2 * order.size()) {
    impl_->data_map.advise(access_hint::sequential);
    return false;
  }
  // Residency of the whole file (one call) for a pass over much of it, else of its frames.
  std::pair<std::uint64_t, std::uint64_t> pages{0, 0};
  if (4 * order.size() >= num_columns()) {
    pages = impl_->data_map.resident_pages(0, impl_->data_map.bytes().size());
  } else {
    for (const std::size_t j : order) {
      const column_entry e = entry(j);
      const auto [resident, all] = impl_->data_map.resident_pages(e.offset, e.frame_size);
      pages.first += resident;
      pages.second += all;
    }
  }
  if (10 * pages.first >= 9 * pages.second) return false;
  impl_->data_map.advise(access_hint::random);
  return true;
}

void store::prepare_random_reads() const noexcept {
  if (impl_->options.access == access_mode::mmap) impl_->data_map.advise(access_hint::random);
}

void store::prefetch(std::size_t j) const noexcept {
  if (impl_->options.access != access_mode::mmap || j >= num_columns()) return;
  const column_entry e = entry(j);
  impl_->data_map.will_need(e.offset, e.frame_size);
}

void store::verify_checksum(std::size_t j) const {
  if (j >= num_columns())
    throw error(errc::invalid_argument, "column " + std::to_string(j) + " is past the last");
  const column_entry e = entry(j);
  impl_->check(j, e, impl_->frame(e));
  check_mapping();
}

}  // namespace colflow
