// Store: opening a store, its samples, columns and summary, and reads of selected cells into
// numpy buffers that Python allocated, decoded in parallel with the library's own decoders.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings.hpp"
#include "colflow/codec/codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/store/store.hpp"
#include "python_call.hpp"
#include "read_request.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

// ---- metadata ---------------------------------------------------------------------------------

// A dict of the named fields, one list of strings each.
nb::dict fields_dict(const char* const (&names)[6], const std::vector<std::string> (&fields)[6]) {
  nb::dict d;
  for (int f = 0; f < 6; ++f) d[names[f]] = nb::cast(fields[f]);
  return d;
}

nb::dict samples(const py_store& ps) {
  const auto s = ps.get();
  const auto& samples = s->samples();
  std::vector<std::string> fields[6];
  for (auto& f : fields) f.reserve(samples.size());
  for (const sample_info& x : samples) {
    fields[0].push_back(x.fid);
    fields[1].push_back(x.iid);
    fields[2].push_back(x.father);
    fields[3].push_back(x.mother);
    fields[4].push_back(x.sex);
    fields[5].push_back(x.phenotype);
  }
  return fields_dict({"fid", "iid", "father", "mother", "sex", "phenotype"}, fields);
}

nb::dict columns(const py_store& ps) {
  const auto s = ps.get();
  const auto& columns = s->columns();
  std::vector<std::string> fields[6];
  for (auto& f : fields) f.reserve(columns.size());
  for (const column_info& x : columns) {
    fields[0].push_back(x.chrom);
    fields[1].push_back(x.id);
    fields[2].push_back(x.cm);
    fields[3].push_back(x.pos);
    fields[4].push_back(x.a1);
    fields[5].push_back(x.a2);
  }
  return fields_dict({"chrom", "id", "cm", "pos", "a1", "a2"}, fields);
}

// The keys and values of `colflow info --json` (cli/cmd_info.cpp).
nb::dict info(const py_store& ps) {
  const auto s = ps.get();
  const store_summary sum = s->summary();
  nb::dict codecs;
  for (const codec_traits& t : all_codecs()) {
    const auto n = sum.columns_per_codec[static_cast<std::uint8_t>(t.id)];
    if (n != 0) codecs[nb::str(t.name.data(), t.name.size())] = n;
  }
  nb::dict d;
  d["path"] = ps.path();
  d["format_version"] =
      std::to_string(format_version_major) + "." + std::to_string(s->version_minor());
  d["store_id"] = s->store_id_text();
  d["rows"] = sum.rows;
  d["columns"] = sum.columns;
  const std::string_view type = value_type_name(sum.type);
  d["value_type"] = nb::str(type.data(), type.size());
  d["codecs"] = codecs;
  d["data_bytes"] = sum.data_bytes;
  d["index_bytes"] = sum.index_bytes;
  d["decoded_bytes"] = sum.decoded_bytes;
  d["float64_bytes"] = static_cast<std::uint64_t>(sum.float64_bytes());
  d["compression_ratio"] = sum.compression_ratio();
  d["ratio_vs_float64"] = sum.ratio_vs_float64();
  d["source"] = sum.source;
  return d;
}

// ---- decoding cells ---------------------------------------------------------------------------

// Decodes store column j, every row, into `full`: stored values or values standardised with
// the index's statistics through the store's own decode, or standardised with the statistics
// of the selected rows.
template <typename T>
void decode_column(const store& s, const read_request& r, std::size_t j, std::span<T> full,
                   std::vector<std::uint8_t>& codes, std::vector<double>& scratch) {
  if (!r.subset_stats) {
    s.read_column(j, full, r.standardize ? decode_as::standardized : decode_as::stored);
    return;
  }
  const std::size_t n = full.size();
  if (s.type() == value_type::genotype) {
    // The counts of the selected samples on the packed codes, without decoding values first.
    codes.resize(genotype_column_bytes(n));
    s.read_payload(j, std::as_writable_bytes(std::span<std::uint8_t>(codes)));
    decode_subset_standardized<T>(codes, r, full);
    return;
  }
  scratch.resize(n);
  s.read_column(j, std::span<double>(scratch), decode_as::stored);
  standardize_subset<double, T>(scratch, r, full);
}

