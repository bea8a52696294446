// Result tables written as staged outputs, numbers formatted as std::to_chars formats them.
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <system_error>

#include "colflow/error.hpp"
#include "io/general_number_internal.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {

tsv_lines::tsv_lines(int digits, char separator) : digits_(digits), separator_(separator) {}

void tsv_lines::separator() {
  if (!line_start_) buffer_ += separator_;
  line_start_ = false;
}

tsv_lines& tsv_lines::text(std::string_view s) {
  separator();
  if (s.empty()) {
    buffer_ += '.';
  } else {
    buffer_ += s;
  }
  return *this;
}

tsv_lines& tsv_lines::number(double v) {
  separator();
  if (std::isnan(v)) {
    buffer_ += "NA";
    return *this;
  }
  detail::append_general(buffer_, v, digits_);
  return *this;
}

tsv_lines& tsv_lines::integer(std::uint64_t v) {
  separator();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  buffer_.append(buf, r.ptr);
  return *this;
}

void tsv_lines::end_line() {
  buffer_ += '\n';
  line_start_ = true;
}

tsv_writer::tsv_writer(std::filesystem::path path, int digits, char separator)
    : output_(std::move(path)), lines_(digits, separator) {
  file_ = std::fopen(output_.path().c_str(), "wb");
  if (file_ == nullptr) throw_system_error(errno, "cannot create", output_.path());
}

// The staged output removes the temporary after the file is closed here.
tsv_writer::~tsv_writer() {
  if (file_ != nullptr) std::fclose(file_);
}

tsv_writer& tsv_writer::text(std::string_view s) {
  lines_.text(s);
  return *this;
}

tsv_writer& tsv_writer::number(double v) {
  lines_.number(v);
  return *this;
}

tsv_writer& tsv_writer::integer(std::uint64_t v) {
  lines_.integer(v);
  return *this;
}

void tsv_writer::end_line() {
  lines_.end_line();
  if (lines_.str().size() >= (1u << 20)) flush_buffer();
}

void tsv_writer::append(const tsv_lines& lines) {
  flush_buffer();
  write(lines.str());
}

void tsv_writer::write(const std::string& bytes) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw_system_error(errno, "cannot write", output_.path());
}

void tsv_writer::flush_buffer() {
  write(lines_.str());
  lines_.clear();
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
