// Writing a store so that it appears whole or not at all.
//
// Everything is written inside a staged directory (colflow/io/staged_output.hpp) beside the
// target: data frames stream to columns.dat and index entries to columns.idx.partial as columns
// are appended, so memory stays flat for any number of columns. finish() completes the headers,
// fsyncs each file, renames the index into place last, and only then commits the directory
// (fsync, rename or exchange with an existing store, fsync of the parent).
#include "colflow/store/store_writer.hpp"

#include <cerrno>
#include <cstdio>
#include <optional>
#include <random>

#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"
#include "store/format_internal.hpp"
#include "store/store_text_internal.hpp"

namespace colflow {
namespace {

constexpr const char* partial_index_name = "columns.idx.partial";

std::array<std::uint8_t, 16> random_store_id() {
  std::random_device rd;
  std::array<std::uint8_t, 16> id{};
  for (std::size_t i = 0; i < id.size(); i += 4) {
    const std::uint32_t r = rd();
    for (std::size_t k = 0; k < 4; ++k) id[i + k] = static_cast<std::uint8_t>(r >> (8 * k));
  }
  return id;
}

// Only a store (or an empty directory) may be replaced: --force must never delete a home
// directory given as --out by mistake.
bool replaceable(const std::filesystem::path& target) {
  std::error_code ec;
  if (std::filesystem::is_directory(target, ec)) {
    return std::filesystem::exists(target / detail::index_file_name, ec) ||
           std::filesystem::exists(target / detail::data_file_name, ec) ||
           std::filesystem::is_empty(target, ec);
  }
  return false;
}

}  // namespace

struct store_writer::impl {
  std::filesystem::path target, temp;
  writer_options options;
  detail::file_header header;
  // Declared before the files so that it is destroyed after them: an abandoned writer closes
  // what is open, then the staged directory removes the partial store.
  std::optional<staged_output> staging;
  std::optional<buffered_writer> data, index, columns_text;
  // The list checksums the manifest records, of the bytes as they are handed to the files.
  std::uint64_t samples_checksum = 0;
  detail::checksum_stream columns_checksum;
  store_summary summary;
  bool finished = false;

  void check_target() const {
    std::error_code ec;
    if (!std::filesystem::exists(target, ec)) return;
    if (!options.overwrite)
      throw error(errc::already_exists,
                  target.string() + " already exists (use --force to replace it)");
    if (!replaceable(target))
      throw error(errc::already_exists, target.string() +
                                            " exists and is not a colflow store; refusing to "
                                            "replace it");
  }

