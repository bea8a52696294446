// Decode throughput of one column on one thread, for every way a store can hold it:
//
//   BM_decode/genotype-<codec>/<f64|f32>       2-bit codes (zstd on top or not) decoded through
//                                              the standardising table, as store::read_column
//                                              does; f64-scalar-loop is the one-lookup-per-sample
//                                              loop, for comparison;
//   BM_decode/stdgeno-<codec>[+shuffle]/f64    the same columns stored standardised as float64;
//   BM_decode/dense-<codec>[+shuffle]/f64      standard normal values at full precision;
//   BM_decode/dense3sig-<codec>[+shuffle]/f64  the same rounded to 3 significant digits.
//
// zlib frames are written and read by libdeflate (the default); beside every zlib row,
//   .../f64-libz         the same columns written and read by zlib (COLFLOW_ZLIB_IMPL=zlib:
//                        colflow before libdeflate, the reference);
//   .../f64-libz-frames  frames written by zlib read by libdeflate (a store written before).
//
// Encoding speed and ratio of the two zlib libraries at each of their own levels (what decides
// which library, at which of its levels, writes a colflow zlib level: docs/FORMAT.md, 5):
//   BM_zlib_encode/<stdgeno|dosage>/<libdeflate-1..12|libz-1..9>   one column compressed per
//                        iteration; bytes_per_second counts the float64 input, `ratio` as above.
//   (dosage: the genotype columns as float64 allele counts 0/1/2, missing NaN.)
//
// Every benchmark cycles through 64 columns of 10,000 samples so that the numbers are not those
// of one lucky column. The output (80 kB as float64) stays in L2, as it does in the flow graph.
//
// Counters: bytes_per_second counts the float64 output (8 bytes per sample) for every
// benchmark, the f32 ones included, so that rows compare as samples per second; `ratio` is the
// float64 size over the frame size (compression ratio against float64); `frame_bytes` is the
// mean frame size.
//
// Run: codec_bench --benchmark_counters_tabular=true [--benchmark_filter=genotype]
#include <benchmark/benchmark.h>
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "colflow/codec/codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/store/store.hpp"
#include "colflow/store/store_writer.hpp"

namespace {

using colflow::codec_id;

constexpr std::size_t num_samples = 10'000;
constexpr std::size_t num_columns = 64;
constexpr double missing_rate = 0.01;

// PLINK codes: 0b00 = two A1, 0b01 = missing, 0b10 = het, 0b11 = two A2.
constexpr std::uint8_t code_hom_a1 = 0b00, code_missing = 0b01, code_het = 0b10, code_hom_a2 = 0b11;

struct codec_case {
  codec_id codec;
  int level;
  std::string name;  // part of the benchmark name
};

// Hardy-Weinberg genotypes with the A1 frequency of column k spread evenly over [0.01, 0.5],
// 1% missing at random. Fixed seed: every run measures the same columns.
std::vector<std::vector<std::uint8_t>> make_genotype_codes() {
  std::mt19937_64 rng(20240611);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::vector<std::uint8_t>> columns(num_columns);
  for (std::size_t k = 0; k < num_columns; ++k) {
    const double p = 0.01 + (0.5 - 0.01) * static_cast<double>(k) / (num_columns - 1);
    auto& codes = columns[k];
    codes.assign(colflow::genotype_column_bytes(num_samples), 0);
    for (std::size_t i = 0; i < num_samples; ++i) {
      std::uint8_t code;
      if (unit(rng) < missing_rate) {
        code = code_missing;
      } else {
        const double u = unit(rng);
        code = u < p * p ? code_hom_a1 : u < p * p + 2 * p * (1 - p) ? code_het : code_hom_a2;
      }
      codes[i / 4] |= static_cast<std::uint8_t>(code << (2 * (i % 4)));
    }
  }
  return columns;
}

const std::vector<std::vector<std::uint8_t>>& genotype_codes() {
  static const auto codes = make_genotype_codes();
  return codes;
}

// One float64 column with its statistics and flags, before encoding.
struct float_column {
  std::vector<double> values;
  colflow::column_stats stats;
  std::uint16_t flags = 0;
};

// The genotype columns standardised as a float64 store holds them: (g - mean) / sd, missing 0.
std::vector<float_column> make_standardized_genotypes() {
  std::vector<float_column> columns;
  for (const auto& codes : genotype_codes()) {
    float_column c;
    c.stats = colflow::genotype_stats(colflow::count_genotypes(codes, num_samples), num_samples);
    const auto lut = colflow::standardized_lut(c.stats);
    c.values.resize(num_samples);
    for (std::size_t i = 0; i < num_samples; ++i)
      c.values[i] = lut[(codes[i / 4] >> (2 * (i % 4))) & 3u];
    c.flags = colflow::column_flag::standardized;
    columns.push_back(std::move(c));
  }
  return columns;
}

// Continuous columns of standard normal values: at full double precision (residuals,
// normalised expression: the hard case, every mantissa byte is noise) when `digits` is 0,
// otherwise rounded to that many significant digits (a trait read from a text table).
std::vector<float_column> make_dense(int digits) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<float_column> columns(num_columns);
  for (auto& c : columns) {
    c.values.resize(num_samples);
    for (double& v : c.values) {
      v = normal(rng);
      if (digits > 0 && v != 0) {
        const double scale = std::pow(10.0, digits - 1 - std::floor(std::log10(std::fabs(v))));
        v = std::round(v * scale) / scale;
      }
    }
    c.stats = colflow::dense_stats(c.values);
  }
  return columns;
}

