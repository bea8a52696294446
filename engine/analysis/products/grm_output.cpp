// The files of `colflow grm`: PLINK 2's .rel forms and PLINK 1.9's (GCTA's) .grm.bin set.
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/grm.hpp"
#include "colflow/error.hpp"
#include "colflow/io/staged_output.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {
namespace {

// A binary file written through a staged output.
class binary_file {
 public:
  explicit binary_file(std::filesystem::path target) : output_(std::move(target)) {
    file_ = std::fopen(output_.path().c_str(), "wb");
    if (file_ == nullptr) throw_system_error(errno, "cannot create", output_.path());
  }
  ~binary_file() {
    if (file_ != nullptr) std::fclose(file_);
  }
  binary_file(const binary_file&) = delete;
  binary_file& operator=(const binary_file&) = delete;

  template <typename T>
  void write(const std::vector<T>& values) {
    if (std::fwrite(values.data(), sizeof(T), values.size(), file_) != values.size())
      throw_system_error(errno, "cannot write", output_.path());
  }
  void finish() {
    if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0)
      throw_system_error(errno, "cannot write", output_.path());
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) throw_system_error(errno, "cannot write", output_.path());
  }
  void commit() { output_.commit(); }

 private:
  staged_output output_;
  std::FILE* file_ = nullptr;
};

// Rows [r0, r1) of a band as T, one after another as the files hold them: row r has the
// entries of columns 0 … width(i) − 1 of matrix m, i = first_row + r, those above the diagonal
// 0 unless `upper`. Converted across the threads in squares of 64 rows by 64 columns, so that
// the column-major band is read in order and each output row is written in cache.
template <typename T>
void band_rows(const Eigen::MatrixXd& m, std::size_t first_row, std::size_t r0, std::size_t r1,
               bool triangle, bool upper, std::vector<T>& out) {
  constexpr std::size_t square = 64;
  const auto width = [&](std::size_t r) {
    return triangle ? first_row + r + 1 : static_cast<std::size_t>(m.cols());
  };
  std::vector<std::size_t> start(r1 - r0 + 1, 0);
  for (std::size_t r = r0; r < r1; ++r) start[r - r0 + 1] = start[r - r0] + width(r);
  out.resize(start.back());
  const std::size_t columns = width(r1 - 1);
  // Rows [q, q + 64) by columns [c0, c0 + 64): read down each column, written across rows.
  const auto convert = [&](std::size_t q, std::size_t c0) {
    for (std::size_t c = c0; c < std::min(columns, c0 + square); ++c)
      for (std::size_t r = q; r < std::min(r1, q + square); ++r) {
        if (c >= width(r)) continue;
        const bool shown = c <= first_row + r || upper;
        out[start[r - r0] + c] = static_cast<T>(
            shown ? m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) : 0.0);
      }
  };
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, (columns + square - 1) / square),
                    [&](const tbb::blocked_range<std::size_t>& squares) {
                      for (std::size_t b = squares.begin(); b != squares.end(); ++b)
                        for (std::size_t q = r0; q < r1; q += square) convert(q, b * square);
                    });
}

std::filesystem::path rel_matrix_path(const std::filesystem::path& prefix, rel_form form) {
  return detail::prefixed(prefix, form == rel_form::text ? ".rel" : ".rel.bin");
}

}  // namespace

grm_files grm_output_files(const std::filesystem::path& prefix, const grm_outputs& outputs) {
  grm_files files;
  if (outputs.rel) {
    files.paths.push_back(rel_matrix_path(prefix, outputs.form));
    files.paths.push_back(detail::prefixed(prefix, ".rel.id"));
  }
  if (outputs.gcta) {
    files.paths.push_back(detail::prefixed(prefix, ".grm.bin"));
    files.paths.push_back(detail::prefixed(prefix, ".grm.N.bin"));
    files.paths.push_back(detail::prefixed(prefix, ".grm.id"));
  }
  return files;
}

struct grm_writer::impl {
  impl(const store& s, const selection& selected, const std::filesystem::path& out,
       const grm_outputs& what, int precision)
      : source(s), sel(selected), prefix(out), outputs(what), digits(precision) {}

  const store& source;
  const selection& sel;
  std::filesystem::path prefix;
  grm_outputs outputs;
  int digits;
  std::size_t n = 0, next_row = 0;
  std::optional<tsv_writer> rel_text;
  std::optional<binary_file> rel_bin, gcta_values, gcta_counts;
  std::vector<double> doubles;
  std::vector<float> floats, counts;

  // Rows [r0, r1) of the band in the .rel matrix: entries 0..i, then the rest by the shape.
  void rel_rows(const grm_band& band, std::size_t r0, std::size_t r1) {
    const bool triangle = outputs.shape == rel_shape::triangle;
    const bool upper = outputs.shape == rel_shape::square;
    if (outputs.form == rel_form::bin) {
      band_rows(band.values, band.first_row, r0, r1, triangle, upper, doubles);
      rel_bin->write(doubles);
    } else if (outputs.form == rel_form::bin4) {
      band_rows(band.values, band.first_row, r0, r1, triangle, upper, floats);
      rel_bin->write(floats);
    } else {
      for (std::size_t r = r0; r < r1; ++r) rel_text_row(band, r);
    }
  }

