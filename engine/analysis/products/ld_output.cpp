// The reports of `colflow ld`, written from ld(): PLINK 1.9's table, its text matrices and its
// binary matrices (analysis/ld.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/ld.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {
namespace {

constexpr char band_magic[9] = "CFLDBAND";
constexpr std::uint32_t band_version = 1;

// A number as PLINK 1.9 prints it: %g, nan for NaN.
void put(tsv_writer& out, double v) {
  if (std::isnan(v))
    out.text("nan");
  else
    out.number(v);
}

void write_table(const store& s, const selection& sel, const ld_result& result,
                 const std::filesystem::path& file, int digits) {
  const bool freqs = result.options.with_freqs;
  const bool squared = result.options.statistic == ld_statistic::r2;
  tsv_writer out(file, digits);
  for (const char* name : {"CHR_A", "BP_A", "SNP_A"}) out.text(name);
  if (freqs) out.text("MAF_A");
  for (const char* name : {"CHR_B", "BP_B", "SNP_B"}) out.text(name);
  if (freqs) out.text("MAF_B");
  out.text(squared ? "R2" : "R");
  out.end_line();
  const auto& columns = s.columns();
  for (const ld_pair& p : result.pairs) {
    const column_info &a = columns[sel.columns[p.a]], &b = columns[sel.columns[p.b]];
    out.text(a.chrom).text(a.pos).text(a.id);
    if (freqs) put(out, result.a1_freq[p.a]);
    out.text(b.chrom).text(b.pos).text(b.id);
    if (freqs) put(out, result.a1_freq[p.b]);
    put(out, squared ? p.r2 : p.r);
    out.end_line();
  }
  out.commit();
}

// Whether entry (i, j) of the matrix is written, and whether as 0 (square0's upper triangle).
bool written(ld_shape shape, std::size_t i, std::size_t j) noexcept {
  return shape != ld_shape::triangle || j <= i;
}
bool zeroed(ld_shape shape, std::size_t i, std::size_t j) noexcept {
  return shape == ld_shape::square0 && j > i;
}

void write_text_matrix(const ld_result& result, const std::filesystem::path& file, int digits) {
  const std::size_t m = result.columns;
  const ld_shape shape = result.options.shape;
  tsv_writer out(file, digits);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < m && written(shape, i, j); ++j) {
      if (zeroed(shape, i, j))
        out.text("0");
      else
        put(out, result.matrix[i * m + j]);
    }
    out.end_line();
  }
  out.commit();
}

template <typename T>
void write_binary_matrix(const ld_result& result, const std::filesystem::path& file) {
  const std::size_t m = result.columns;
  const ld_shape shape = result.options.shape;
  staged_output staged(file);
  const int fd = ::open(staged.path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, "cannot open", staged.path().string());
  buffered_writer out(file_descriptor(fd, staged.path().string()));
  std::vector<T> row(m);
  for (std::size_t i = 0; i < m; ++i) {
    std::size_t count = 0;
    for (std::size_t j = 0; j < m && written(shape, i, j); ++j)
      row[count++] = zeroed(shape, i, j) ? T(0) : static_cast<T>(result.matrix[i * m + j]);
    out.write(std::as_bytes(std::span(row.data(), count)));
  }
  out.finish();
  staged.commit();
}

// The banded matrix (docs/FORMAT.md, "Banded LD matrix"): header, band ends, values.
template <typename T>
void write_band(const ld_result& result, const std::filesystem::path& file) {
  static_assert(std::endian::native == std::endian::little, "the band format is little-endian");
  staged_output staged(file);
  const int fd = ::open(staged.path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, "cannot open", staged.path().string());
  buffered_writer out(file_descriptor(fd, staged.path().string()));
  const auto put = [&](const auto& v) { out.write(std::as_bytes(std::span(&v, 1))); };
  out.write(std::string_view(band_magic, 8));
  put(std::uint32_t{band_version});
  put(static_cast<std::uint32_t>(sizeof(T)));
  put(static_cast<std::uint64_t>(result.columns));
  put(static_cast<std::uint64_t>(result.matrix.size()));
  put(static_cast<std::uint32_t>(result.options.statistic == ld_statistic::r2 ? 1 : 0));
  put(std::uint32_t{0});
  for (std::size_t e : result.band_end) put(static_cast<std::uint64_t>(e));
  std::vector<T> values(result.matrix.begin(), result.matrix.end());
  out.write(std::as_bytes(std::span(values)));
  out.finish();
  staged.commit(staged_output::directory_sync::by_caller);
}

}  // namespace

std::filesystem::path write_ld(const store& s, const selection& sel, const ld_result& result,
                               const std::filesystem::path& prefix, int digits) {
  detail::check_digits(digits);
  if (result.columns != sel.columns.size())
    throw error(errc::invalid_argument, "write_ld: a result of " + std::to_string(result.columns) +
                                            " columns for " + std::to_string(sel.columns.size()) +
                                            " selected columns");
  if (result.options.shape == ld_shape::table) {
    const auto file = detail::prefixed(prefix, ".ld");
    write_table(s, sel, result, file, digits);
    return file;
  }
  if (result.options.shape == ld_shape::band) {
    const auto file = detail::prefixed(prefix, ".ldband");
    const auto vars = detail::prefixed(prefix, ".ldband.vars");
    tsv_writer list(vars, digits);
    for (const char* name : {"CHR", "BP", "SNP", "A1", "A2"}) list.text(name);
    list.end_line();
    for (std::size_t k : sel.columns) {
      const column_info& c = s.columns()[k];
      list.text(c.chrom).text(c.pos).text(c.id).text(c.a1).text(c.a2);
      list.end_line();
    }
    if (result.options.encoding == ld_encoding::bin4)
      write_band<float>(result, file);
    else
      write_band<double>(result, file);
    list.commit(staged_output::directory_sync::by_caller);
    sync_directory(directory_of(file));
    return file;
  }
  if (result.options.encoding == ld_encoding::text) {
    const auto file = detail::prefixed(prefix, ".ld");
    write_text_matrix(result, file, digits);
    return file;
  }
  const auto file = detail::prefixed(prefix, ".ld.bin");
  if (result.options.encoding == ld_encoding::bin)
    write_binary_matrix<double>(result, file);
  else
    write_binary_matrix<float>(result, file);
  return file;
}

}  // namespace colflow