// The genotype columns as float64 dosages: allele counts 0, 1, 2, missing NaN.
std::vector<float_column> make_dosages() {
  std::vector<float_column> columns;
  for (const auto& codes : genotype_codes()) {
    float_column c;
    c.values.resize(num_samples);
    for (std::size_t i = 0; i < num_samples; ++i) {
      const unsigned code = (codes[i / 4] >> (2 * (i % 4))) & 3u;
      c.values[i] = code == code_missing  ? std::nan("")
                    : code == code_het    ? 1.0
                    : code == code_hom_a1 ? 2.0
                                          : 0.0;
    }
    c.stats = colflow::dense_stats(c.values);
    columns.push_back(std::move(c));
  }
  return columns;
}

// Runs `fn` with `impl` as the zlib implementation, restoring the previous one after.
template <typename F>
auto with_zlib_impl(colflow::zlib_impl impl, F&& fn) {
  const colflow::zlib_impl previous = colflow::zlib_implementation();
  colflow::set_zlib_implementation(impl);
  struct restore {
    colflow::zlib_impl to;
    ~restore() { colflow::set_zlib_implementation(to); }
  } guard{previous};
  return fn();
}

// Frames of a set of columns and the counters every benchmark reports.
struct encoded_set {
  std::vector<colflow::encoded_column> columns;
  double ratio = 0;        // float64 bytes / frame bytes, over the whole set
  double frame_bytes = 0;  // mean frame size
};

encoded_set finish_set(std::vector<colflow::encoded_column> columns) {
  std::size_t total = 0;
  for (const auto& c : columns) total += c.frame.size();
  encoded_set set;
  set.columns = std::move(columns);
  set.ratio =
      static_cast<double>(num_columns * num_samples * sizeof(double)) / static_cast<double>(total);
  set.frame_bytes = static_cast<double>(total) / num_columns;
  return set;
}

encoded_set encode_genotypes(const codec_case& cc) {
  std::vector<colflow::encoded_column> columns;
  for (const auto& codes : genotype_codes())
    columns.push_back(colflow::encode_genotype_column(codes, num_samples, {cc.codec, cc.level}));
  return finish_set(std::move(columns));
}

encoded_set encode_floats(const std::vector<float_column>& source, const codec_case& cc,
                          bool shuffle) {
  std::vector<colflow::encoded_column> columns;
  for (const auto& c : source)
    columns.push_back(colflow::encode_float_column(c.values, colflow::value_type::float64, c.stats,
                                                   c.flags, {cc.codec, cc.level, shuffle}));
  return finish_set(std::move(columns));
}

