// Result tables written as staged outputs, numbers formatted with std::to_chars.
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <system_error>

#include "colflow/error.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {

tsv_writer::tsv_writer(std::filesystem::path path, int digits, char separator)
    : output_(std::move(path)), digits_(digits), separator_(separator) {
  file_ = std::fopen(output_.path().c_str(), "wb");
  if (file_ == nullptr) throw_system_error(errno, "cannot create", output_.path());
  buffer_.reserve(1 << 20);
}

// The staged output removes the temporary after the file is closed here.
tsv_writer::~tsv_writer() {
  if (file_ != nullptr) std::fclose(file_);
}

void tsv_writer::separator() {
  if (!line_start_) buffer_ += separator_;
  line_start_ = false;
}

tsv_writer& tsv_writer::text(std::string_view s) {
  separator();
  if (s.empty()) {
    buffer_ += '.';
  } else {
    buffer_ += s;
  }
  return *this;
}

tsv_writer& tsv_writer::number(double v) {
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

tsv_writer& tsv_writer::integer(std::uint64_t v) {
  separator();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  buffer_.append(buf, r.ptr);
  return *this;
}

void tsv_writer::end_line() {
  buffer_ += '\n';
  line_start_ = true;
  if (buffer_.size() >= (1u << 20)) flush_buffer();
}

void tsv_writer::flush_buffer() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
    throw_system_error(errno, "cannot write", output_.path());
  buffer_.clear();
}

void tsv_writer::finish() {
  if (file_ == nullptr) return;
  flush_buffer();
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0)
    throw_system_error(errno, "cannot write", output_.path());
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) throw_system_error(errno, "cannot write", output_.path());
}

void tsv_writer::commit(staged_output::directory_sync sync) {
  finish();
  output_.commit(sync);
}

}  // namespace colflow
