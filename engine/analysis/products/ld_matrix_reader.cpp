// Reading an LD matrix column by column from an LD store, GCTB's .ldm files or colflow's
// .ldband (analysis/ld_matrix.hpp; layouts in docs/FORMAT.md §13 and Appendix B).
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "analysis/products/ld_matrix_internal.hpp"
#include "colflow/analysis/ld_matrix.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"

namespace colflow {
namespace {

static_assert(std::endian::native == std::endian::little, "LD files are little-endian");

// A line of whitespace-separated fields.
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// The lines of a text, without their LF.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

template <typename T>
T number(std::string_view field, const std::string& where, const char* what) {
  T v{};
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc{} || end != field.data() + field.size())
    throw error(errc::corrupt_header,
                where + ": " + what + " is not a number: '" + std::string(field) + "'");
  return v;
}

std::string at_line(const std::filesystem::path& file, std::size_t line) {
  return file.string() + ":" + std::to_string(line);
}

// Checks a column's window against the matrix's size; `where` names it in errors.
void check_window(const ld_window_entry& w, std::size_t j, std::size_t m, bool sparse,
                  const std::string& where) {
  const bool ok = w.first <= w.last && w.last < m && w.count >= 1 &&
                  w.count <= w.last - w.first + 1 && (sparse || w.count == w.last - w.first + 1) &&
                  (!sparse || (w.first <= j && j <= w.last));
  if (!ok)
    throw error(errc::corrupt_header, where + ": the window of variant " + std::to_string(j) +
                                          " (first " + std::to_string(w.first) + ", last " +
                                          std::to_string(w.last) + ", " + std::to_string(w.count) +
                                          " values) does not fit a matrix of " + std::to_string(m) +
                                          " variants");
}

}  // namespace

std::string format_ld_variants(const std::vector<ldm_variant>& variants,
                               const std::vector<ld_window_entry>& windows) {
  std::string out(ld_variants_header);
  out += '\n';
  char buf[64];
  for (std::size_t j = 0; j < variants.size(); ++j) {
    out += variants[j].info.id;
    std::snprintf(buf, sizeof buf, "\t%.17g\t", variants[j].a1_freq);
    out += buf;
    out += std::to_string(variants[j].n) + '\t' + std::to_string(windows[j].first) + '\t' +
           std::to_string(windows[j].last) + '\t' + std::to_string(windows[j].count) + '\n';
  }
  return out;
}

struct ld_matrix::impl {
  std::string format;
  ldm_kind kind = ldm_kind::full;
  std::vector<ldm_variant> variants;
  std::vector<ld_window_entry> windows;
  std::uint64_t samples = 0, values = 0;

  // An LD store, and whether its columns have been read one at a time (the mapping's hints
  // are set for that at the first).
  std::optional<store> st;
  mutable std::once_flag random_reads;
  // GCTB's .bin: column j at offsets[j].
  std::filesystem::path bin;
  file_descriptor fd;
  std::vector<std::uint64_t> offsets;
  // .ldband: every value in memory, row i's values from band_offset[i], rows end at band_end.
  std::vector<float> band;
  std::vector<std::uint64_t> band_offset, band_end;

  bool sparse() const { return kind == ldm_kind::sparse; }

  // A store column decoded densely (`dense`: size() values) to the column's view.
  void view_of_dense(std::size_t j, std::span<const float> dense, std::vector<std::uint32_t>& rows,
                     std::vector<float>& vals, ld_column_view& v) const {
    const ld_window_entry& w = windows[j];
    v.position = j;
    v.first = w.first;
    if (!sparse()) {
      v.rows = {};
      v.values = dense.subspan(w.first, w.count);
      return;
    }
    rows.clear();
    vals.clear();
    for (std::uint64_t k = w.first; k <= w.last; ++k)
      if (dense[k] != 0) {
        rows.push_back(static_cast<std::uint32_t>(k));
        vals.push_back(dense[k]);
      }
    if (rows.size() != w.count)
      throw error(errc::corrupt_frame,
                  "LD column " + std::to_string(j) + " (" + variants[j].info.id + ") holds " +
                      std::to_string(rows.size()) + " values, ld.tsv records " +
                      std::to_string(w.count) + " (" + st->path().string() + ")");
    v.rows = rows;
    v.values = vals;
  }

