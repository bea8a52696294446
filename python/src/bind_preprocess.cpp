// preprocess: every input of `colflow preprocess`, and float matrices in memory, converted into
// a store by the library's own converter with the command's options and defaults.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "colflow/preprocess/converter.hpp"
#include "colflow/preprocess/inputs.hpp"
#include "colflow/preprocess/matrix_source.hpp"
#include "python_call.hpp"

using namespace nb::literals;

namespace colflow::python {
namespace {

// ---- the conversion ---------------------------------------------------------------------------

// The conversion options as Python gives them, None for the command's default (what the
// library's make_convert_options fills in for the input's kind).
preprocess::conversion_choices conversion_choices_of(const std::optional<std::string>& codec,
                                                     std::optional<int> level,
                                                     const std::optional<std::string>& dtype,
                                                     std::optional<double> hard_call_threshold,
                                                     std::optional<bool> shuffle,
                                                     std::optional<bool> standardize,
                                                     const std::string& sex, bool force) {
  preprocess::conversion_choices c;
  if (codec) {
    c.codec = preprocess::codec_choice_from_name(*codec);
    if (!c.codec)
      throw nb::value_error(
          ("unknown codec '" + *codec + "': genotype, genotype-zstd, auto, none, zlib, lz4 or zstd")
              .c_str());
  }
  c.level = level;
  if (dtype) {
    if (*dtype != "f64" && *dtype != "f32")
      throw nb::value_error(("unknown dtype '" + *dtype + "': f64 or f32").c_str());
    c.dtype = *dtype == "f32" ? value_type::float32 : value_type::float64;
  }
  c.hard_call_threshold = hard_call_threshold;
  c.shuffle = shuffle;
  c.standardize = standardize;
  c.sex_file = sex;
  c.overwrite = force;
  return c;
}

// `colflow preprocess` of the source `open` makes, with the command's options: the source is
// opened (validated) and converted on python_call's worker, so that Ctrl-C stops either step.
template <typename Open>
nb::dict convert_source(Open&& open, const preprocess::conversion_choices& choices,
                        const std::string& out, int threads, nb::object progress) {
  preprocess::convert_result result;
  preprocess::convert_options co;
  std::string kind;
  const bool report = !progress.is_none();
  python_call call(std::move(progress), {});
  call.run(threads, [&] {
    const std::unique_ptr<preprocess::column_source> source = open();
    kind = value_type_name(source->kind());
    co = preprocess::make_convert_options(source->kind(), choices, out);
    result = preprocess::convert(*source, co, [&](const preprocess::convert_progress& p) {
      if (report) call.note("preprocess", p.columns_done, p.columns_total, "columns");
    });
  });
  nb::dict d;
  d["rows"] = result.rows;
  d["columns"] = result.columns;
  d["input_bytes"] = result.input_bytes;
  d["frame_bytes"] = result.frame_bytes;
  d["seconds"] = result.seconds;
  d["input_kind"] = kind;
  d["codec"] = preprocess::codec_choice_name(co.codec);
  return d;
}

// ---- files ------------------------------------------------------------------------------------

// A name the library's *_from_name knows, or ValueError listing the names.
template <typename T>
T named(const std::optional<T>& value, const char* what, const std::string& name,
        const char* names) {
  if (!value)
    throw nb::value_error((std::string("unknown ") + what + " '" + name + "': " + names).c_str());
  return *value;
}

// The input files of `format` (see preprocess_files) in `in`.
void set_input_files(preprocess::input_options& in, const std::string& format,
                     const std::vector<std::string>& paths, const std::string& bim,
                     const std::string& fam) {
  const std::vector<std::filesystem::path> files(paths.begin(), paths.end());
  const auto one_file = [&]() -> const std::filesystem::path& {
    if (files.size() != 1)
      throw nb::value_error(
          ("one " + format + " file makes a store, not " + std::to_string(files.size())).c_str());
    return files.front();
  };
  if (format == "plink") {
    if (!bim.empty() || !fam.empty()) {
      if (bim.empty() || fam.empty()) throw nb::value_error("bim and fam go together");
      in.bed_files = preprocess::plink_paths{one_file(), bim, fam};
    } else {
      in.bed = files;
    }
  } else if (format == "pgen") {
    in.pfile = files;
  } else if (format == "bgen") {
    in.bgen = files;
  } else if (format == "vcf") {
    in.vcf = files;
  } else if (format == "npy") {
    in.npy = one_file();
  } else if (format == "csv") {
    in.csv = one_file();
  } else if (format == "inputs") {
    in.inputs_list = one_file();
  } else {
    throw nb::value_error(("unknown format '" + format + "'").c_str());
  }
  if ((!bim.empty() || !fam.empty()) && format != "plink")
    throw nb::value_error("bim and fam apply to a PLINK .bed");
}

// `colflow preprocess` of files: `format` "plink" (PLINK prefixes, or one .bed with `bim` and
// `fam`: --bed-file/--bim/--fam), "pgen" (PLINK 2 prefixes or .pgen files, --pfile), "bgen", "vcf",
// "npy", "csv" or "inputs" (a list file,
// --inputs), with the command's options for them.
nb::dict preprocess_files(const std::string& format, const std::vector<std::string>& paths,
                          const std::string& bim, const std::string& fam, const std::string& sample,
                          bool ref_first, const std::optional<std::string>& dosage,
                          bool split_multiallelic, const std::string& half_call,
                          const std::string& csv_header, const std::string& csv_ids,
                          const std::string& out, const std::optional<std::string>& codec,
                          std::optional<int> level, const std::optional<std::string>& dtype,
                          std::optional<double> hard_call_threshold, std::optional<bool> shuffle,
                          std::optional<bool> standardize, const std::string& sex, bool force,
                          int threads, nb::object progress) {
  preprocess::input_options in;
  set_input_files(in, format, paths, bim, fam);
  in.sample = sample;
  in.ref_first = ref_first;
  if (dosage)
    in.dosage =
        named(preprocess::dosage_field_from_name(*dosage), "dosage field", *dosage, "DS or GP");
  in.split_multiallelic = split_multiallelic;
  in.half_call = named(preprocess::half_call_from_name(half_call), "half_call", half_call,
                       "error, missing, haploid or reference");
  in.csv_format.header = named(preprocess::csv_presence_from_name(csv_header), "csv_header",
                               csv_header, "auto, yes or no");
  in.csv_format.ids =
      named(preprocess::csv_presence_from_name(csv_ids), "csv_ids", csv_ids, "auto, yes or no");
  in.threads = threads > 0 ? static_cast<unsigned>(threads) : 0;
  const preprocess::conversion_choices choices = conversion_choices_of(
      codec, level, dtype, hard_call_threshold, shuffle, standardize, sex, force);
  return convert_source([&] { return preprocess::open_inputs(in); }, choices, out, threads,
                        std::move(progress));
}

// ---- arrays -----------------------------------------------------------------------------------

using matrix_array = nb::ndarray<nb::ro, nb::ndim<2>, nb::device::cpu>;

// Where matrix_source reads `matrix`: its memory as it is, any strides. TypeError unless it
// holds float32 or float64 values.
preprocess::matrix_view view_of(const matrix_array& matrix) {
  const bool f64 = matrix.dtype() == nb::dtype<double>();
  if (!f64 && matrix.dtype() != nb::dtype<float>())
    throw nb::type_error("the matrix holds float32 or float64 values");
  preprocess::matrix_view view;
  view.data = static_cast<const std::byte*>(matrix.data());
  view.rows = matrix.shape(0);
  view.columns = matrix.shape(1);
  view.item_size = f64 ? 8 : 4;
  // nanobind's strides count items.
  view.row_stride =
      static_cast<std::ptrdiff_t>(matrix.stride(0)) * static_cast<std::ptrdiff_t>(view.item_size);
  view.column_stride =
      static_cast<std::ptrdiff_t>(matrix.stride(1)) * static_cast<std::ptrdiff_t>(view.item_size);
  return view;
}

// `colflow preprocess` of a float32 or float64 matrix in memory, samples in rows, read where
// it is (matrix_source, any strides) while the conversion runs: as the command converts the
// same matrix saved as a .npy file, with the samples (FID IID father mother sex phenotype) and
// column names given, if any.
nb::dict preprocess_array(matrix_array matrix,
                          const std::optional<std::vector<std::vector<std::string>>>& samples,
                          const std::optional<std::vector<std::string>>& column_ids,
                          const std::string& out, const std::optional<std::string>& codec,
                          std::optional<int> level, const std::optional<std::string>& dtype,
                          std::optional<double> hard_call_threshold, std::optional<bool> shuffle,
                          std::optional<bool> standardize, const std::string& sex, bool force,
                          int threads, nb::object progress) {
  const preprocess::matrix_view view = view_of(matrix);
  preprocess::matrix_options mo;
  if (samples)
    for (const std::vector<std::string>& s : *samples) {
      if (s.size() != 6) throw nb::value_error("a sample has 6 fields");
      mo.samples.push_back({s[0], s[1], s[2], s[3], s[4], s[5]});
    }
  if (column_ids) mo.column_ids = *column_ids;
  const preprocess::conversion_choices choices = conversion_choices_of(
      codec, level, dtype, hard_call_threshold, shuffle, standardize, sex, force);
  return convert_source(
      [&] { return std::make_unique<preprocess::matrix_source>(view, std::move(mo)); }, choices,
      out, threads, std::move(progress));
}

}  // namespace

void bind_preprocess(nb::module_& m) {
  m.def("input_format", [](const std::string& path) {
    return std::string(preprocess::input_format_name(preprocess::input_format_of(path)));
  });
  m.def("preprocess_files", &preprocess_files, "format"_a, "paths"_a, "bim"_a, "fam"_a, "sample"_a,
        "ref_first"_a, "dosage"_a.none(), "split_multiallelic"_a, "half_call"_a, "csv_header"_a,
        "csv_ids"_a, "out"_a, "codec"_a.none(), "level"_a.none(), "dtype"_a.none(),
        "hard_call_threshold"_a.none(), "shuffle"_a.none(), "standardize"_a.none(), "sex"_a,
        "force"_a, "threads"_a, "progress"_a.none());
  m.def("preprocess_array", &preprocess_array, "matrix"_a, "samples"_a.none(),
        "column_ids"_a.none(), "out"_a, "codec"_a.none(), "level"_a.none(), "dtype"_a.none(),
        "hard_call_threshold"_a.none(), "shuffle"_a.none(), "standardize"_a.none(), "sex"_a,
        "force"_a, "threads"_a, "progress"_a.none());
}

}  // namespace colflow::python
