// The conversion of a column_source into a store (colflow/preprocess/converter.hpp). It sees
// the input only through the column_source interface.
#include "colflow/preprocess/converter.hpp"

#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
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

// The columns that go through the pipeline together: one column of a few thousand samples is
// a few microseconds of work, on the order of what the pipeline costs to pass an item between
// its stages, so items carry runs of columns, each still read, encoded and appended in order.
struct column_batch {
  std::vector<column_work> columns;  // the first `count` are this batch's
  std::size_t count = 0;
};

// The input a batch gathers, decoded and raw: its columns' decoding stays within a core's
// second-level cache.
constexpr std::uint64_t batch_input_bytes = std::uint64_t{64} << 10;

// The most columns a batch takes: at most 64, and few enough that every one of the `tokens`
// batches in flight has some.
std::size_t batch_capacity(std::uint64_t columns, unsigned tokens) {
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(columns / std::max(1u, tokens), 1, 64));
}

// auto: the smallest frame of the codecs that decode fast (lz4 and zstd at their default levels,
// bench/codec_bench), so that a store made with auto is never slow to read; zlib decodes slower
// and is never picked.
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

// What convert decides from the source's kind and the options, checked before anything is
// written.
struct conversion_plan {
  bool genotype_input = false, dosage_input = false;
  codec_choice choice = codec_choice::auto_select;
  bool keeps_codes = false;    // the store keeps 2-bit genotype codes
  bool keeps_dosages = false;  // the store keeps 16-bit dosages
  bool reads_codes = false;    // columns are read as 2-bit codes (read_genotypes)
  value_type store_type = value_type::float64;
  column_encoding fixed{codec_id::none, 0, false};  // the codec and level of a fixed choice
};

conversion_plan plan_conversion(value_type input, bool has_hard_calls,
                                const convert_options& options) {
  conversion_plan plan;
  plan.genotype_input = input == value_type::genotype;
  plan.dosage_input = input == value_type::dosage;
  const codec_choice choice = plan.choice = options.codec;
  plan.keeps_codes = choice == codec_choice::genotype || choice == codec_choice::genotype_zstd ||
                     (choice == codec_choice::auto_select && plan.genotype_input);
  plan.keeps_dosages = plan.dosage_input && !plan.keeps_codes && options.keep_dosages;
  if (plan.keeps_codes && !plan.genotype_input && !plan.dosage_input)
    throw error(errc::invalid_argument,
                std::string("codec '") + codec_choice_name(choice) +
                    "' keeps PLINK genotype codes and needs .bed or BGEN input");
  if (!plan.keeps_codes && !plan.keeps_dosages &&
      !(options.dtype == value_type::float64 || options.dtype == value_type::float32))
    throw error(errc::invalid_argument, "--dtype must be f64 or f32 for a float store");
  if (!(options.hard_call_threshold >= 0 && options.hard_call_threshold <= 0.5))
    throw error(errc::invalid_argument, "the hard-call threshold must be within 0..0.5, got " +
                                            std::to_string(options.hard_call_threshold));
  plan.reads_codes = plan.genotype_input || (plan.dosage_input && plan.keeps_codes &&
                                             options.source_hard_calls && has_hard_calls);
  plan.store_type = plan.keeps_codes     ? value_type::genotype
                    : plan.keeps_dosages ? value_type::dosage
                                         : options.dtype;

  column_encoding& fixed = plan.fixed;
  fixed = {codec_id::none, 0, options.shuffle};
  if (choice == codec_choice::genotype_zstd) fixed.codec = codec_id::zstd;
  if (!plan.keeps_codes && choice != codec_choice::auto_select) fixed.codec = float_codec(choice);
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
  return plan;
}

// The samples the store records: the source's, refused when two share an ID, with the sexes of
// options.sex_file. Only the samples whose sex changes are rewritten: an unknown sex keeps its
// spelling.
std::vector<sample_info> store_samples(const column_source& source,
                                       const convert_options& options) {
  std::vector<sample_info> samples = source.samples();
  refuse_duplicate_samples(samples, source.description());
  if (!options.sex_file.empty()) {
    const std::vector<sample_sex> before = sexes_of(samples),
                                  after = read_sex_file(options.sex_file, samples, before);
    for (std::size_t i = 0; i < samples.size(); ++i)
      if (after[i] != before[i]) samples[i].sex = std::to_string(static_cast<int>(after[i]));
  }
  return samples;
}

using clock = std::chrono::steady_clock;

