// The conversion of a column source into a store, as a oneTBB pipeline:
//   read (serial, in order) -> encode (parallel) -> append (serial, in order)
// with at most `tokens` columns in flight, so memory stays bounded for any number of columns.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "colflow/store/store_writer.hpp"
#include "column_source.hpp"

namespace colflow::preprocess {

// What --codec names. `genotype` keeps the 2-bit codes; `genotype-zstd` compresses them with
// zstd; `auto` picks per column the smallest frame among the fast-decoding codecs (none, lz4,
// zstd); the others store float values (standardised genotypes, or the dense values).
enum class codec_choice { genotype, genotype_zstd, auto_select, none, zlib, lz4, zstd };

std::optional<codec_choice> codec_choice_from_name(const std::string& name);
const char* codec_choice_name(codec_choice c);

struct convert_options {
  std::filesystem::path out;
  codec_choice codec = codec_choice::genotype;
  std::optional<int> level;     // default: the codec's default level
  value_type dtype = value_type::float64;  // for float stores: float64 or float32
  bool shuffle = false;         // byte-shuffle float payloads
  bool standardize = true;      // float stores: store DESIGN §2 standardised values
  bool overwrite = false;
  unsigned tokens = 0;          // columns in flight; 0 = 4 x the worker threads
};

struct convert_progress {
  std::uint64_t columns_done = 0, columns_total = 0;
  std::uint64_t input_bytes_done = 0;  // bytes of input consumed (e.g. of the .bed)
  double seconds = 0;
};

struct convert_result {
  std::uint64_t rows = 0, columns = 0;
  std::uint64_t input_bytes = 0;  // of genotype codes or float64 values read
  std::uint64_t frame_bytes = 0;  // of frames written (the data file less its header)
  double seconds = 0;
  std::array<std::uint64_t, 256> columns_per_codec{};
};

// Converts `source` into the store `options.out`. Throws colflow::error; on any failure no
// store is left at the target (see store_writer). `progress` is called from the writing stage.
convert_result convert(column_source& source, const convert_options& options,
                       const std::function<void(const convert_progress&)>& progress = {});

}  // namespace colflow::preprocess