  std::size_t read(std::size_t j, std::vector<std::uint32_t>& rows,
                   std::vector<float>& vals) const {
    const ld_window_entry& w = windows[j];
    if (st) {
      std::call_once(random_reads, [&] { st->prepare_random_reads(); });
      st->prefetch(j);  // the frame's pages in one request, not a fault each
      std::vector<float> dense(variants.size());
      st->read_column(j, dense, decode_as::stored);
      ld_column_view v;
      view_of_dense(j, dense, rows, vals, v);  // a sparse column's view is rows and vals
      if (!sparse()) {
        rows.clear();
        vals.assign(v.values.begin(), v.values.end());
      }
      return w.first;
    }
    if (!band.empty() || !band_end.empty()) {
      rows.clear();
      vals.clear();
      for (std::uint64_t k = w.first; k < j; ++k) vals.push_back(band[band_offset[k] + (j - k)]);
      for (std::uint64_t k = j; k <= w.last; ++k) vals.push_back(band[band_offset[j] + (k - j)]);
      return w.first;
    }
    vals.resize(w.count);
    if (sparse()) {
      rows.resize(w.count);
      fd.pread_exact(std::as_writable_bytes(std::span(rows)), offsets[j]);
      fd.pread_exact(std::as_writable_bytes(std::span(vals)), offsets[j] + 4 * w.count);
      for (std::size_t k = 0; k < rows.size(); ++k)
        if (rows[k] >= variants.size() || (k > 0 && rows[k] <= rows[k - 1]))
          throw error(errc::corrupt_frame,
                      "LD column " + std::to_string(j) + " (" + variants[j].info.id + "): row " +
                          std::to_string(rows[k]) + " out of order or past the " +
                          std::to_string(variants.size()) + " variants (" + bin.string() + ")");
    } else {
      rows.clear();
      fd.pread_exact(std::as_writable_bytes(std::span(vals)), offsets[j]);
    }
    return w.first;
  }
};

namespace {

// --- an LD store ---

std::unique_ptr<ld_matrix::impl> open_store(const std::filesystem::path& path) {
  auto m = std::make_unique<ld_matrix::impl>();
  // Every frame's checksum is checked before it is decoded: a chain reads each column once or a
  // few times, and the hash costs a small part of the decode, where a damaged value would pass
  // into every effect of the chain unseen.
  open_options verified;
  verified.verify_checksums = true;
  m->st.emplace(store::open(path, verified));
  const store& s = *m->st;
  std::string description;
  try {
    description = s.read_attached(std::string(ld_description_file));
  } catch (const error& e) {
    if (e.code() != make_error_code(errc::not_found)) throw;
    throw error(errc::invalid_argument,
                path.string() +
                    " is a store but not an LD store (no ld.json): make one with colflow ld "
                    "--make-ldm");
  }
  const std::string where = (path / std::string(ld_description_file)).string();
  const auto j = nlohmann::json::parse(description, nullptr, false);
  const auto text = [&](const char* key) -> std::string {
    const auto it = j.is_object() ? j.find(key) : j.end();
    if (it == j.end() || !it->is_string())
      throw error(errc::corrupt_header, where + ": no string \"" + key + "\"");
    return it->get<std::string>();
  };
  if (j.is_discarded() || !j.is_object() || text("format") != "colflow ld store")
    throw error(errc::corrupt_header, where + ": not the description of a colflow LD store");
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_unsigned() || version->get<std::uint64_t>() != 1)
    throw error(errc::unsupported_version,
                where + ": LD store version is not 1 (this build reads version 1)");
  const std::string kind = text("kind");
  if (kind == "full")
    m->kind = ldm_kind::full;
  else if (kind == "band")
    m->kind = ldm_kind::band;
  else if (kind == "sparse")
    m->kind = ldm_kind::sparse;
  else
    throw error(errc::corrupt_header, where + ": unknown kind '" + kind + "'");
  if (text("statistic") != "r")
    throw error(errc::corrupt_header, where + ": the statistic is not r");
  const auto samples = j.find("samples");
  if (samples == j.end() || !samples->is_number_unsigned())
    throw error(errc::corrupt_header, where + ": no sample count");
  m->samples = samples->get<std::uint64_t>();
  if (s.type() != value_type::float32 || s.num_rows() != s.num_columns())
    throw error(errc::corrupt_header, path.string() +
                                          ": an LD store is a square float32 store, this one "
                                          "is " +
                                          std::to_string(s.num_rows()) + " x " +
                                          std::to_string(s.num_columns()) + " " +
                                          std::string(value_type_name(s.type())));
  const std::size_t n = s.num_columns();
  const std::filesystem::path file = path / std::string(ld_variants_file);
  const std::string table = s.read_attached(std::string(ld_variants_file));
  const auto lines = split_lines(table);
  if (lines.empty() || lines[0] != ld_variants_header)
    throw error(errc::corrupt_header,
                at_line(file, 1) + ": the header is not " + std::string(ld_variants_header));
  if (lines.size() != n + 1)
    throw error(errc::corrupt_header, file.string() + ": " + std::to_string(lines.size() - 1) +
                                          " variants for a store of " + std::to_string(n));
  m->variants.resize(n);
  m->windows.resize(n);
  const auto& columns = s.columns();
  for (std::size_t k = 0; k < n; ++k) {
    const std::string here = at_line(file, k + 2);
    const auto f = split_fields(lines[k + 1]);
    if (f.size() != 6)
      throw error(errc::corrupt_header, here + ": " + std::to_string(f.size()) + " fields, not 6");
    if (f[0] != columns[k].id)
      throw error(errc::corrupt_header, here + ": variant " + std::string(f[0]) +
                                            " where columns.tsv has " + columns[k].id);
    ldm_variant& v = m->variants[k];
    v.info = columns[k];
    v.a1_freq = number<double>(f[1], here, "A1_FREQ");
    v.n = number<std::uint64_t>(f[2], here, "N");
    ld_window_entry& w = m->windows[k];
    w.first = number<std::uint64_t>(f[3], here, "FIRST");
    w.last = number<std::uint64_t>(f[4], here, "LAST");
    w.count = number<std::uint64_t>(f[5], here, "COUNT");
    check_window(w, k, n, m->sparse(), here);
    if (!m->sparse() && (w.first > k || k > w.last))
      throw error(errc::corrupt_header, here + ": the window does not hold the diagonal");
    m->values += w.count;
  }
  m->format = "colflow LD store";
  return m;
}

