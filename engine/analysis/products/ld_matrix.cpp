// colflow ld --make-ldm: the LD matrix of a genotype or dosage store written as an LD store
// (docs/FORMAT.md §13), from the pairs of ld() (analysis/ld_matrix.hpp).
#include "colflow/analysis/ld_matrix.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/products/ld_matrix_internal.hpp"
#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/ld.hpp"
#include "colflow/error.hpp"

namespace colflow {
namespace {

// Per selected column: samples with a call, A1 frequency; refuses a constant column.
std::vector<ldm_variant> variant_stats(const store& s, const selection& sel,
                                       const analysis_options& analysis) {
  std::vector<ldm_variant> out(sel.columns.size());
  stream_options so = analysis.stream;
  so.values = decode_as::stored;
  column_stream<double> stream(s, so);
  stream.run(sel.columns, [&](const column_view<double>& v) {
    double n = 0, sum = 0, sumsq = 0;
    for (const std::size_t r : sel.rows) {
      const double x = v.values[static_cast<Eigen::Index>(r)];
      if (std::isnan(x)) continue;
      n += 1;
      sum += x;
      sumsq += x * x;
    }
    ldm_variant& var = out[v.position];
    var.info = s.columns()[v.column];
    var.n = static_cast<std::uint64_t>(n);
    var.a1_freq = n > 0 ? sum / (2 * n) : std::nan("");
    if (!(n * sumsq - sum * sum > 0))
      throw error(errc::invalid_argument,
                  "ld --make-ldm: variant " + var.info.id +
                      " is constant over the selected samples with a call: its LD is undefined "
                      "(drop it with --exclude)");
    return true;
  });
  return out;
}

// The pairs from ld(): the matrix (full, sparse) or the band, as r.
ld_result pairs(const store& s, const selection& sel, const ldm_options& o,
                const analysis_options& analysis) {
  ld_options lo;
  lo.statistic = ld_statistic::r;
  lo.shape = o.kind == ldm_kind::band ? ld_shape::band : ld_shape::square;
  lo.window = o.window;
  lo.window_kb = o.window_kb;
  lo.window_cm = o.window_cm;
  return ld(s, sel, lo, analysis);
}

// Column j of the matrix, dense over all rows (0 where not held), and its window.
struct column_builder {
  const ld_result& result;
  const ldm_options& options;
  std::uint64_t samples;
  std::vector<std::size_t> band_start, band_offset;  // band: first row of column j, row offsets

  column_builder(const ld_result& r, const ldm_options& o, std::uint64_t n)
      : result(r), options(o), samples(n) {
    if (o.kind != ldm_kind::band) return;
    const std::size_t m = r.columns;
    band_offset.assign(m + 1, 0);
    for (std::size_t i = 0; i < m; ++i) band_offset[i + 1] = band_offset[i] + (r.band_end[i] - i);
    // Ends never decrease, so the rows whose window reaches j form a run ending at j.
    band_start.assign(m, 0);
    std::size_t k = 0;
    for (std::size_t j = 0; j < m; ++j) {
      while (result.band_end[k] <= j) ++k;
      band_start[j] = k;
    }
  }

  // GCTB's test: |r| as float32, r² N below the threshold drops the pair (the diagonal stays).
  bool kept(std::size_t i, std::size_t j, float r) const {
    if (r == 0) return false;
    if (i == j) return true;
    if (options.min_r2) return static_cast<double>(r) * r >= *options.min_r2;
    return !(r * r * static_cast<float>(samples) < static_cast<float>(options.chisq));
  }

