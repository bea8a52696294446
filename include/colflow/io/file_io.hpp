/// @file file_io.hpp
/// Thin RAII wrappers over POSIX files: descriptors, read-only mappings, full reads and
/// writes, fsync. Every failure becomes a colflow::error naming the path. The store and the
/// importers read through these; outputs are written through staged_output.hpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace colflow {

class file_descriptor {
 public:
  file_descriptor() = default;
  file_descriptor(int fd, std::string path) noexcept : fd_(fd), path_(std::move(path)) {}
  file_descriptor(file_descriptor&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) {
    o.fd_ = -1;
  }
  file_descriptor& operator=(file_descriptor&& o) noexcept;
  ~file_descriptor();

  int get() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }

  std::uint64_t size() const;
  // Reads exactly out.size() bytes at `offset`; a short read is an error (the file shrank).
  void pread_exact(std::span<std::byte> out, std::uint64_t offset) const;
  void write_all(std::span<const std::byte> bytes);
  void pwrite_all(std::span<const std::byte> bytes, std::uint64_t offset);
  void sync();
  void close();

 private:
  int fd_ = -1;
  std::string path_;
};

file_descriptor open_read(const std::filesystem::path& path);
// Creates a new file (fails if it exists).
file_descriptor create_file(const std::filesystem::path& path);
// A scratch file in `dir`, open for reading and writing and without a name (O_TMPFILE, or
// a unique name removed at once): the system frees it when it is closed, or when the process
// ends for any reason, so a crash leaves nothing behind.
file_descriptor create_scratch_file(const std::filesystem::path& dir);
// fsyncs a directory so that renames and new names inside it are durable.
void sync_directory(const std::filesystem::path& dir);
// The directory that holds `path`: its parent, or "." for a bare name.
std::filesystem::path directory_of(const std::filesystem::path& path);

// Appends through a buffer so that small frames and text lines cost few system calls.
class buffered_writer {
 public:
  explicit buffered_writer(file_descriptor fd, std::size_t capacity = std::size_t{1} << 20)
      : fd_(std::move(fd)), capacity_(capacity) {
    buffer_.reserve(capacity);
  }
  void write(std::span<const std::byte> bytes);
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }
  void flush();
  // Bytes written so far (flushed or not).
  std::uint64_t position() const noexcept { return written_ + buffer_.size(); }
  file_descriptor& fd() noexcept { return fd_; }
  // Flushes, fsyncs and closes. The kernel is asked to start writing every few MB as they
  // are written (sync_file_range), so the fsync waits for little more than the last of them.
  void finish();

 private:
  void start_writeback() noexcept;

  file_descriptor fd_;
  std::size_t capacity_;
  std::vector<std::byte> buffer_;
  std::uint64_t written_ = 0;
  std::uint64_t writeback_requested_ = 0;  // bytes the kernel was asked to start writing
};

// How a mapping will be read (madvise hints; only hints).
enum class access_hint { normal, sequential, random, will_need };

// A read-only shared mapping of a whole file (empty files map to an empty span).
class mapped_file {
 public:
  mapped_file() = default;
  mapped_file(const file_descriptor& fd, access_hint hint);
  // Changes the hint for the whole mapping.
  void advise(access_hint hint) const noexcept;
  // Takes the whole pages inside bytes [offset, offset + size) out of this process's resident
  // memory (MADV_DONTNEED): the file's pages stay in the page cache, and a later read maps them
  // again with the same contents. Only a hint on memory use; never changes what is read.
  void drop(std::uint64_t offset, std::uint64_t size) const noexcept;
  // Starts reading the pages of bytes [offset, offset + size) into the page cache without
  // waiting for them (MADV_WILLNEED). Only a hint on timing; never changes what is read.
  void will_need(std::uint64_t offset, std::uint64_t size) const noexcept;
  // Maps into this process the pages of bytes [offset, offset + size) that the page cache
  // holds (MADV_POPULATE_READ on each run of them), so that reads of them fault on none; the
  // pages out of the page cache are not read (the system's read-ahead may fetch a few next to
  // the mapped ones, as a read of those would). Only a hint on timing;
  // its time grows with the range, so callers run it on a thread of their own.
  // Returns early, between pieces of a few megabytes, once `stop` is true.
  void map_resident(std::uint64_t offset, std::uint64_t size,
                    const std::atomic<bool>& stop) const noexcept;
  // The pages of bytes [offset, offset + size) in the page cache now, and all of them
  // (mincore): {0, 0} for an empty range, {n, n} where the system cannot tell.
  std::pair<std::uint64_t, std::uint64_t> resident_pages(std::uint64_t offset,
                                                         std::uint64_t size) const noexcept;
  mapped_file(mapped_file&& o) noexcept : data_(o.data_), size_(o.size_), guard_(o.guard_) {
    o.data_ = nullptr;
    o.size_ = 0;
    o.guard_ = -1;
  }
  mapped_file& operator=(mapped_file&& o) noexcept;
  ~mapped_file();

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

  // The file shrank under the mapping and a read touched a lost page (which read zeros
  // instead of killing the process: truncation_guard_internal.hpp).
  bool damaged() const noexcept;

 private:
  void release() noexcept;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  int guard_ = -1;
};

// True for a regular file; false for a pipe (a shell's `<(cmd)`), a FIFO or a device, which
// have no size and cannot be mapped.
bool is_regular_file(const file_descriptor& fd);
// The whole of an open (small) file as a string; a pipe or FIFO read to its end.
std::string read_all(const file_descriptor& fd);
// read_all of the file at `path`.
std::string read_text_file(const std::filesystem::path& path);
// Writes `text` to a new file and fsyncs it.
void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace colflow