void report(benchmark::State& state, const encoded_set& set) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(num_samples * sizeof(double)));
  state.counters["ratio"] = set.ratio;
  state.counters["frame_bytes"] = set.frame_bytes;
}

// As store::read_column: codec none decodes straight from the frame (the mapped file), a
// compressed frame is first decompressed into a per-thread buffer of codes.
template <typename T>
void decode_genotype_frames(benchmark::State& state, const encoded_set& set) {
  std::vector<std::uint8_t> codes(colflow::genotype_column_bytes(num_samples));
  std::vector<T> out(num_samples);
  std::size_t k = 0;
  for (auto _ : state) {
    const auto& col = set.columns[k];
    std::span<const std::uint8_t> src{reinterpret_cast<const std::uint8_t*>(col.frame.data()),
                                      col.frame.size()};
    if (col.codec != codec_id::none) {
      colflow::decompress_frame(col.codec, col.frame, std::as_writable_bytes(std::span(codes)));
      src = codes;
    }
    if constexpr (std::is_same_v<T, double>)
      colflow::decode_genotypes(src, colflow::standardized_lut(col.stats), out);
    else
      colflow::decode_genotypes(src, colflow::standardized_lut_f32(col.stats), out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    k = (k + 1) % num_columns;
  }
  report(state, set);
}

// Baseline for the genotype decoder: the plain loop, one table lookup per sample.
void decode_genotypes_scalar(benchmark::State& state, const encoded_set& set) {
  std::vector<double> out(num_samples);
  std::size_t k = 0;
  for (auto _ : state) {
    const auto& col = set.columns[k];
    const auto* codes = reinterpret_cast<const std::uint8_t*>(col.frame.data());
    const auto lut = colflow::standardized_lut(col.stats);
    for (std::size_t i = 0; i < num_samples; ++i)
      out[i] = lut[(codes[i / 4] >> (2 * (i % 4))) & 3u];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    k = (k + 1) % num_columns;
  }
  report(state, set);
}

// As store::read_column for a float64 store: decompress, then unshuffle when the column is
// shuffled.
void decode_float_frames(benchmark::State& state, const encoded_set& set) {
  std::vector<double> out(num_samples);
  std::vector<std::byte> shuffled(num_samples * sizeof(double));
  const auto out_bytes = std::as_writable_bytes(std::span(out));
  std::size_t k = 0;
  for (auto _ : state) {
    const auto& col = set.columns[k];
    if (col.flags & colflow::column_flag::shuffled) {
      colflow::decompress_frame(col.codec, col.frame, shuffled);
      colflow::unshuffle_bytes(shuffled, sizeof(double), out_bytes);
    } else {
      colflow::decompress_frame(col.codec, col.frame, out_bytes);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    k = (k + 1) % num_columns;
  }
  report(state, set);
}

// One column compressed per iteration straight by a library at its own level (not through
// colflow's choice of library per level): libdeflate_zlib_compress or zlib's compress2.
void encode_zlib(benchmark::State& state, const std::vector<float_column>& source, int level,
                 bool libdeflate) {
  libdeflate_compressor* c = libdeflate ? libdeflate_alloc_compressor(level) : nullptr;
  std::vector<unsigned char> frame(2 * num_samples * sizeof(double) + 1024);
  std::size_t k = 0, frame_total = 0, frames = 0;
  for (auto _ : state) {
    const auto& v = source[k].values;
    std::size_t n = 0;
    if (libdeflate) {
      n = libdeflate_zlib_compress(c, v.data(), v.size() * sizeof(double), frame.data(),
                                   frame.size());
    } else {
      uLongf len = static_cast<uLongf>(frame.size());
      if (compress2(frame.data(), &len, reinterpret_cast<const Bytef*>(v.data()),
                    static_cast<uLong>(v.size() * sizeof(double)), level) == Z_OK)
        n = len;
    }
    if (n == 0) {
      state.SkipWithError("compression failed");
      break;
    }
    benchmark::DoNotOptimize(frame.data());
    frame_total += n;
    ++frames;
    k = (k + 1) % num_columns;
  }
  libdeflate_free_compressor(c);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(num_samples * sizeof(double)));
  state.counters["ratio"] = static_cast<double>(frames * num_samples * sizeof(double)) /
                            static_cast<double>(std::max<std::size_t>(frame_total, 1));
}

void register_benchmarks() {
  // Sets are encoded once at registration and live as long as the program (a deque never
  // moves its elements, so the benchmarks can keep pointers to them).
  static std::deque<encoded_set> sets;
  auto add = [](const std::string& name, auto fn, encoded_set set) {
    sets.push_back(std::move(set));
    const encoded_set* s = &sets.back();
    benchmark::RegisterBenchmark(name.c_str(), [fn, s](benchmark::State& st) { fn(st, *s); });
  };

  const std::vector<codec_case> genotype_codecs = {
      {codec_id::none, 0, "none"}, {codec_id::zstd, 1, "zstd-1"}, {codec_id::zstd, 3, "zstd-3"}};
  for (const auto& cc : genotype_codecs) {
    const encoded_set set = encode_genotypes(cc);
    add("BM_decode/genotype-" + cc.name + "/f64", decode_genotype_frames<double>, set);
    add("BM_decode/genotype-" + cc.name + "/f32", decode_genotype_frames<float>, set);
    if (cc.codec == codec_id::none)
      add("BM_decode/genotype-none/f64-scalar-loop", decode_genotypes_scalar, set);
  }

  const std::vector<codec_case> float_codecs = {
      {codec_id::none, 0, "none"}, {codec_id::zlib, 6, "zlib-6"}, {codec_id::lz4, 1, "lz4-1"},
      {codec_id::lz4, 9, "lz4-9"}, {codec_id::zstd, 1, "zstd-1"}, {codec_id::zstd, 3, "zstd-3"}};
  const std::pair<std::string, std::vector<float_column>> float_sources[] = {
      {"stdgeno", make_standardized_genotypes()},
      {"dense", make_dense(0)},
      {"dense3sig", make_dense(3)}};
  for (const auto& [source_name, source] : float_sources) {
    for (const auto& cc : float_codecs) {
      for (const bool shuffle : {false, true}) {
        if (shuffle && cc.codec == codec_id::none) continue;  // nothing to compress
        const std::string name =
            "BM_decode/" + source_name + "-" + cc.name + (shuffle ? "+shuffle" : "") + "/f64";
        add(name, decode_float_frames, encode_floats(source, cc, shuffle));
        if (cc.codec != codec_id::zlib) continue;
        const encoded_set by_zlib = with_zlib_impl(
            colflow::zlib_impl::zlib, [&] { return encode_floats(source, cc, shuffle); });
        add(
            name + "-libz",
            [](benchmark::State& st, const encoded_set& set) {
              with_zlib_impl(colflow::zlib_impl::zlib, [&] {
                decode_float_frames(st, set);
                return 0;
              });
            },
            by_zlib);
        add(name + "-libz-frames", decode_float_frames, by_zlib);
      }
    }
  }

  static const std::pair<std::string, std::vector<float_column>> encode_sources[] = {
      {"stdgeno", make_standardized_genotypes()}, {"dosage", make_dosages()}};
  for (const auto& [source_name, source] : encode_sources)
    for (const bool libdeflate : {true, false})
      for (int level = 1; level <= (libdeflate ? 12 : 9); ++level)
        benchmark::RegisterBenchmark(
            ("BM_zlib_encode/" + source_name + "/" + (libdeflate ? "libdeflate-" : "libz-") +
             std::to_string(level))
                .c_str(),
            [&source = source, level, libdeflate](benchmark::State& st) {
              encode_zlib(st, source, level, libdeflate);
            });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