  ld_window_entry build(std::size_t j, std::vector<double>& col) const {
    const std::size_t m = result.columns;
    col.assign(m, 0.0);
    ld_window_entry w;
    if (options.kind == ldm_kind::band) {
      w.first = band_start[j];
      for (std::size_t k = w.first; k < j; ++k) col[k] = result.matrix[band_offset[k] + (j - k)];
      for (std::size_t k = j; k < result.band_end[j]; ++k)
        col[k] = result.matrix[band_offset[j] + (k - j)];
      w.last = result.band_end[j] - 1;
      w.count = w.last - w.first + 1;
      return w;
    }
    const double* row = result.matrix.data() + j * m;  // symmetric: row j is column j
    if (options.kind == ldm_kind::full) {
      std::copy_n(row, m, col.data());
      w.first = 0;
      w.last = m - 1;
      w.count = m;
      return w;
    }
    w.first = m;
    for (std::size_t k = 0; k < m; ++k) {
      if (!kept(j, k, static_cast<float>(row[k]))) continue;
      col[k] = row[k];
      if (w.first == m) w.first = k;
      w.last = k;
      ++w.count;
    }
    return w;
  }
};

// Each r to the nearest multiple of 2⁻¹⁴ (ties to even), |r| ≤ 1 staying within 16 bits.
void round_to_16_bits(std::vector<double>& col) {
  for (double& r : col) r = std::nearbyint(r / fixed16_step) * fixed16_step;
}

// The attached description of the store (docs/FORMAT.md §13.1).
std::string ld_description(const ldm_options& o, std::uint64_t samples) {
  nlohmann::ordered_json j;
  j["format"] = "colflow ld store";
  j["version"] = 1;
  j["kind"] = ldm_kind_name(o.kind);
  j["statistic"] = "r";
  j["samples"] = samples;
  if (o.value_bits == 16) j["value_step"] = "2^-14";
  if (o.kind == ldm_kind::band) {
    if (o.window < std::numeric_limits<std::int64_t>::max()) j["window"] = o.window;
    if (o.window_cm > 0)
      j["window_cm"] = o.window_cm;
    else
      j["window_kb"] = o.window_kb;
  }
  if (o.kind == ldm_kind::sparse) {
    if (o.min_r2)
      j["min_r2"] = *o.min_r2;
    else
      j["chisq"] = o.chisq;
  }
  return j.dump(2) + "\n";
}

}  // namespace

std::string_view ldm_kind_name(ldm_kind kind) noexcept {
  switch (kind) {
    case ldm_kind::full:
      return "full";
    case ldm_kind::band:
      return "band";
    case ldm_kind::sparse:
      return "sparse";
  }
  return "full";
}

void check_ldm_options(const ldm_options& o) {
  ld_options lo;
  lo.shape = ld_shape::band;
  lo.window = o.window;
  lo.window_kb = o.window_kb;
  lo.window_cm = o.window_cm;
  check_ld_options(lo);
  if (!(o.chisq >= 0) || !std::isfinite(o.chisq))
    throw error(errc::invalid_argument,
                "--chisq: must be a chi-square threshold >= 0, not " + std::to_string(o.chisq));
  if (o.value_bits != 16 && o.value_bits != 32)
    throw error(errc::invalid_argument,
                "--ldm-bits: must be 16 or 32, not " + std::to_string(o.value_bits));
  if (o.value_bits == 16 && (o.encoding.codec != codec_id::zstd || o.encoding.shuffle))
    throw error(errc::invalid_argument,
                std::string(o.encoding.shuffle ? "--shuffle" : "--codec") +
                    ": --ldm-bits 16 stores its values with zstd (fixed16-zstd, docs/FORMAT.md "
                    "§5), unshuffled; give --level alone");
  if (o.min_r2 && !(*o.min_r2 >= 0 && *o.min_r2 <= 1))
    throw error(errc::invalid_argument,
                "--ld-min-r2: must be in [0, 1], not " + std::to_string(*o.min_r2));
}

namespace {

// Without overwrite, an existing LD store or GCTB file at `out` is refused before the matrix is
// computed (the store writer would refuse the store only after it; GCTB's files it would
// replace).
void refuse_existing_outputs(const ldm_options& options, const std::filesystem::path& out) {
  if (options.overwrite) return;
  std::vector<std::filesystem::path> outputs = {out};
  const std::string kind(ldm_kind_name(options.kind));
  if (options.gctb)
    for (const char* ext : {".info", ".bin"})
      outputs.push_back(detail::prefixed(out, ".ldm." + kind + ext));
  std::error_code ec;
  for (const auto& path : outputs)
    if (std::filesystem::exists(path, ec))
      throw error(errc::already_exists,
                  path.string() + " already exists (use --force to replace it)");
}

}  // namespace

ldm_summary make_ld_matrix(const store& s, const selection& sel, const ldm_options& options,
                           const std::filesystem::path& out, const analysis_options& analysis) {
  check_ldm_options(options);
  refuse_existing_outputs(options, out);
  if (!holds_variants(s.type()))
    throw error(errc::invalid_argument, "ld --make-ldm: the store holds " +
                                            std::string(value_type_name(s.type())) +
                                            " values; LD needs a genotype or dosage store");
  const std::uint64_t samples = sel.rows.size();
  std::vector<ldm_variant> variants = variant_stats(s, sel, analysis);
  const ld_result result = pairs(s, sel, options, analysis);
  const column_builder builder(result, options, samples);
  const std::size_t m = variants.size();
  ldm_summary summary;
  summary.variants = m;
  summary.samples = samples;
  // On several processes ld() gave each the whole result; process 0 alone writes.
  if (distributed(analysis.processes) && analysis.processes->rank() != 0) return summary;

  writer_options wo;
  wo.type = value_type::float32;
  wo.rows = m;
  wo.overwrite = options.overwrite;
  wo.source = "colflow ld --make-ldm " + std::string(ldm_kind_name(options.kind)) + " of " +
              s.path().filename().string();
  std::vector<sample_info> rows(m);
  for (std::size_t j = 0; j < m; ++j)
    rows[j] = {variants[j].info.id, variants[j].info.id, "0", "0", "0", "-9"};
  std::vector<ld_window_entry> windows(m);
  // Encoded in parallel by chunks, appended in order: the bytes do not depend on the threads.
  constexpr std::size_t chunk = 64;
  std::vector<encoded_column> encoded(std::min(chunk, m));
  column_encoding encoding = options.encoding;
  // 16 bits: the values' 16-bit multiples through zstd at the level asked for.
  if (options.value_bits == 16) encoding = {codec_id::fixed16_zstd, encoding.level, false};
  // The windows go into ld.tsv, which the writer needs before finish(): build them first.
  for (std::size_t j = 0; j < m; ++j) {
    std::vector<double> col;
    windows[j] = builder.build(j, col);
    summary.values += windows[j].count;
  }
  wo.attached = {{std::string(ld_description_file), ld_description(options, samples)},
                 {std::string(ld_variants_file), format_ld_variants(variants, windows)}};
  store_writer writer(out, wo, std::move(rows));
  for (std::size_t from = 0; from < m; from += chunk) {
    const std::size_t to = std::min(m, from + chunk);
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(from, to, 1),
        [&](const tbb::blocked_range<std::size_t>& r) {
          std::vector<double> col;
          for (std::size_t j = r.begin(); j < r.end(); ++j) {
            builder.build(j, col);
            if (options.value_bits == 16) round_to_16_bits(col);
            encoded[j - from] =
                encode_float_column(col, value_type::float32, dense_stats(col), 0, encoding);
          }
        },
        tbb::simple_partitioner());
    for (std::size_t j = from; j < to; ++j) writer.append(encoded[j - from], variants[j].info);
  }
  writer.finish();
  const store written = store::open(out);
  const store_summary ws = written.summary();
  summary.store_bytes = ws.data_bytes + ws.index_bytes;
  if (options.gctb) summary.gctb_files = write_gctb_ldm(ld_matrix::open(out), out);
  return summary;
}

}  // namespace colflow
