// The POSIX file wrappers of colflow/io/file_io.hpp: descriptors, mappings, reads, writes.
#include "colflow/io/file_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <new>
#include <vector>

#include "colflow/error.hpp"
#include "io/truncation_guard_internal.hpp"

namespace colflow {

file_descriptor& file_descriptor::operator=(file_descriptor&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

file_descriptor::~file_descriptor() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t file_descriptor::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_system_error(errno, "cannot stat", path_);
  return static_cast<std::uint64_t>(st.st_size);
}

void file_descriptor::pread_exact(std::span<std::byte> out, std::uint64_t offset) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error(errno,
                         "cannot read " + std::to_string(out.size()) + " bytes at offset " +
                             std::to_string(offset),
                         path_);
    }
    if (n == 0)
      throw error(errc::io_error, "unexpected end of file at offset " +
                                      std::to_string(offset + done) + " (" + path_ + ")");
    done += static_cast<std::size_t>(n);
  }
}

void file_descriptor::write_all(std::span<const std::byte> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error(errno, "cannot write", path_);
    }
    done += static_cast<std::size_t>(n);
  }
}

void file_descriptor::pwrite_all(std::span<const std::byte> bytes, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error(errno, "cannot write", path_);
    }
    done += static_cast<std::size_t>(n);
  }
}

void buffered_writer::write(std::span<const std::byte> bytes) {
  if (buffer_.size() + bytes.size() > capacity_) flush();
  if (bytes.size() >= capacity_) {
    fd_.write_all(bytes);
    written_ += bytes.size();
    start_writeback();
    return;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void buffered_writer::flush() {
  if (buffer_.empty()) return;
  fd_.write_all(buffer_);
  written_ += buffer_.size();
  buffer_.clear();
  start_writeback();
}

// Asks the kernel to start writing what was written since the last request, every few MB, so
// that the disk writes while the program computes and finish()'s fsync waits only for the
// tail: a store's data file is most of what a preprocess writes, and waiting for all of it at
// the end left the disk idle while the import computed (docs/PERFORMANCE.md, .pgen import). A
// hint only: a file that cannot take it (a pipe) is written as before, and finish() still
// fsyncs, so durability is what it was.
void buffered_writer::start_writeback() noexcept {
  constexpr std::uint64_t every = std::uint64_t{8} << 20;
  if (written_ - writeback_requested_ < every) return;
#ifdef __linux__
  (void)::sync_file_range(fd_.get(), static_cast<off_t>(writeback_requested_),
                          static_cast<off_t>(written_ - writeback_requested_),
                          SYNC_FILE_RANGE_WRITE);
#endif
  writeback_requested_ = written_;
}

void buffered_writer::finish() {
  flush();
  fd_.sync();
  fd_.close();
}

void file_descriptor::sync() {
  if (::fsync(fd_) != 0) throw_system_error(errno, "cannot fsync", path_);
}

void file_descriptor::close() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  // A failed close after write can mean lost data (NFS): report it.
  if (::close(fd) != 0) throw_system_error(errno, "cannot close", path_);
}

file_descriptor open_read(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, "cannot open", path.string());
  return {fd, path.string()};
}

file_descriptor create_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw_system_error(errno, "cannot create", path.string());
  return {fd, path.string()};
}

file_descriptor create_scratch_file(const std::filesystem::path& dir) {
  const std::string shown = (dir / "(scratch file)").string();
#ifdef O_TMPFILE
  const int fd = ::open(dir.c_str(), O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
  if (fd >= 0) return {fd, shown};
  // File systems without O_TMPFILE refuse it with EOPNOTSUPP or EISDIR: fall back below.
  if (errno != EOPNOTSUPP && errno != EISDIR) throw_system_error(errno, "cannot create", shown);
#endif
  std::string name = (dir / ".colflow-scratch-XXXXXX").string();
  const int named = ::mkostemp(name.data(), O_CLOEXEC);
  if (named < 0) throw_system_error(errno, "cannot create", shown);
  file_descriptor scratch(named, shown);  // closed on the way out of a failure below
  if (::unlink(name.c_str()) != 0) throw_system_error(errno, "cannot remove the name of", name);
  return scratch;
}

std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
}

void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_system_error(errno, "cannot open directory", dir.string());
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw_system_error(saved, "cannot fsync directory", dir.string());
}

mapped_file::mapped_file(const file_descriptor& fd, access_hint hint) {
  const std::uint64_t size = fd.size();
  if (size == 0) return;
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) throw_system_error(errno, "cannot map", fd.path());
  data_ = static_cast<const std::byte*>(p);
  size_ = size;
  guard_ = detail::watch_mapping(data_, size_);
  advise(hint);
}