// --- GCTB's .ldm.KIND.info / .bin ---

std::unique_ptr<ld_matrix::impl> open_gctb(const std::filesystem::path& prefix, ldm_kind kind) {
  auto m = std::make_unique<ld_matrix::impl>();
  m->kind = kind;
  m->format = "GCTB .ldm." + std::string(ldm_kind_name(kind));
  const std::filesystem::path info = prefix.string() + ".info";
  m->bin = prefix.string() + ".bin";
  const std::string text = read_text_file(info);
  const auto lines = split_lines(text);
  const auto header = lines.empty() ? std::vector<std::string_view>{} : split_fields(lines[0]);
  // GCTB 2.05's header: 15 fields (16 with Skeleton); the older 12-field one has no
  // frequencies and is not read.
  if ((header.size() != 15 && header.size() != 16) || header[0] != "Chrom" ||
      header[6] != "A1Freq" || header[10] != "WindSize")
    throw error(errc::corrupt_header,
                at_line(info, 1) +
                    ": not the header of GCTB 2.05's .ldm info file (Chrom ID GenPos PhysPos "
                    "A1 A2 A1Freq Index WindStart WindEnd WindSize WindWidth N SamplVar LDsum)");
  std::size_t n = 0;
  for (std::size_t l = 1; l < lines.size(); ++l)
    if (!split_fields(lines[l]).empty()) ++n;
  m->variants.resize(n);
  m->windows.resize(n);
  m->offsets.resize(n);
  const std::uint64_t value_bytes = kind == ldm_kind::sparse ? 8 : 4;
  std::uint64_t offset = 0;
  std::size_t k = 0;
  for (std::size_t l = 1; l < lines.size(); ++l) {
    const auto f = split_fields(lines[l]);
    if (f.empty()) continue;
    const std::string here = at_line(info, l + 1);
    if (f.size() != header.size())
      throw error(errc::corrupt_header, here + ": " + std::to_string(f.size()) +
                                            " fields, the header has " +
                                            std::to_string(header.size()));
    ldm_variant& v = m->variants[k];
    v.info = {std::string(f[0]), std::string(f[1]), std::string(f[2]),
              std::string(f[3]), std::string(f[4]), std::string(f[5])};
    v.a1_freq = number<double>(f[6], here, "A1Freq");
    if (number<std::uint64_t>(f[7], here, "Index") != k)
      throw error(errc::corrupt_header,
                  here + ": Index " + std::string(f[7]) + ", expected " + std::to_string(k));
    ld_window_entry& w = m->windows[k];
    w.first = number<std::uint64_t>(f[8], here, "WindStart");
    w.last = number<std::uint64_t>(f[9], here, "WindEnd");
    w.count = number<std::uint64_t>(f[10], here, "WindSize");
    v.n = number<std::uint64_t>(f[12], here, "N");
    m->samples = std::max(m->samples, v.n);
    check_window(w, k, n, kind == ldm_kind::sparse, here);
    m->offsets[k] = offset;
    offset += value_bytes * w.count;
    m->values += w.count;
    ++k;
  }
  m->fd = open_read(m->bin);
  const std::uint64_t size = m->fd.size();
  if (size != offset)
    throw error(errc::corrupt_index, m->bin.string() + " is " + std::to_string(size) +
                                         " bytes; its info file's windows make " +
                                         std::to_string(offset));
  return m;
}