// A decoded value as the output type: int8 outputs hold genotype counts, -127 for missing
// (bed-reader's convention).
template <typename Out, typename T>
inline Out convert(T x) {
  if constexpr (std::is_same_v<Out, std::int8_t>)
    return std::isnan(x) ? std::int8_t{-127} : static_cast<std::int8_t>(x);
  else
    return static_cast<Out>(x);
}

// Where read_cells writes: out[i * row_stride + k * col_stride] is row rows[i] of column
// cols[k].
template <typename Out>
struct cell_output {
  Out* data;
  std::ptrdiff_t row_stride, col_stride;

  Out* column(std::size_t k) const { return data + static_cast<std::ptrdiff_t>(k) * col_stride; }
  Out* row(std::size_t i) const { return data + static_cast<std::ptrdiff_t>(i) * row_stride; }
};

// Columns k0..k1 decoded in `values` (n values each) written to their places in `out`, a row
// at a time in order "C", so the writes are contiguous runs in either order.
template <typename Out, typename T>
void write_block(const read_request& r, const std::vector<T>& values, std::size_t n, std::size_t k0,
                 std::size_t k1, const cell_output<Out>& out) {
  const std::size_t out_rows = r.rows.size();
  if (out.row_stride == 1) {
    for (std::size_t k = k0; k < k1; ++k) {
      const T* column = values.data() + (k - k0) * n;
      Out* dst = out.column(k);
      for (std::size_t i = 0; i < out_rows; ++i) dst[i] = convert<Out>(column[r.rows[i]]);
    }
    return;
  }
  for (std::size_t i = 0; i < out_rows; ++i) {
    Out* dst = out.row(i);
    const auto row = static_cast<std::size_t>(r.rows[i]);
    for (std::size_t k = k0; k < k1; ++k)
      dst[static_cast<std::ptrdiff_t>(k) * out.col_stride] =
          convert<Out>(values[(k - k0) * n + row]);
  }
}

// Fills `out` with the selected cells. Columns are spread over the threads in blocks; a block is
// decoded into a scratch buffer and then written by write_block, or, in order "F" with every
// row in order, each column decodes straight into its place in the numpy buffer.
template <typename Out>
void read_cells(const store& s, const read_request& r, const cell_output<Out>& out) {
  // Values are decoded as float for float32 and int8 outputs (int8 from the stored float
  // counts), as double for float64.
  using T = std::conditional_t<std::is_same_v<Out, double>, double, float>;
  const std::size_t n = s.num_rows();
  const std::size_t m = r.cols.size();
  const bool in_place = std::is_same_v<Out, T> && out.row_stride == 1 && r.rows_identity;
  // About 1 MiB of scratch per block in order "C", one column per block otherwise.
  const std::size_t block =
      out.row_stride == 1
          ? 1
          : std::clamp<std::size_t>((std::size_t{1} << 20) / (sizeof(T) * n + 1), 1, 64);
  const std::size_t blocks = (m + block - 1) / block;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks), [&](const auto& range) {
    std::vector<T> values;
    std::vector<std::uint8_t> codes;
    std::vector<double> scratch;
    for (std::size_t b = range.begin(); b != range.end(); ++b) {
      const std::size_t k0 = b * block, k1 = std::min(m, k0 + block);
      const auto column_of = [&](std::size_t k) { return static_cast<std::size_t>(r.cols[k]); };
      if (in_place) {
        if constexpr (std::is_same_v<Out, T>)
          for (std::size_t k = k0; k < k1; ++k)
            decode_column<T>(s, r, column_of(k), {out.column(k), n}, codes, scratch);
        continue;
      }
      values.resize((k1 - k0) * n);
      for (std::size_t k = k0; k < k1; ++k)
        decode_column<T>(s, r, column_of(k), std::span<T>(values).subspan((k - k0) * n, n), codes,
                         scratch);
      write_block(r, values, n, k0, k1, out);
    }
  });
}

