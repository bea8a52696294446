// colflow::error, its error category, and the names and messages of the errc codes.
#include "colflow/error.hpp"

#include <cstring>

namespace colflow {
namespace {

class colflow_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "colflow"; }
  std::string message(int code) const override {
    switch (static_cast<errc>(code)) {
      case errc::io_error:
        return "I/O error";
      case errc::not_found:
        return "not found";
      case errc::already_exists:
        return "already exists";
      case errc::bad_magic:
        return "not a colflow file";
      case errc::unsupported_version:
        return "unsupported format version";
      case errc::corrupt_header:
        return "corrupt header";
      case errc::corrupt_index:
        return "corrupt index";
      case errc::corrupt_frame:
        return "corrupt frame";
      case errc::checksum_mismatch:
        return "checksum mismatch";
      case errc::mismatched_store:
        return "files from different stores";
      case errc::invalid_argument:
        return "invalid argument";
      case errc::bad_input:
        return "malformed input";
      case errc::cancelled:
        return "cancelled";
      case errc::kernel_error:
        return "kernel error";
    }
    return "unknown colflow error";
  }
};

}  // namespace

std::string_view errc_name(errc code) noexcept {
  switch (code) {
    case errc::io_error:
      return "io_error";
    case errc::not_found:
      return "not_found";
    case errc::already_exists:
      return "already_exists";
    case errc::bad_magic:
      return "bad_magic";
    case errc::unsupported_version:
      return "unsupported_version";
    case errc::corrupt_header:
      return "corrupt_header";
    case errc::corrupt_index:
      return "corrupt_index";
    case errc::corrupt_frame:
      return "corrupt_frame";
    case errc::checksum_mismatch:
      return "checksum_mismatch";
    case errc::mismatched_store:
      return "mismatched_store";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::bad_input:
      return "bad_input";
    case errc::cancelled:
      return "cancelled";
    case errc::kernel_error:
      return "kernel_error";
  }
  return "unknown";
}

const std::error_category& error_category() noexcept {
  static const colflow_category category;
  return category;
}

std::error_code make_error_code(errc code) noexcept {
  return {static_cast<int>(code), error_category()};
}

error::error(errc code, const std::string& message)
    : std::system_error(make_error_code(code), message), message_(message) {}

void throw_system_error(int errno_value, const std::string& what, const std::string& path) {
  const errc code = errno_value == ENOENT ? errc::not_found : errc::io_error;
  throw error(code, what + ": " + std::strerror(errno_value) + " (" + path + ")");
}

}  // namespace colflow
