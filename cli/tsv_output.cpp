#include "tsv_output.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <system_error>

#include "colflow/error.hpp"

namespace colflow::cli {

tsv_output::tsv_output(std::filesystem::path path, int digits)
    : path_(std::move(path)), digits_(digits) {
  temp_ = path_;
  temp_ += ".partial";
  file_ = std::fopen(temp_.c_str(), "wb");
  if (file_ == nullptr) throw_system_error(errno, "cannot create", temp_);
  buffer_.reserve(1 << 20);
}

tsv_output::~tsv_output() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void tsv_output::separator() {
  if (!line_start_) buffer_ += '\t';
  line_start_ = false;
}

tsv_output& tsv_output::text(std::string_view s) {
  separator();
  if (s.empty()) {
    buffer_ += '.';
  } else {
    buffer_ += s;
  }
  return *this;
}

tsv_output& tsv_output::number(double v) {
  separator();
  if (std::isnan(v)) {
    buffer_ += "NA";
    return *this;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, digits_);
  buffer_.append(buf, r.ptr);
  return *this;
}

tsv_output& tsv_output::integer(std::uint64_t v) {
  separator();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  buffer_.append(buf, r.ptr);
  return *this;
}

void tsv_output::end_line() {
  buffer_ += '\n';
  line_start_ = true;
  if (buffer_.size() >= (1u << 20)) flush_buffer();
}

void tsv_output::flush_buffer() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
    throw_system_error(errno, "cannot write", temp_);
  buffer_.clear();
}

void tsv_output::commit() {
  flush_buffer();
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0)
    throw_system_error(errno, "cannot write", temp_);
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) throw_system_error(errno, "cannot write", temp_);
  std::error_code ec;
  std::filesystem::rename(temp_, path_, ec);
  if (ec) {
    std::filesystem::remove(temp_, ec);
    throw error(errc::io_error, "cannot rename " + temp_.string() + " to " + path_.string());
  }
}

}  // namespace colflow::cli
