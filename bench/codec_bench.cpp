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
  set.ratio = static_cast<double>(num_columns * num_samples * sizeof(double)) /
              static_cast<double>(total);
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
      {codec_id::none, 0, "none"},   {codec_id::zlib, 6, "zlib-6"}, {codec_id::lz4, 1, "lz4-1"},
      {codec_id::lz4, 9, "lz4-9"},   {codec_id::zstd, 1, "zstd-1"}, {codec_id::zstd, 3, "zstd-3"}};
  const std::pair<std::string, std::vector<float_column>> float_sources[] = {
      {"stdgeno", make_standardized_genotypes()},
      {"dense", make_dense(0)},
      {"dense3sig", make_dense(3)}};
  for (const auto& [source_name, source] : float_sources) {
    for (const auto& cc : float_codecs) {
      for (const bool shuffle : {false, true}) {
        if (shuffle && cc.codec == codec_id::none) continue;  // nothing to compress
        add("BM_decode/" + source_name + "-" + cc.name + (shuffle ? "+shuffle" : "") + "/f64",
            decode_float_frames, encode_floats(source, cc, shuffle));
      }
    }
  }
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
