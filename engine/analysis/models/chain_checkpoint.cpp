// The framing of a chain's checkpoint file: staged write, checked read.
#include <fcntl.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <span>
#include <string>
#include <system_error>

#include "analysis/models/chain_checkpoint_internal.hpp"
#include "colflow/codec/codec.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"

namespace colflow::detail {

static_assert(std::endian::native == std::endian::little,
              "checkpoints hold little-endian numbers as they are in memory");

namespace {
constexpr std::size_t magic_bytes = 8, version_bytes = 4, checksum_bytes = 8;
}  // namespace

checkpoint_writer::checkpoint_writer(const checkpoint_format& format) {
  bytes_.append(format.magic.data(), magic_bytes);
  put(format.version);
}

void checkpoint_writer::write(const std::filesystem::path& path) {
  const std::uint64_t sum = checksum64(std::as_bytes(std::span(bytes_)));
  put(sum);
  // Staged (temporary name, sync, rename, sync the directory): the real name only ever holds
  // a complete checkpoint, the previous one until the rename; a failure leaves no temporary.
  staged_output out(path);
  const int fd = ::open(out.path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, "cannot open", out.path().string());
  file_descriptor file(fd, out.path().string());
  file.write_all(std::as_bytes(std::span(bytes_)));
  file.close();
  out.commit();
  bytes_.resize(bytes_.size() - checksum_bytes);
}

checkpoint_reader::checkpoint_reader(const std::filesystem::path& path,
                                     const checkpoint_format& format, std::size_t header_bytes)
    : name_(path.string()) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw error(errc::not_found, name_ + ": no checkpoint to resume from");
  bytes_ = read_text_file(path);
  if (bytes_.size() < std::max(header_bytes, magic_bytes + version_bytes) + checksum_bytes ||
      std::memcmp(bytes_.data(), format.magic.data(), magic_bytes) != 0) {
    std::string what = name_;
    what.append(": not a colflow ").append(format.chain).append(" checkpoint");
    throw error(errc::bad_magic, what);
  }
  at_ = magic_bytes;
  version_ = get<std::uint32_t>();
  if (version_ < format.oldest_version || version_ > format.version) {
    std::string what = name_;
    what.append(": checkpoint format version ").append(std::to_string(version_));
    if (format.oldest_version == format.version)
      what.append(" (this build reads version ").append(std::to_string(format.version));
    else
      what.append(" (this build reads versions ")
          .append(std::to_string(format.oldest_version))
          .append(" to ")
          .append(std::to_string(format.version));
    throw error(errc::unsupported_version, what.append(")"));
  }
  std::uint64_t recorded;
  std::memcpy(&recorded, bytes_.data() + bytes_.size() - checksum_bytes, checksum_bytes);
  if (checksum64(std::as_bytes(std::span(bytes_.data(), bytes_.size() - checksum_bytes))) !=
      recorded)
    throw error(errc::checksum_mismatch,
                name_ + ": the checkpoint is damaged or truncated (checksum mismatch)");
}

const char* checkpoint_reader::take(std::size_t n) {
  const std::size_t end = bytes_.size() - checksum_bytes;
  if (n > end - at_) corrupt("a field runs past the end of the file");
  const char* p = bytes_.data() + at_;
  at_ += n;
  return p;
}

void checkpoint_reader::check_count(std::uint64_t count) const {
  if (count > bytes_.size()) corrupt("checkpoint sizes do not match its length");
}

void checkpoint_reader::check_length(std::uint64_t bytes) const {
  if (bytes != bytes_.size() - checksum_bytes) corrupt("checkpoint sizes do not match its length");
}

void checkpoint_reader::check_fingerprint(std::uint64_t found, std::uint64_t expected,
                                          const std::string& settings) const {
  if (found != expected)
    throw error(errc::invalid_argument,
                name_ + ": the checkpoint belongs to another run (a different " + settings + ")");
}

void checkpoint_reader::corrupt(const std::string& what) const {
  throw error(errc::corrupt_header, name_ + ": " + what);
}

std::uint64_t fingerprint_builder::value() const {
  return checksum64(std::as_bytes(std::span(bytes_)));
}

}  // namespace colflow::detail
