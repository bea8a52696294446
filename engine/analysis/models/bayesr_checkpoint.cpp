// A BayesR chain's checkpoint file: written as a staged output, read back checked field by field.
#include <fcntl.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "analysis/models/bayesr_checkpoint_internal.hpp"
#include "colflow/codec/codec.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"
#include "kernels/sample_blocks_internal.hpp"

namespace colflow::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoints hold little-endian numbers as they are in memory");

constexpr char magic[8] = {'C', 'F', 'B', 'A', 'Y', 'E', 'S', 'R'};
// Version 2: chains computed on sample blocks (docs/DESIGN.md §4.8). Version 1 files hold the
// same fields from a chain whose sums over samples ran in one piece; with at most one block of
// rows that is the same arithmetic, so they resume exactly, and are refused otherwise.
constexpr std::uint32_t format_version = 2;
constexpr std::uint32_t whole_column_version = 1;
constexpr std::size_t header_bytes = 64;  // magic, version, classes, six u64 fields

// Bytes of one trace row with k classes: iteration, five doubles, nonzero, k weights.
constexpr std::size_t trace_row_bytes(std::size_t k) { return 8 + 5 * 8 + 8 + 8 * k; }

std::size_t body_bytes(std::size_t rows, std::size_t m, std::size_t k, std::size_t trace_rows) {
  return 8 * (3 + k)        // mu, sigma2_g, sigma2_e, pi
         + m * (8 + 1)      // beta, component
         + 8 * rows         // residual
         + m * (8 + 8 + 8)  // included, beta_sum, beta_square_sum
         + trace_rows * trace_row_bytes(k);
}