// One pass of a source through a tbb::parallel_pipeline into a store writer: read (serial, in
// column order), encode (parallel), append (serial, in order), a batch of columns at a time.
class conversion {
 public:
  conversion(column_source& source, const convert_options& options, const conversion_plan& plan,
             store_writer& writer, const std::function<void(const convert_progress&)>& progress,
             clock::time_point start, std::uint64_t rows, std::uint64_t columns)
      : source_(source),
        options_(options),
        plan_(plan),
        writer_(writer),
        progress_(progress),
        start_(start),
        rows_(rows),
        columns_(columns),
        input_per_column_(plan.reads_codes    ? genotype_column_bytes(rows_)
                          : plan.dosage_input ? rows_ * sizeof(std::uint16_t)
                                              : rows_ * sizeof(double)) {
    result_.rows = rows_;
  }

  // Runs the pipeline with at most `tokens` batches in flight.
  void run(unsigned tokens) {
    batch_ = batch_capacity(columns_, tokens);
    tbb::parallel_pipeline(
        tokens, tbb::make_filter<void, column_batch*>(
                    tbb::filter_mode::serial_in_order,
                    [this](tbb::flow_control& fc) { return read_next(fc); }) &
                    tbb::make_filter<column_batch*, column_batch*>(
                        tbb::filter_mode::parallel, [this](column_batch* b) { return encode(b); }) &
                    tbb::make_filter<column_batch*, void>(tbb::filter_mode::serial_in_order,
                                                          [this](column_batch* b) { append(b); }));
  }

  // Completes the store and returns what the pass did.
  convert_result finish() {
    writer_.finish();
    result_.columns = columns_;
    result_.input_bytes = columns_ * input_per_column_;
    result_.seconds = std::chrono::duration<double>(clock::now() - start_).count();
    return result_;
  }

 private:
  column_source& source_;
  const convert_options& options_;
  const conversion_plan& plan_;
  store_writer& writer_;
  const std::function<void(const convert_progress&)>& progress_;
  const clock::time_point start_;
  const std::uint64_t rows_, columns_, input_per_column_;
  std::uint64_t next_ = 0;  // the next column to read
  std::size_t batch_ = 1;   // the most columns of a batch
  convert_result result_;

  // Batches circulate through a pool that owns them: a pipeline ended by an exception (a stop
  // request, a write error) drops its in-flight items without destroying them, so the items
  // themselves must not own memory. At most `tokens` batches ever exist.
  std::vector<std::unique_ptr<column_batch>> owned_;
  std::vector<column_batch*> free_items_;
  std::mutex pool_mutex_;

  column_batch* acquire() {
    std::lock_guard lock(pool_mutex_);
    if (free_items_.empty()) {
      owned_.push_back(std::make_unique<column_batch>());
      owned_.back()->columns.resize(batch_);
      free_items_.push_back(owned_.back().get());
    }
    column_batch* b = free_items_.back();
    free_items_.pop_back();
    return b;
  }
  void release(column_batch* b) {
    std::lock_guard lock(pool_mutex_);
    free_items_.push_back(b);
  }

  // The serial first stage: the next batch's columns read, or fetched for the parallel stage
  // to decode, until they hold batch_input_bytes of input.
  column_batch* read_next(tbb::flow_control& fc) {
    if (next_ == columns_) {
      fc.stop();
      return nullptr;
    }
    // Between columns: a stop request ends the pipeline here, and the store writer, unwinding,
    // removes the partial store.
    throw_if_stop_requested();
    column_batch* b = acquire();
    b->count = 0;
    for (std::uint64_t input = 0;
         b->count < batch_ && next_ < columns_ && input < batch_input_bytes; ++b->count) {
      column_work& w = b->columns[b->count];
      read_column(w);
      input += input_per_column_ + (w.raw ? w.raw->size() : 0);
    }
    return b;
  }

  void read_column(column_work& w) {
    w.index = next_;
    w.info = source_.column(next_);
    w.info.chrom = normalize_chromosome(w.info.chrom);
    if (plan_.reads_codes) {
      w.codes.resize(genotype_column_bytes(rows_));
      w.raw = source_.fetch(next_);
      if (!w.raw) source_.read_genotypes(next_, w.codes);
    } else if (plan_.dosage_input) {
      w.dosages.resize(rows_);
      w.raw = source_.fetch(next_);
      if (!w.raw) source_.read_dosages(next_, w.dosages);
    } else {
      w.values.resize(rows_);
      source_.read_values(next_, w.values);
    }
    ++next_;
  }

  // The parallel stage, a batch's columns one after another.
  column_batch* encode(column_batch* b) const {
    for (std::size_t k = 0; k < b->count; ++k) encode(b->columns[k]);
    return b;
  }