  void rel_text_row(const grm_band& band, std::size_t r) {
    const std::size_t i = band.first_row + r;
    const std::size_t width = outputs.shape == rel_shape::triangle ? i + 1 : n;
    for (std::size_t c = 0; c < width; ++c)
      rel_text->number(c <= i || outputs.shape == rel_shape::square
                           ? band.values(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c))
                           : 0.0);
    rel_text->end_line();
  }

  // Rows [r0, r1) of the band in GCTA's files: the lower triangle with the diagonal.
  void gcta_rows(const grm_band& band, std::size_t r0, std::size_t r1) {
    band_rows(band.values, band.first_row, r0, r1, true, false, floats);
    gcta_values->write(floats);
    band_rows(band.variants, band.first_row, r0, r1, true, false, counts);
    gcta_counts->write(counts);
  }
};

grm_writer::grm_writer(const store& s, const selection& sel, const std::filesystem::path& prefix,
                       const grm_outputs& outputs, int digits)
    : impl_(std::make_unique<impl>(s, sel, prefix, outputs, digits)) {
  detail::check_digits(digits);
  if (!outputs.rel && !outputs.gcta)
    throw error(errc::invalid_argument, "grm_writer: no output asked for");
  impl_->n = sel.rows.size();
  if (outputs.rel) {
    if (outputs.form == rel_form::text)
      impl_->rel_text.emplace(rel_matrix_path(prefix, outputs.form), digits);
    else
      impl_->rel_bin.emplace(rel_matrix_path(prefix, outputs.form));
  }
  if (outputs.gcta) {
    impl_->gcta_values.emplace(detail::prefixed(prefix, ".grm.bin"));
    impl_->gcta_counts.emplace(detail::prefixed(prefix, ".grm.N.bin"));
  }
}

grm_writer::~grm_writer() = default;

void grm_writer::write(const grm_band& band) {
  impl& w = *impl_;
  const auto rows = static_cast<std::size_t>(band.values.rows());
  const auto width = static_cast<std::size_t>(band.values.cols());
  if (band.first_row != w.next_row || w.next_row + rows > w.n ||
      band.variants.rows() != band.values.rows() || band.variants.cols() != band.values.cols())
    throw error(errc::invalid_argument,
                "grm_writer: band of rows " + std::to_string(band.first_row) + ".. out of order");
  if (width < (w.outputs.needs_full_rows() ? w.n : band.first_row + rows) ||
      (w.outputs.needs_full_rows() && !band.full))
    throw error(errc::invalid_argument,
                "grm_writer: a band of " + std::to_string(width) + " columns" +
                    (w.outputs.needs_full_rows() ? " (the square shape needs full rows)" : ""));
  // A few hundred rows at a time: the converted rows stay a small fraction of the band.
  constexpr std::size_t rows_per_write = 256;
  for (std::size_t r0 = 0; r0 < rows; r0 += rows_per_write) {
    const std::size_t r1 = std::min(rows, r0 + rows_per_write);
    if (w.outputs.rel) w.rel_rows(band, r0, r1);
    if (w.outputs.gcta) w.gcta_rows(band, r0, r1);
  }
  w.next_row += rows;
}

grm_files grm_writer::commit() {
  impl& w = *impl_;
  if (w.next_row != w.n)
    throw error(errc::invalid_argument, "grm_writer: " + std::to_string(w.next_row) + " of " +
                                            std::to_string(w.n) + " rows written");
  const auto& samples = w.source.samples();
  std::optional<tsv_writer> rel_id, gcta_id;
  if (w.outputs.rel) {
    rel_id.emplace(detail::prefixed(w.prefix, ".rel.id"), w.digits);
    rel_id->text("#FID").text("IID");
    rel_id->end_line();
    for (const std::size_t row : w.sel.rows) {
      rel_id->text(samples[row].fid).text(samples[row].iid);
      rel_id->end_line();
    }
  }
  if (w.outputs.gcta) {
    gcta_id.emplace(detail::prefixed(w.prefix, ".grm.id"), w.digits);
    for (const std::size_t row : w.sel.rows) {
      gcta_id->text(samples[row].fid).text(samples[row].iid);
      gcta_id->end_line();
    }
  }
  // Everything is written and synced before the first rename.
  if (w.rel_text) w.rel_text->finish();
  if (w.rel_bin) w.rel_bin->finish();
  if (w.gcta_values) w.gcta_values->finish();
  if (w.gcta_counts) w.gcta_counts->finish();
  if (rel_id) rel_id->finish();
  if (gcta_id) gcta_id->finish();
  if (w.rel_text) w.rel_text->commit();
  if (w.rel_bin) w.rel_bin->commit();
  if (rel_id) rel_id->commit();
  if (w.gcta_values) w.gcta_values->commit();
  if (w.gcta_counts) w.gcta_counts->commit();
  if (gcta_id) gcta_id->commit();
  return grm_output_files(w.prefix, w.outputs);
}

}  // namespace colflow