class writer {
 public:
  template <typename T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    bytes_.append(p, sizeof(T));
  }
  template <typename T, typename Allocator>
  void put_all(const std::vector<T, Allocator>& v) {
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void put_magic() { bytes_.append(magic, sizeof magic); }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class reader {
 public:
  explicit reader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  template <typename T>
  std::vector<T> get_all(std::size_t n) {
    std::vector<T> v(n);
    std::memcpy(v.data(), bytes_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return v;
  }

 private:
  const std::string& bytes_;
  std::size_t at_ = 0;
};

}  // namespace

void write_bayesr_checkpoint(const std::filesystem::path& path, const bayesr_state& st) {
  const std::size_t k = st.pi.size();
  writer w;
  w.put_magic();
  w.put(format_version);
  w.put(static_cast<std::uint32_t>(k));
  w.put(st.fingerprint);
  w.put(st.iteration);
  w.put(static_cast<std::uint64_t>(st.residual.size()));
  w.put(static_cast<std::uint64_t>(st.beta.size()));
  w.put(static_cast<std::uint64_t>(st.trace.size()));
  w.put(st.posterior_samples);
  w.put(st.mu);
  w.put(st.sigma2_g);
  w.put(st.sigma2_e);
  w.put_all(st.pi);
  w.put_all(st.beta);
  w.put_all(st.component);
  w.put_all(st.residual);
  w.put_all(st.included);
  w.put_all(st.beta_sum);
  w.put_all(st.beta_square_sum);
  for (const bayesr_sample& t : st.trace) {
    w.put(static_cast<std::uint64_t>(t.iteration));
    for (double v : {t.mu, t.sigma2_g, t.sigma2_e, t.h2, t.genetic_variance}) w.put(v);
    w.put(static_cast<std::uint64_t>(t.nonzero));
    w.put_all(t.pi);
  }
  std::string& bytes = w.bytes();
  const std::uint64_t sum = checksum64(std::as_bytes(std::span(bytes)));
  w.put(sum);

  // Staged (temporary name, sync, rename, sync the directory): the real name only ever holds
  // a complete checkpoint, the previous one until the rename; a failure leaves no temporary.
  staged_output out(path);
  const int fd = ::open(out.path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, "cannot open", out.path().string());
  file_descriptor file(fd, out.path().string());
  file.write_all(std::as_bytes(std::span(bytes)));
  file.close();
  out.commit();
}

bayesr_state read_bayesr_checkpoint(const std::filesystem::path& path, std::uint64_t fingerprint,
                                    std::size_t rows, std::size_t columns, std::size_t classes) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw error(errc::not_found, name + ": no checkpoint to resume from");
  const std::string bytes = read_text_file(path);
  if (bytes.size() < header_bytes + 8 || std::memcmp(bytes.data(), magic, sizeof magic) != 0)
    throw error(errc::bad_magic, name + ": not a colflow BayesR checkpoint");
  reader r(bytes);
  r.get<std::uint64_t>();  // magic
  const auto version = r.get<std::uint32_t>();
  if (version != format_version && version != whole_column_version)
    throw error(errc::unsupported_version,
                name + ": checkpoint format version " + std::to_string(version) +
                    " (this build reads versions " + std::to_string(whole_column_version) +
                    " and " + std::to_string(format_version) + ")");
  std::uint64_t recorded;
  std::memcpy(&recorded, bytes.data() + bytes.size() - 8, 8);
  if (checksum64(std::as_bytes(std::span(bytes.data(), bytes.size() - 8))) != recorded)
    throw error(errc::checksum_mismatch,
                name + ": the checkpoint is damaged or truncated (checksum mismatch)");

  bayesr_state st;
  const auto k = r.get<std::uint32_t>();
  st.fingerprint = r.get<std::uint64_t>();
  st.iteration = r.get<std::uint64_t>();
  const auto n = r.get<std::uint64_t>(), m = r.get<std::uint64_t>();
  const auto trace_rows = r.get<std::uint64_t>();
  st.posterior_samples = r.get<std::uint64_t>();
  // Sizes first, so that no field is read past the end whatever the header says.
  const std::uint64_t limit = bytes.size();
  if (k == 0 || k > 255 || n > limit || m > limit || trace_rows > limit ||
      header_bytes + body_bytes(n, m, k, trace_rows) + 8 != bytes.size())
    throw error(errc::corrupt_header, name + ": checkpoint sizes do not match its length");
  if (st.fingerprint != fingerprint)
    throw error(errc::invalid_argument,
                name +
                    ": the checkpoint belongs to another run (a different store, selection, "
                    "phenotype, seed, priors, mixture, burn-in or thinning)");
  if (n != rows || m != columns || k != classes)
    throw error(errc::invalid_argument,
                name + ": the checkpoint's dimensions differ from this run's");
  if (version == whole_column_version && rows > sample_block_rows)
    throw error(errc::unsupported_version,
                name + ": the checkpoint was written by a colflow from before sample blocks " +
                    "(checkpoint format version 1); its chain summed over all " +
                    std::to_string(rows) +
                    " samples in one piece, and this build sums over blocks of " +
                    std::to_string(sample_block_rows) +
                    ", so it cannot continue that chain bit for bit: start the chain again " +
                    "without --resume");
  st.mu = r.get<double>();
  st.sigma2_g = r.get<double>();
  st.sigma2_e = r.get<double>();
  st.pi = r.get_all<double>(k);
  st.beta = r.get_all<double>(m);
  st.component = r.get_all<std::uint8_t>(m);
  const std::vector<double> residual = r.get_all<double>(n);
  st.residual.assign(residual.begin(), residual.end());
  st.included = r.get_all<std::uint64_t>(m);
  st.beta_sum = r.get_all<double>(m);
  st.beta_square_sum = r.get_all<double>(m);
  st.trace.resize(trace_rows);
  for (bayesr_sample& t : st.trace) {
    t.iteration = r.get<std::uint64_t>();
    t.mu = r.get<double>();
    t.sigma2_g = r.get<double>();
    t.sigma2_e = r.get<double>();
    t.h2 = r.get<double>();
    t.genetic_variance = r.get<double>();
    t.nonzero = r.get<std::uint64_t>();
    t.pi = r.get_all<double>(k);
  }
  for (std::uint8_t c : st.component)
    if (c >= k) throw error(errc::corrupt_header, name + ": a column's class is out of range");
  return st;
}

}  // namespace colflow::detail
