// The conversion of a column_source into a store (colflow/preprocess/converter.hpp). It sees
// the input only through the column_source interface.
#include "colflow/preprocess/converter.hpp"

#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/codec/codec.hpp"
#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/error.hpp"
#include "colflow/preprocess/chromosome.hpp"

namespace colflow::preprocess {
namespace {

// One column on its way through the pipeline.
struct column_work {
  std::uint64_t index = 0;
  column_info info;
  std::vector<std::uint8_t> codes;     // genotype sources, or a dosage source's hard calls
  std::vector<std::uint16_t> dosages;  // dosage sources
  std::vector<double> values;  // dense sources, or genotypes or dosages decoded for a float store
  std::unique_ptr<column_source::fetched> raw;  // fetched, decoded in the parallel stage
  encoded_column encoded;
};

// auto: the candidates all decode at 500 MB/s of payload or more on one core (lz4 and zstd at
// their default levels; bench/codec_bench); zlib decodes slower and is never picked.
encoded_column smallest_of(const std::function<encoded_column(const column_encoding&)>& encode,
                           bool shuffle) {
  encoded_column best = encode({codec_id::none, 0, false});
  for (const column_encoding& e :
       {column_encoding{codec_id::lz4, 1, shuffle}, column_encoding{codec_id::zstd, 3, shuffle}}) {
    encoded_column c = encode(e);
    if (c.frame.size() < best.frame.size()) best = std::move(c);
  }
  return best;
}

// Analyses match phenotypes to samples by their IDs, so two samples of one ID would be
// ambiguous; PLINK 2 refuses such inputs too.
void refuse_duplicate_samples(const std::vector<sample_info>& samples, const std::string& source) {
  std::unordered_map<std::string, std::size_t> seen;
  seen.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto [it, added] = seen.emplace(samples[i].fid + '\t' + samples[i].iid, i);
    if (!added)
      throw error(errc::bad_input, source + ": samples " + std::to_string(it->second + 1) +
                                       " and " + std::to_string(i + 1) +
                                       " have the same ID (FID '" + samples[i].fid + "', IID '" +
                                       samples[i].iid + "'); sample IDs must be unique");
  }
}

codec_id float_codec(codec_choice c) {
  switch (c) {
    case codec_choice::none:
      return codec_id::none;
    case codec_choice::zlib:
      return codec_id::zlib;
    case codec_choice::lz4:
      return codec_id::lz4;
    default:
      return codec_id::zstd;
  }
}

}  // namespace

std::optional<codec_choice> codec_choice_from_name(const std::string& name) {
  for (codec_choice c :
       {codec_choice::genotype, codec_choice::genotype_zstd, codec_choice::auto_select,
        codec_choice::none, codec_choice::zlib, codec_choice::lz4, codec_choice::zstd})
    if (name == codec_choice_name(c)) return c;
  return std::nullopt;
}

const char* codec_choice_name(codec_choice c) {
  switch (c) {
    case codec_choice::genotype:
      return "genotype";
    case codec_choice::genotype_zstd:
      return "genotype-zstd";
    case codec_choice::auto_select:
      return "auto";
    case codec_choice::none:
      return "none";
    case codec_choice::zlib:
      return "zlib";
    case codec_choice::lz4:
      return "lz4";
    case codec_choice::zstd:
      return "zstd";
  }
  return "?";
}

