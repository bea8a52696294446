/// @file error.hpp
/// The one exception type of colflow and its stable error codes.
///
/// Every failure reaches the caller as a colflow::error (a std::system_error), whose message
/// names the file, the column or byte offset and what is wrong, e.g.
/// `corrupt index: entry 1843: frame of 2500 bytes at offset 9870800 ends past the data file
/// size 9871220 (geno.cf/columns.idx)`. The library never prints and never exits.
#pragma once

#include <string>
#include <string_view>
#include <system_error>

namespace colflow {

/// Stable error codes: values are never renumbered or reused.
enum class errc {
  io_error = 1,             ///< a system call failed (open, read, write, fsync, rename...)
  not_found = 2,            ///< a file or store does not exist
  already_exists = 3,       ///< the output exists and replacing it was not allowed
  bad_magic = 4,            ///< the file is not what it claims to be
  unsupported_version = 5,  ///< a major format version this build cannot read
  corrupt_header = 6,       ///< a header field is out of range, a reserved bit is set...
  corrupt_index = 7,        ///< an index entry is inconsistent with the header or data file
  corrupt_frame = 8,        ///< a frame does not decode to exactly its declared size
  checksum_mismatch = 9,    ///< a frame's bytes do not match its recorded checksum
  mismatched_store = 10,    ///< data, index and text files do not belong to one store
  invalid_argument = 11,    ///< a bad option or parameter from the caller
  bad_input = 12,           ///< a malformed input file (PLINK, .npy, CSV, phenotypes...)
  cancelled = 13,           ///< work stopped on request
  kernel_error = 14,        ///< a kernel run by a stream threw something else than a colflow::error
};

/// The code's identifier as written above ("io_error", "corrupt_frame", ...): what the Python
/// package's exceptions carry as `kind`, and what tests name. "unknown" for another value.
std::string_view errc_name(errc code) noexcept;

/// The error category of colflow::errc ("colflow").
const std::error_category& error_category() noexcept;

/// Makes a std::error_code of colflow's category.
std::error_code make_error_code(errc code) noexcept;

/// The exception thrown by every colflow function.
class error : public std::system_error {
 public:
  /// `message` is the whole, self-contained description (what, where, which file).
  error(errc code, const std::string& message);

  /// The colflow error code (the same as code().value(), typed).
  errc kind() const noexcept { return static_cast<errc>(code().value()); }

  /// The message without the category's suffix that std::system_error appends.
  const std::string& message() const noexcept { return message_; }

 private:
  std::string message_;
};

/// Throws colflow::error(errc::io_error) describing errno for `what` on `path`.
[[noreturn]] void throw_system_error(int errno_value, const std::string& what,
                                     const std::string& path);

}  // namespace colflow

template <>
struct std::is_error_code_enum<colflow::errc> : std::true_type {};