void mapped_file::advise(access_hint hint) const noexcept {
  if (!data_) return;
  const int advice = hint == access_hint::normal       ? MADV_NORMAL
                     : hint == access_hint::sequential ? MADV_SEQUENTIAL
                     : hint == access_hint::random     ? MADV_RANDOM
                                                       : MADV_WILLNEED;
  ::madvise(const_cast<std::byte*>(data_), size_, advice);
}

void mapped_file::will_need(std::uint64_t offset, std::uint64_t size) const noexcept {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t end = std::min<std::uint64_t>(offset + size, size_);
  const std::uint64_t first = offset / page * page;
  if (!data_ || first >= end) return;
  ::madvise(const_cast<std::byte*>(data_) + first, end - first, MADV_WILLNEED);
}

void mapped_file::map_resident(std::uint64_t offset, std::uint64_t size,
                               const std::atomic<bool>& stop) const noexcept {
#ifdef MADV_POPULATE_READ
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t end = std::min<std::uint64_t>(offset + size, size_);
  constexpr std::uint64_t piece_pages = 64;  // 256 KiB: a short hold of the mapping's lock
  unsigned char in_core[piece_pages];
  for (std::uint64_t at = offset / page * page; data_ && at < end;) {
    if (stop.load(std::memory_order_relaxed)) return;
    const std::uint64_t pages = std::min(piece_pages, (end - at + page - 1) / page);
    std::byte* base = const_cast<std::byte*>(data_) + at;
    if (::mincore(base, pages * page, in_core) != 0) return;
    for (std::uint64_t k = 0; k < pages;) {
      std::uint64_t run = k;
      while (run < pages && (in_core[run] & 1U)) ++run;
      if (run > k) ::madvise(base + k * page, (run - k) * page, MADV_POPULATE_READ);
      k = run + 1;
    }
    at += pages * page;
  }
#else
  (void)offset, (void)size, (void)stop;
#endif
}

std::pair<std::uint64_t, std::uint64_t> mapped_file::resident_pages(
    std::uint64_t offset, std::uint64_t size) const noexcept {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t end = std::min<std::uint64_t>(offset + size, size_);
  const std::uint64_t first = offset / page * page;
  if (!data_ || first >= end) return {0, 0};
  const std::uint64_t pages = (end - first + page - 1) / page;
  std::vector<unsigned char> in_core;
  try {
    in_core.resize(pages);
  } catch (const std::bad_alloc&) {
    return {pages, pages};
  }
  if (::mincore(const_cast<std::byte*>(data_) + first, end - first, in_core.data()) != 0)
    return {pages, pages};
  std::uint64_t resident = 0;
  for (const unsigned char c : in_core) resident += c & 1U;
  return {resident, pages};
}

void mapped_file::drop(std::uint64_t offset, std::uint64_t size) const noexcept {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t end = std::min<std::uint64_t>(offset + size, size_);
  const std::uint64_t first = (offset + page - 1) / page * page, last = end / page * page;
  if (!data_ || first >= last) return;
  ::madvise(const_cast<std::byte*>(data_) + first, last - first, MADV_DONTNEED);
}

bool mapped_file::damaged() const noexcept { return detail::mapping_damaged(guard_); }

void mapped_file::release() noexcept {
  detail::unwatch_mapping(guard_);
  if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  guard_ = -1;
}

mapped_file& mapped_file::operator=(mapped_file&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    size_ = o.size_;
    guard_ = o.guard_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.guard_ = -1;
  }
  return *this;
}

mapped_file::~mapped_file() { release(); }

namespace {

// Everything a pipe (`<(cmd)`, a FIFO) or another stream without a size gives until its end.
std::string read_stream(const file_descriptor& fd) {
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error(errno, "cannot read", fd.path());
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

bool is_regular_file(const file_descriptor& fd) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_system_error(errno, "cannot stat", fd.path());
  return S_ISREG(st.st_mode);
}

std::string read_all(const file_descriptor& fd) {
  if (!is_regular_file(fd)) return read_stream(fd);
  std::string text(fd.size(), '\0');
  fd.pread_exact(std::as_writable_bytes(std::span(text)), 0);
  return text;
}

std::string read_text_file(const std::filesystem::path& path) { return read_all(open_read(path)); }

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  file_descriptor fd = create_file(path);
  fd.write_all(std::as_bytes(std::span(text)));
  fd.sync();
  fd.close();
}

}  // namespace colflow