convert_result convert(column_source& source, const convert_options& options,
                       const std::function<void(const convert_progress&)>& progress) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const value_type input = source.kind();
  const bool genotype_input = input == value_type::genotype;
  const bool dosage_input = input == value_type::dosage;
  const codec_choice choice = options.codec;
  const bool keeps_codes = choice == codec_choice::genotype ||
                           choice == codec_choice::genotype_zstd ||
                           (choice == codec_choice::auto_select && genotype_input);
  const bool keeps_dosages = dosage_input && !keeps_codes && options.keep_dosages;
  if (keeps_codes && !genotype_input && !dosage_input)
    throw error(errc::invalid_argument,
                std::string("codec '") + codec_choice_name(choice) +
                    "' keeps PLINK genotype codes and needs .bed or BGEN input");
  if (!keeps_codes && !keeps_dosages &&
      !(options.dtype == value_type::float64 || options.dtype == value_type::float32))
    throw error(errc::invalid_argument, "--dtype must be f64 or f32 for a float store");
  if (!(options.hard_call_threshold >= 0 && options.hard_call_threshold <= 0.5))
    throw error(errc::invalid_argument, "the hard-call threshold must be within 0..0.5, got " +
                                            std::to_string(options.hard_call_threshold));
  const value_type store_type = keeps_codes     ? value_type::genotype
                                : keeps_dosages ? value_type::dosage
                                                : options.dtype;

  // The codec and level of fixed choices, checked before anything is written.
  column_encoding fixed{codec_id::none, 0, options.shuffle};
  if (choice == codec_choice::genotype_zstd) fixed.codec = codec_id::zstd;
  if (!keeps_codes && choice != codec_choice::auto_select) fixed.codec = float_codec(choice);
  fixed.level = options.level.value_or(traits_of(fixed.codec).default_level);
  if (choice != codec_choice::auto_select) {
    const codec_traits& t = traits_of(fixed.codec);
    if (fixed.level < t.min_level || fixed.level > t.max_level)
      throw error(errc::invalid_argument,
                  std::string(t.name) + " level " + std::to_string(fixed.level) + " is outside " +
                      std::to_string(t.min_level) + ".." + std::to_string(t.max_level));
  } else if (options.level) {
    throw error(errc::invalid_argument, "--level does not apply to --codec auto");
  }

  const std::uint64_t rows = source.rows(), columns = source.columns();
  std::vector<sample_info> samples = source.samples();
  refuse_duplicate_samples(samples, source.description());
  if (!options.sex_file.empty()) {
    // Only the samples whose sex changes are rewritten: an unknown sex keeps its spelling.
    const std::vector<sample_sex> before = sexes_of(samples),
                                  after = read_sex_file(options.sex_file, samples, before);
    for (std::size_t i = 0; i < samples.size(); ++i)
      if (after[i] != before[i]) samples[i].sex = std::to_string(static_cast<int>(after[i]));
  }
  writer_options wo;
  wo.type = store_type;
  wo.rows = rows;
  wo.overwrite = options.overwrite;
  wo.source = source.description();
  store_writer writer(options.out, wo, std::move(samples));

  const std::uint64_t input_per_column = genotype_input ? genotype_column_bytes(rows)
                                         : dosage_input ? rows * sizeof(std::uint16_t)
                                                        : rows * sizeof(double);
  const unsigned tokens = options.tokens
                              ? options.tokens
                              : 4u * static_cast<unsigned>(tbb::this_task_arena::max_concurrency());
  std::uint64_t next = 0;
  convert_result result;
  result.rows = rows;

  const auto encode = [&](column_work& w) {
    if (w.raw) {  // the decoding half of a two-step read (column_source.hpp)
      if (genotype_input)
        source.decode_genotypes(*w.raw, w.codes);
      else
        source.decode_dosages(*w.raw, w.dosages);
      w.raw.reset();
    }
    if (keeps_dosages) {
      // zstd compresses the split layout best (dosage-zstd), which is not shuffled.
      const auto enc = [&](column_encoding e) {
        if (options.split_dosages && e.codec == codec_id::zstd) {
          e.codec = codec_id::dosage_zstd;
          e.shuffle = false;
        }
        return encode_dosage_column(w.dosages, e);
      };
      w.encoded =
          choice == codec_choice::auto_select ? smallest_of(enc, options.shuffle) : enc(fixed);
      return;
    }
    if (dosage_input && keeps_codes) {
      w.codes.resize(genotype_column_bytes(rows));
      dosages_to_hard_calls(w.dosages, options.hard_call_threshold, w.codes);
    }
    if (keeps_codes) {
      const auto enc = [&](const column_encoding& e) {
        return encode_genotype_column(w.codes, rows, e);
      };
      w.encoded = choice == codec_choice::auto_select ? smallest_of(enc, false) : enc(fixed);
      return;
    }
    column_stats stats;
    std::uint16_t flags = 0;
    if (genotype_input) {
      // Standardised values come from the same table the genotype codec decodes through,
      // so a float64 store and a genotype store of one .bed decode to identical bits.
      stats = genotype_stats(count_genotypes(w.codes, rows), rows);
      w.values.resize(rows);
      decode_genotypes(w.codes, options.standardize ? standardized_lut(stats) : dosage_lut(),
                       w.values);
      if (options.standardize) flags = column_flag::standardized;
    } else if (dosage_input) {
      stats = dosage_stats(w.dosages);
      w.values.resize(rows);
      decode_dosages(w.dosages, stats, options.standardize, w.values);
      if (options.standardize) flags = column_flag::standardized;
    } else {
      stats = dense_stats(w.values);
      if (options.standardize) {
        for (double& v : w.values)
          v = (std::isnan(v) || !(stats.sd > 0)) ? 0.0 : (v - stats.mean) / stats.sd;
        flags = column_flag::standardized;
      }
    }
    const auto enc = [&](const column_encoding& e) {
      return encode_float_column(w.values, store_type, stats, flags, e);
    };
    w.encoded =
        choice == codec_choice::auto_select ? smallest_of(enc, options.shuffle) : enc(fixed);
  };

  // Work items circulate through a pool that owns them: a pipeline ended by an exception (a
  // stop request, a write error) drops its in-flight items without destroying them, so the
  // items themselves must not own memory. At most `tokens` items ever exist.
  std::vector<std::unique_ptr<column_work>> owned;
  std::vector<column_work*> free_items;
  std::mutex pool_mutex;
  const auto acquire = [&]() -> column_work* {
    std::lock_guard lock(pool_mutex);
    if (free_items.empty()) {
      owned.push_back(std::make_unique<column_work>());
      free_items.push_back(owned.back().get());
    }
    column_work* w = free_items.back();
    free_items.pop_back();
    return w;
  };
  const auto release = [&](column_work* w) {
    std::lock_guard lock(pool_mutex);
    free_items.push_back(w);
  };

  tbb::parallel_pipeline(
      tokens, tbb::make_filter<void, column_work*>(tbb::filter_mode::serial_in_order,
                                                   [&](tbb::flow_control& fc) -> column_work* {
                                                     if (next == columns) {
                                                       fc.stop();
                                                       return nullptr;
                                                     }
                                                     // Between columns: a stop request ends the
                                                     // pipeline here, and the store writer,
                                                     // unwinding, removes the partial store.
                                                     throw_if_stop_requested();
                                                     column_work* w = acquire();
                                                     w->index = next;
                                                     w->info = source.column(next);
                                                     w->info.chrom =
                                                         normalize_chromosome(w->info.chrom);
                                                     if (genotype_input) {
                                                       w->codes.resize(genotype_column_bytes(rows));
                                                       w->raw = source.fetch(next);
                                                       if (!w->raw)
                                                         source.read_genotypes(next, w->codes);
                                                     } else if (dosage_input) {
                                                       w->dosages.resize(rows);
                                                       w->raw = source.fetch(next);
                                                       if (!w->raw)
                                                         source.read_dosages(next, w->dosages);
                                                     } else {
                                                       w->values.resize(rows);
                                                       source.read_values(next, w->values);
                                                     }
                                                     ++next;
                                                     return w;
                                                   }) &
                  tbb::make_filter<column_work*, column_work*>(tbb::filter_mode::parallel,
                                                               [&](column_work* w) {
                                                                 encode(*w);
                                                                 return w;
                                                               }) &
                  tbb::make_filter<column_work*, void>(
                      tbb::filter_mode::serial_in_order, [&](column_work* w) {
                        try {
                          writer.append(w->encoded, w->info);
                        } catch (const error& e) {
                          throw error(e.kind(), "column " + std::to_string(w->index) + " (" +
                                                    w->info.id + "): " + e.message());
                        }
                        ++result.columns_per_codec[static_cast<std::uint8_t>(w->encoded.codec)];
                        result.frame_bytes += w->encoded.frame.size();
                        if (progress) {
                          convert_progress p;
                          p.columns_done = w->index + 1;
                          p.columns_total = columns;
                          p.input_bytes_done = (w->index + 1) * input_per_column;
                          p.seconds = std::chrono::duration<double>(clock::now() - start).count();
                          progress(p);
                        }
                        release(w);
                      }));
  writer.finish();
  result.columns = columns;
  result.input_bytes = columns * input_per_column;
  result.seconds = std::chrono::duration<double>(clock::now() - start).count();

  return result;
}

}  // namespace colflow::preprocess
