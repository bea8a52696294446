// Helpers shared by the test suites.
#pragma once

#include <Eigen/Core>
#include <barrier>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "colflow/colflow.hpp"

namespace colflow::test {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Processes as threads of this one (a test of an analysis on ranks): one shared_gather for all
// of them, one thread_communicator per thread; all_gather meets the others through shared memory.
struct shared_gather {
  explicit shared_gather(std::size_t size);
  std::vector<std::vector<double>> parts;
  std::barrier<> sync;
};

class thread_communicator final : public communicator {
 public:
  thread_communicator(shared_gather& g, int rank) : g_(g), rank_(rank) {}
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return static_cast<int>(g_.parts.size()); }
  void all_gather(std::span<const double> mine, std::span<double> all,
                  std::span<const std::size_t> counts) override;

 private:
  shared_gather& g_;
  int rank_;
};

// Runs `run(rank, options)` on `size` thread processes at once, each with options.processes its
// thread_communicator, and returns when all have: an analysis on ranks, in one test process.
void on_processes(std::size_t size,
                  const std::function<void(std::size_t rank, analysis_options& options)>& run);

// Random 2-bit genotype codes for `rows` samples: frequency `p` of A1, `missing` rate.
std::vector<std::uint8_t> random_genotype_codes(std::uint64_t rows, double p, double missing,
                                                std::mt19937_64& rng);

// Packed codes with A1 and A2 swapped (dosage x -> 2 - x); missing calls stay missing.
std::vector<std::uint8_t> swapped_alleles(std::vector<std::uint8_t> codes);

// The dosage (count of A1) of sample i in packed codes, or -1 when missing.
int dosage_at(const std::vector<std::uint8_t>& codes, std::uint64_t i);

// Samples named S1..Sn (FID = IID).
std::vector<sample_info> numbered_samples(std::uint64_t rows);

// A column description "chr1 rsJ 0 1000+J A C".
column_info numbered_column(std::uint64_t j);

// A small genotype store: `columns` random columns of `rows` samples, written with `encoding`.
// Returns the codes written, column by column.
std::vector<std::vector<std::uint8_t>> write_genotype_store(const std::filesystem::path& path,
                                                            std::uint64_t rows,
                                                            std::uint64_t columns,
                                                            const column_encoding& encoding,
                                                            std::uint64_t seed = 1);

// A small float store of random normal values with some NaN; returns the values written.
std::vector<std::vector<double>> write_float_store(const std::filesystem::path& path,
                                                   value_type type, std::uint64_t rows,
                                                   std::uint64_t columns,
                                                   const column_encoding& encoding,
                                                   std::uint64_t seed = 1);

// Every codec configuration worth testing: none, zlib 1/6, lz4 1/9, zstd 1/3/19, with shuffle.
std::vector<column_encoding> all_encodings();
std::string encoding_name(const column_encoding& e);

// Whole-file helpers.
std::vector<char> read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, const std::vector<char>& bytes);

// Damages a copy of a chain's checkpoint (docs/FORMAT.md, appendix A) in the ways its reader must
// catch and expects `resume` to refuse each with a colflow::error naming the file: single-byte
// changes at about `positions` places over the whole file (bad_magic in the first 8 bytes,
// unsupported_version in the next 4, checksum_mismatch after them) and truncations. The file
// holds its original bytes again afterwards.
void expect_damaged_checkpoint_refused(const std::filesystem::path& checkpoint,
                                       std::size_t positions, const std::function<void()>& resume);

// Runs a shell command, returns its exit status and captures stdout+stderr into `output`.
int run_command(const std::string& command, std::string& output);

// The standardised matrix of the selected rows and columns, built plainly from the stored
// values: docs/DESIGN.md §2 (mean and SD of the selected rows, missing values 0), or with `hwe` the
// scaling (x − 2p)/sqrt(2p(1 − p)). Constant columns are zero; `nonconstant` counts the others.
Eigen::MatrixXd standardized_matrix(const store& s, const selection& sel, bool hwe,
                                    std::size_t& nonconstant);

// Runs the colflow program of this build with `args` (run_command's contract).
int run_cli(const std::string& args, std::string& output);

}  // namespace colflow::test