// --- colflow's .ldband (docs/FORMAT.md Appendix B) ---

std::unique_ptr<ld_matrix::impl> open_band(const std::filesystem::path& file) {
  auto m = std::make_unique<ld_matrix::impl>();
  m->kind = ldm_kind::band;
  m->format = "colflow .ldband";
  const file_descriptor fd = open_read(file);
  const std::uint64_t size = fd.size();
  std::array<std::byte, 40> header{};
  if (size < header.size())
    throw error(errc::corrupt_header, file.string() + " is too short for a band header");
  fd.pread_exact(header, 0);
  const auto field = [&]<typename T>(std::size_t at, T) {
    T v;
    std::memcpy(&v, header.data() + at, sizeof v);
    return v;
  };
  if (std::memcmp(header.data(), "CFLDBAND", 8) != 0)
    throw error(errc::bad_magic, file.string() + " is not a colflow .ldband file");
  if (field(8, std::uint32_t{}) != 1)
    throw error(errc::unsupported_version, file.string() + ": .ldband version is not 1");
  const std::uint32_t width = field(12, std::uint32_t{});
  const std::uint64_t n = field(16, std::uint64_t{}), count = field(24, std::uint64_t{});
  if (field(32, std::uint32_t{}) != 0)
    throw error(errc::invalid_argument,
                file.string() + " holds r squared; an LD matrix needs r (colflow ld --r band)");
  if ((width != 4 && width != 8) || n > (size - 40) / 8 || count > (size - 40 - 8 * n) / width ||
      40 + 8 * n + width * count != size)
    throw error(errc::corrupt_header, file.string() + ": header and file size disagree");
  m->band_end.resize(n);
  fd.pread_exact(std::as_writable_bytes(std::span(m->band_end)), 40);
  m->band_offset.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (m->band_end[i] <= i || m->band_end[i] > n || (i > 0 && m->band_end[i] < m->band_end[i - 1]))
      throw error(errc::corrupt_index, file.string() + ": the band of row " + std::to_string(i) +
                                           " ends at " + std::to_string(m->band_end[i]));
    m->band_offset[i + 1] = m->band_offset[i] + (m->band_end[i] - i);
  }
  if (m->band_offset[n] != count)
    throw error(errc::corrupt_index, file.string() + ": the band ends make " +
                                         std::to_string(m->band_offset[n]) + " values, not " +
                                         std::to_string(count));
  m->band.resize(count);
  if (width == 4) {
    fd.pread_exact(std::as_writable_bytes(std::span(m->band)), 40 + 8 * n);
  } else {
    std::vector<double> wide(count);
    fd.pread_exact(std::as_writable_bytes(std::span(wide)), 40 + 8 * n);
    for (std::size_t k = 0; k < count; ++k) m->band[k] = static_cast<float>(wide[k]);
  }
  // Column j: the rows whose band reaches it, then its own row.
  m->windows.resize(n);
  std::size_t k = 0;
  for (std::size_t j = 0; j < n; ++j) {
    while (m->band_end[k] <= j) ++k;
    m->windows[j] = {k, m->band_end[j] - 1, m->band_end[j] - k};
    m->values += m->windows[j].count;
  }
  const std::filesystem::path vars = file.string() + ".vars";
  const std::string text = read_text_file(vars);
  const auto lines = split_lines(text);
  if (lines.size() != n + 1)
    throw error(errc::corrupt_header, vars.string() + ": " +
                                          std::to_string(lines.empty() ? 0 : lines.size() - 1) +
                                          " variants for a band of " + std::to_string(n));
  m->variants.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto f = split_fields(lines[i + 1]);
    if (f.size() != 5)
      throw error(errc::corrupt_header,
                  at_line(vars, i + 2) + ": " + std::to_string(f.size()) + " fields, not 5");
    m->variants[i].info = {std::string(f[0]), std::string(f[2]), "0",
                           std::string(f[1]), std::string(f[3]), std::string(f[4])};
    m->variants[i].a1_freq = std::numeric_limits<double>::quiet_NaN();
  }
  return m;
}