  // Decodes what was fetched, then encodes the column as the store keeps it.
  void encode(column_work& w) const {
    if (w.raw) {  // the decoding half of a two-step read (column_source.hpp)
      if (plan_.reads_codes)
        source_.decode_genotypes(*w.raw, w.codes);
      else
        source_.decode_dosages(*w.raw, w.dosages);
      w.raw.reset();
    }
    if (plan_.keeps_dosages) {
      w.encoded = encode_dosages(w);
      return;
    }
    if (plan_.dosage_input && plan_.keeps_codes && !plan_.reads_codes) {
      w.codes.resize(genotype_column_bytes(rows_));
      dosages_to_hard_calls(w.dosages, options_.hard_call_threshold, w.codes);
    }
    if (plan_.keeps_codes) {
      const auto enc = [&](const column_encoding& e) {
        return encode_genotype_column(w.codes, rows_, e);
      };
      w.encoded =
          plan_.choice == codec_choice::auto_select ? smallest_of(enc, false) : enc(plan_.fixed);
      return;
    }
    w.encoded = encode_values(w);
  }

  encoded_column encode_dosages(const column_work& w) const {
    // zstd compresses the split layout best (dosage-zstd), which is not shuffled.
    const auto enc = [&](column_encoding e) {
      if (options_.split_dosages && e.codec == codec_id::zstd) {
        e.codec = codec_id::dosage_zstd;
        e.shuffle = false;
      }
      return encode_dosage_column(w.dosages, e);
    };
    return plan_.choice == codec_choice::auto_select ? smallest_of(enc, options_.shuffle)
                                                     : enc(plan_.fixed);
  }

  // A float store's column: the values decoded (and standardised) from the input, with their
  // statistics.
  encoded_column encode_values(column_work& w) const {
    column_stats stats;
    std::uint16_t flags = 0;
    if (plan_.genotype_input) {
      // Standardised values come from the same table the genotype codec decodes through,
      // so a float64 store and a genotype store of one .bed decode to identical bits.
      stats = genotype_stats(count_genotypes(w.codes, rows_), rows_);
      w.values.resize(rows_);
      decode_genotypes(w.codes, options_.standardize ? standardized_lut(stats) : dosage_lut(),
                       w.values);
      if (options_.standardize) flags = column_flag::standardized;
    } else if (plan_.dosage_input) {
      stats = dosage_stats(w.dosages);
      w.values.resize(rows_);
      decode_dosages(w.dosages, stats, options_.standardize, w.values);
      if (options_.standardize) flags = column_flag::standardized;
    } else {
      stats = dense_stats(w.values);
      if (options_.standardize) {
        for (double& v : w.values)
          v = (std::isnan(v) || !(stats.sd > 0)) ? 0.0 : (v - stats.mean) / stats.sd;
        flags = column_flag::standardized;
      }
    }
    const auto enc = [&](const column_encoding& e) {
      return encode_float_column(w.values, plan_.store_type, stats, flags, e);
    };
    return plan_.choice == codec_choice::auto_select ? smallest_of(enc, options_.shuffle)
                                                     : enc(plan_.fixed);
  }

  // The serial last stage: the batch's columns appended to the store, in column order, and
  // counted (the writer ends the pass between two of them on a stop request).
  void append(column_batch* b) {
    for (std::size_t k = 0; k < b->count; ++k) append(b->columns[k]);
    release(b);
  }

  void append(column_work& w) {
    try {
      writer_.append(w.encoded, w.info);
    } catch (const error& e) {
      throw error(e.kind(),
                  "column " + std::to_string(w.index) + " (" + w.info.id + "): " + e.message());
    }
    ++result_.columns_per_codec[static_cast<std::uint8_t>(w.encoded.codec)];
    result_.frame_bytes += w.encoded.frame.size();
    if (progress_) {
      convert_progress p;
      p.columns_done = w.index + 1;
      p.columns_total = columns_;
      p.input_bytes_done = (w.index + 1) * input_per_column_;
      p.seconds = std::chrono::duration<double>(clock::now() - start_).count();
      progress_(p);
    }
  }
};

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
  const auto start = clock::now();

  // Set up: the plan and the store, checked and created before any column is read.
  const conversion_plan plan = plan_conversion(source.kind(), source.has_hard_calls(), options);
  const std::uint64_t rows = source.rows(), columns = source.columns();
  std::vector<sample_info> samples = store_samples(source, options);
  writer_options wo;
  wo.type = plan.store_type;
  wo.rows = rows;
  wo.overwrite = options.overwrite;
  wo.source = source.description();
  store_writer writer(options.out, wo, std::move(samples));

  // The pass, then its summary.
  conversion pass(source, options, plan, writer, progress, start, rows, columns);
  const unsigned tokens = options.tokens
                              ? options.tokens
                              : 4u * static_cast<unsigned>(tbb::this_task_arena::max_concurrency());
  pass.run(tokens);
  return pass.finish();
}

}  // namespace colflow::preprocess