// ---- read_into --------------------------------------------------------------------------------

// IndexError for the first index out of range (Python resolved them, so this is a backstop).
void check_indices(std::span<const std::int64_t> indices, std::uint64_t count, const char* what,
                   const char* unit) {
  for (std::int64_t i : indices)
    if (i < 0 || static_cast<std::uint64_t>(i) >= count)
      throw nb::index_error((std::string(what) + " index " + std::to_string(i) +
                             " is out of bounds for " + std::to_string(count) + " " + unit)
                                .c_str());
}

using out_array = nb::ndarray<nb::ndim<2>, nb::device::cpu>;

// Fills `out` (rows.size() x cols.size(), allocated by the caller in order "F" or "C") with the
// selected cells. The indices must be in range: Python resolved them with numpy.
void read_into(const py_store& ps, index_array rows, index_array cols, out_array out,
               bool standardize, int threads) {
  const auto s = ps.get();
  read_request r;
  r.rows = span_of(rows);
  r.cols = span_of(cols);
  r.standardize = standardize;
  if (out.shape(0) != r.rows.size() || out.shape(1) != r.cols.size())
    throw nb::value_error("read_into: the output's shape does not match the selection");
  check_indices(r.rows, s->num_rows(), "row", "rows");
  check_indices(r.cols, s->num_columns(), "column", "columns");
  const bool is_float32 = out.dtype() == nb::dtype<float>();
  const bool is_float64 = out.dtype() == nb::dtype<double>();
  const bool is_int8 = out.dtype() == nb::dtype<std::int8_t>();
  if (!is_float32 && !is_float64 && !is_int8)
    throw nb::type_error("read_into: the output must be float32, float64 or int8");
  if (is_int8 && (standardize || s->type() != value_type::genotype))
    throw nb::value_error("int8 holds genotype counts: a genotype store, not standardised");
  if (r.rows.empty() || r.cols.empty()) return;
  resolve_rows(r, *s);

  const auto rs = static_cast<std::ptrdiff_t>(out.stride(0));
  const auto cs = static_cast<std::ptrdiff_t>(out.stride(1));
  const bool f_order = rs == 1 && cs == static_cast<std::ptrdiff_t>(r.rows.size());
  const bool c_order = cs == 1 && rs == static_cast<std::ptrdiff_t>(r.cols.size());
  if (!f_order && !c_order)
    throw nb::value_error("read_into: the output must be a contiguous array, order F or C");

  void* data = out.data();
  nb::gil_scoped_release unlocked;
  in_arena(threads, [&] {
    if (is_float32)
      read_cells(*s, r, cell_output<float>{static_cast<float*>(data), rs, cs});
    else if (is_float64)
      read_cells(*s, r, cell_output<double>{static_cast<double*>(data), rs, cs});
    else
      read_cells(*s, r, cell_output<std::int8_t>{static_cast<std::int8_t*>(data), rs, cs});
  });
}

}  // namespace

void bind_store(nb::module_& m) {
  nb::class_<py_store>(m, "Store")
      .def(nb::init<const std::string&>(), "path"_a)
      .def("close", &py_store::close)
      .def_prop_ro("closed", &py_store::closed)
      .def_prop_ro("path", &py_store::path)
      .def_prop_ro("rows", [](const py_store& s) { return s.get()->num_rows(); })
      .def_prop_ro("num_columns", [](const py_store& s) { return s.get()->num_columns(); })
      .def_prop_ro("value_type",
                   [](const py_store& s) { return std::string(value_type_name(s.get()->type())); })
      .def("samples", &samples)
      .def("columns", &columns)
      .def("info", &info)
      .def("read_into", &read_into, "rows"_a, "cols"_a, "out"_a, "standardize"_a, "threads"_a);
}

}  // namespace colflow::python