bool ends_with(const std::string& s, std::string_view suffix) { return s.ends_with(suffix); }

}  // namespace

ld_matrix::ld_matrix(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
ld_matrix::ld_matrix(ld_matrix&&) noexcept = default;
ld_matrix& ld_matrix::operator=(ld_matrix&&) noexcept = default;
ld_matrix::~ld_matrix() = default;

ld_matrix ld_matrix::open(const std::filesystem::path& path) {
  std::string p = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return ld_matrix(open_store(path));
  for (const std::string_view ext : {".info", ".bin"})
    if (ends_with(p, ext) && p.find(".ldm.") != std::string::npos) p.resize(p.size() - ext.size());
  for (const ldm_kind kind : {ldm_kind::full, ldm_kind::band, ldm_kind::sparse})
    if (ends_with(p, ".ldm." + std::string(ldm_kind_name(kind))))
      return ld_matrix(open_gctb(p, kind));
  if (ends_with(p, ".ldband")) return ld_matrix(open_band(p));
  if (std::filesystem::exists(p + ".ldband", ec)) return ld_matrix(open_band(p + ".ldband"));
  for (const ldm_kind kind : {ldm_kind::full, ldm_kind::band, ldm_kind::sparse}) {
    const std::string prefix = p + ".ldm." + std::string(ldm_kind_name(kind));
    if (std::filesystem::exists(prefix + ".info", ec)) return ld_matrix(open_gctb(prefix, kind));
  }
  throw error(errc::not_found,
              "no LD matrix at " + p +
                  " (an LD store directory, GCTB's PREFIX.ldm.full / .ldm.band / .ldm.sparse, "
                  "or a .ldband file)");
}

std::string_view ld_matrix::source_format() const noexcept { return impl_->format; }
ldm_kind ld_matrix::kind() const noexcept { return impl_->kind; }
std::size_t ld_matrix::size() const noexcept { return impl_->variants.size(); }
const std::vector<ldm_variant>& ld_matrix::variants() const noexcept { return impl_->variants; }
std::uint64_t ld_matrix::samples() const noexcept { return impl_->samples; }
std::uint64_t ld_matrix::values() const noexcept { return impl_->values; }

std::size_t ld_matrix::read_column(std::size_t j, std::vector<std::uint32_t>& rows,
                                   std::vector<float>& values) const {
  if (j >= size())
    throw error(errc::invalid_argument,
                "LD column " + std::to_string(j) + " of a matrix of " + std::to_string(size()));
  return impl_->read(j, rows, values);
}

pass_stats ld_matrix::stream(std::span<const std::size_t> order,
                             const std::function<bool(const ld_column_view&)>& kernel,
                             const stream_options& options) const {
  for (const std::size_t j : order)
    if (j >= size())
      throw error(errc::invalid_argument,
                  "LD column " + std::to_string(j) + " of a matrix of " + std::to_string(size()));
  std::vector<std::uint32_t> rows;
  std::vector<float> values;
  if (impl_->st) {
    stream_options so = options;
    so.values = decode_as::stored;
    so.decode_values = true;
    column_stream<float> stream(*impl_->st, so);
    return stream.run(order, [&](const column_view<float>& c) {
      ld_column_view v;
      impl_->view_of_dense(c.column, std::span(c.values.data(), size()), rows, values, v);
      return kernel(v);
    });
  }
  const auto start = std::chrono::steady_clock::now();
  pass_stats stats;
  for (const std::size_t j : order) {
    ld_column_view v;
    v.position = j;
    v.first = impl_->read(j, rows, values);
    v.rows = rows;
    v.values = values;
    ++stats.columns;
    stats.bytes_decoded += 4 * values.size();
    if (!kernel(v)) break;
  }
  stats.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace colflow