  void compute_index_checksum_and_write_header() {
    index->flush();
    file_descriptor& fd = index->fd();
    // Re-read the entries (just written, so from the page cache) to hash header + entries.
    const std::uint64_t entries_bytes = header.columns * detail::index_entry_size;
    std::vector<std::byte> entries(entries_bytes);
    {
      file_descriptor reader = open_read(temp / partial_index_name);
      reader.pread_exact(entries, detail::index_header_size);
    }
    const auto h = detail::encode_index_header(header, entries);
    fd.pwrite_all(h, 0);
  }
};

store_writer::store_writer(const std::filesystem::path& path, const writer_options& options,
                           std::vector<sample_info> samples)
    : impl_(std::make_unique<impl>()) {
  impl& w = *impl_;
  w.target = path;
  w.options = options;
  if (options.type != value_type::float64 && options.type != value_type::float32 &&
      options.type != value_type::genotype && options.type != value_type::dosage)
    throw error(errc::invalid_argument, "unknown value type");
  if (options.rows == 0 || options.rows > (std::uint64_t{1} << 48))
    throw error(errc::invalid_argument,
                "a store needs 1 to 2^48 rows, got " + std::to_string(options.rows));
  if (samples.size() != options.rows)
    throw error(errc::invalid_argument, std::to_string(samples.size()) + " samples for " +
                                            std::to_string(options.rows) + " rows");
  for (std::size_t k = 0; k < options.attached.size(); ++k) {
    detail::check_attached_name(options.attached[k].name);
    for (std::size_t l = 0; l < k; ++l)
      if (options.attached[l].name == options.attached[k].name)
        throw error(errc::invalid_argument,
                    "file " + options.attached[k].name + " attached to a store twice");
  }
  if (path.filename().empty())
    throw error(errc::invalid_argument, "store path '" + path.string() + "' has no name");
  w.check_target();

  w.header.store_id = random_store_id();
  w.header.rows = options.rows;
  w.header.type = options.type;
  w.header.minor = format_minor_for(options.type);
  w.summary.rows = options.rows;
  w.summary.type = options.type;
  w.summary.source = options.source;

  w.staging.emplace(path, staged_output::kind::directory);
  w.temp = w.staging->path();

  const std::string samples_text = detail::format_samples(samples);
  w.samples_checksum = checksum64(std::as_bytes(std::span(samples_text)));
  write_text_file(w.temp / detail::samples_file_name, samples_text);
  w.data.emplace(create_file(w.temp / detail::data_file_name));
  w.data->write(detail::encode_data_header(w.header));  // completed by finish()
  w.index.emplace(create_file(w.temp / partial_index_name));
  w.index->write(std::array<std::byte, detail::index_header_size>{});
  w.columns_text.emplace(create_file(w.temp / detail::columns_file_name));
  const std::string columns_header = std::string(detail::columns_header) + "\n";
  w.columns_text->write(columns_header);
  w.columns_checksum.update(columns_header);
}

store_writer::store_writer(store_writer&&) noexcept = default;
store_writer& store_writer::operator=(store_writer&&) noexcept = default;
store_writer::~store_writer() = default;

void store_writer::append(const encoded_column& column, const column_info& info) {
  impl& w = *impl_;
  if (w.finished) throw error(errc::invalid_argument, "append after finish");
  // Between columns: a stop request abandons the store (its directory goes with the writer).
  throw_if_stop_requested();
  const std::uint64_t expected = decoded_column_bytes(w.header.type, w.header.rows);
  if (column.decoded_size != expected)
    throw error(errc::invalid_argument, "column " + std::to_string(w.header.columns) + " has " +
                                            std::to_string(column.decoded_size) +
                                            " decoded bytes, the store expects " +
                                            std::to_string(expected));
  if (w.header.type == value_type::genotype &&
      (column.flags & (column_flag::shuffled | column_flag::standardized)))
    throw error(errc::invalid_argument, "a genotype column cannot be shuffled or standardized");
  if (w.header.type == value_type::dosage && (column.flags & column_flag::standardized))
    throw error(errc::invalid_argument, "a dosage column cannot be standardized");
  if (column.codec == codec_id::fixed16_zstd &&
      (w.header.type != value_type::float32 || (column.flags & column_flag::shuffled)))
    throw error(errc::invalid_argument,
                "fixed16-zstd frames are for unshuffled float32 columns only");
  // A store that uses fixed16-zstd is written at 1.4, the version that added it: older readers
  // then know at once that they may not read all of it (docs/FORMAT.md §12).
  if (column.codec == codec_id::fixed16_zstd)
    w.header.minor = std::max<std::uint16_t>(w.header.minor, 4);
  const std::string line = detail::format_column_line(info);  // validates the fields first

  column_entry e;
  e.offset = w.data->position();
  e.frame_size = column.frame.size();
  e.decoded_size = column.decoded_size;
  e.checksum = column.checksum;
  e.stats = column.stats;
  e.codec = column.codec;
  e.level = column.level;
  e.flags = column.flags;
  w.data->write(column.frame);
  w.index->write(detail::encode_entry(e));
  w.columns_text->write(line);
  w.columns_checksum.update(line);
  ++w.header.columns;
  ++w.summary.columns_per_codec[static_cast<std::uint8_t>(column.codec)];
}

std::uint64_t store_writer::num_columns() const noexcept { return impl_->header.columns; }

void store_writer::finish() {
  impl& w = *impl_;
  if (w.finished) return;
  w.columns_text->finish();
  w.data->flush();
  w.data->fd().pwrite_all(detail::encode_data_header(w.header), 0);
  w.summary.data_bytes = w.data->position();
  w.data->finish();

  w.summary.columns = w.header.columns;
  w.summary.index_bytes = detail::index_header_size + w.header.columns * detail::index_entry_size;
  w.summary.decoded_bytes = decoded_column_bytes(w.header.type, w.header.rows) * w.header.columns;
  detail::list_checksums sums{w.samples_checksum, w.columns_checksum.digest(), {}};
  for (const attached_file& a : w.options.attached) {
    write_text_file(w.temp / a.name, a.text);
    sums.attached.emplace_back(a.name, checksum64(std::as_bytes(std::span(a.text))));
  }
  write_text_file(w.temp / detail::manifest_file_name,
                  detail::format_manifest(w.header.store_id, w.header.minor, w.summary, sums));

  // The index last: until it has its final name, the directory does not open as a store.
  w.compute_index_checksum_and_write_header();
  w.index->finish();
  if (::rename((w.temp / partial_index_name).c_str(), (w.temp / detail::index_file_name).c_str()))
    throw_system_error(errno, "cannot rename the index", w.temp.string());

  // The last moment to honour a stop request, and to refuse a target that became something
  // else than a store meanwhile. commit() fsyncs the directory, renames it (exchanging it with
  // an existing store atomically) and fsyncs the parent.
  throw_if_stop_requested();
  w.check_target();
  w.staging->commit();
  w.finished = true;
}

}  // namespace colflow
