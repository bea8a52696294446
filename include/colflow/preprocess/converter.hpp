/// @file converter.hpp
/// The conversion of any column_source into a store. Part of libcolflow_preprocess
/// (colflow::preprocess).
///
/// The conversion is a oneTBB pipeline
///
///     read (serial, in column order) -> encode (parallel) -> append (serial, in order)
///
/// with at most `tokens` batches of columns in flight (a batch: up to 64 consecutive columns
/// holding about 64 KiB of input), so memory stays bounded whatever the number of columns. It knows
/// the input only through the column_source interface (column_source.hpp): every input format
/// converts the same way.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "colflow/preprocess/column_source.hpp"
#include "colflow/store/store_writer.hpp"

namespace colflow::preprocess {

/// How columns are stored (the command's --codec).
enum class codec_choice {
  /// The 2-bit codes as they are: of a genotype source, or the hard calls of a dosage source
  /// (convert_options::hard_call_threshold). Not for dense sources.
  genotype,
  genotype_zstd,  ///< the same 2-bit codes compressed with zstd
  /// Per column, the smallest frame among the fast-decoding codecs (none, lz4 level 1, zstd
  /// level 3): of the codes for a genotype source, of the 16-bit dosages for a dosage source
  /// (a dosage store), of the float values for a dense one.
  auto_select,
  /// The payload uncompressed: float values (standardised genotypes, or the dense values), or
  /// the 16-bit dosages of a dosage source kept as a dosage store (convert_options::keep_dosages)
  none,
  zlib,  ///< the same payloads compressed with zlib
  lz4,   ///< ... with lz4
  zstd,  ///< ... with zstd
};

/// The choice named `name` ("genotype", "genotype-zstd", "auto", "none", "zlib", "lz4",
/// "zstd"), or nullopt.
std::optional<codec_choice> codec_choice_from_name(const std::string& name);
/// The name of `c`, as codec_choice_from_name accepts it.
const char* codec_choice_name(codec_choice c);

/// What convert() writes, and how.
struct convert_options {
  std::filesystem::path out;  ///< the store directory to write
  codec_choice codec = codec_choice::genotype;
  /// The codec's level; default: the codec's default level. Not with codec_choice::auto_select.
  std::optional<int> level;
  value_type dtype = value_type::float64;  ///< float stores: float64 or float32
  bool shuffle = false;                    ///< byte-shuffle float payloads
  /// Dosage stores compressed with zstd: the dosage-zstd codec (the split layout of
  /// dosage_codec.hpp, then zstd), the smallest; false keeps zstd on the 16-bit values,
  /// byte-shuffled with `shuffle`.
  bool split_dosages = true;
  /// Float stores: store docs/DESIGN.md §2 standardised values (missing -> 0, centred, z'z = N - 1)
  /// instead of the values (dosages for genotype input, NaN for a missing call).
  bool standardize = true;
  /// Dosage sources with a float codec: keep the 16-bit dosages (a dosage store) rather than
  /// floats of `dtype`.
  bool keep_dosages = true;
  /// Dosage sources with a genotype codec: a dosage within this distance of 0, 1 or 2 becomes
  /// that hard call, others a missing call (PLINK 2's --hard-call-threshold and its default).
  double hard_call_threshold = 0.1;
  /// Dosage sources with hard calls of their own (a .pgen: column_source::has_hard_calls) and
  /// a genotype codec: keep those calls, as plink2 --make-bed does, instead of calling them
  /// from the dosages by hard_call_threshold (which plink2 does when given the threshold).
  bool source_hard_calls = false;
  /// A sex file (read_sex_file, analysis/sex_chromosomes.hpp) setting the samples' sex in the
  /// store ("1" male, "2" female, "0" unknown; samples it omits keep the source's): for the
  /// ploidy rules of X, Y and MT, e.g. on a VCF or BGEN store, whose samples have no sex. Empty:
  /// the source's sexes.
  std::filesystem::path sex_file;
  bool overwrite = false;  ///< replace an existing store at `out` (only when done)
  unsigned tokens = 0;     ///< batches of columns in flight; 0 = 4 x the worker threads
};

/// Progress of a conversion, reported after each column is appended.
struct convert_progress {
  std::uint64_t columns_done = 0, columns_total = 0;
  /// Bytes of input consumed: of codes, 16-bit dosages or float64 values.
  std::uint64_t input_bytes_done = 0;
  double seconds = 0;  ///< since the start
};

/// What convert() did.
struct convert_result {
  std::uint64_t rows = 0, columns = 0;
  std::uint64_t input_bytes = 0;  ///< of genotype codes, 16-bit dosages or float64 values read
  std::uint64_t frame_bytes = 0;  ///< of frames written (the data file less its header)
  double seconds = 0;
  /// Columns stored with each codec, indexed by codec_id.
  std::array<std::uint64_t, 256> columns_per_codec{};
};

/// Converts `source` into the store `options.out`, reading every column once, in order.
/// Chromosome codes are stored as PLINK 2 writes them (normalize_chromosome, chromosome.hpp).
///
/// Genotype sources become genotype stores (codec_choice genotype, genotype_zstd, auto) or
/// float stores of standardised values or dosages (the float codecs); dosage sources become
/// dosage stores (auto and the float codecs, with keep_dosages), genotype stores of their hard
/// calls (the genotype codecs) or float stores (keep_dosages false); dense sources become float
/// stores. The store is written through store_writer (store_writer.hpp): it appears
/// whole when convert() returns, or not at all.
///
/// `progress`, if given, is called from the writing stage, one call at a time, after each
/// column; it may throw to abort the conversion.
///
/// Cancellation: a stop request (cancellation.hpp) is honoured between columns.
///
/// Errors (colflow::error): errc::invalid_argument for options that do not fit the source
/// (a genotype codec with dense input, a genotype dtype for a float store, a level out of the
/// codec's range, a level with auto, a hard-call threshold outside 0..0.5), checked before
/// anything is written;
/// errc::bad_input when two samples have the same FID and IID (PLINK 2 refuses them too) and
/// read_sex_file's errors for `sex_file` (not_found, bad_input), checked before anything is
/// written;
/// errc::already_exists when the store exists and `overwrite` is false; errc::cancelled on a
/// stop request; whatever the source throws; errc::io_error when the store cannot be written.
/// A failure while appending names the column. On any failure no store is left at the target
/// (an existing one stays as it was).
///
/// Thread safety: uses the oneTBB task arena it is called in; any number of conversions may
/// run at once on distinct sources and targets.
convert_result convert(column_source& source, const convert_options& options,
                       const std::function<void(const convert_progress&)>& progress = {});

}  // namespace colflow::preprocess
