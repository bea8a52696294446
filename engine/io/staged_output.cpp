// The one staged-output primitive (colflow/io/staged_output.hpp): temporary beside the target,
// fsync, rename, fsync of the directory; stale temporaries of dead local processes swept.
#include "colflow/io/staged_output.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <random>
#include <system_error>

#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"

namespace colflow {
namespace {

// This host's name as it appears in temporary names: '/' (impossible in a file name) and '-'
// (the field separator) replaced, so that the name parses back unambiguously.
const std::string& host_name() {
  static const std::string name = [] {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return std::string("localhost");
    std::string h(buf);
    for (char& c : h)
      if (c == '/' || c == '-') c = '_';
    return h;
  }();
  return name;
}

// True when `pid` names a process that exists (or that we may not signal, which also exists).
bool process_alive(long pid) {
  if (pid <= 0) return true;  // not a PID we wrote: leave it alone
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace

std::string staged_output::temporary_prefix(const std::filesystem::path& target) {
  // Appended piece by piece: GCC 12 reports a false -Wrestrict for "." + std::string.
  std::string prefix(1, '.');
  prefix += target.filename().string();
  prefix += ".tmp-";
  return prefix;
}

std::size_t staged_output::sweep_stale(const std::filesystem::path& target) noexcept {
  std::size_t removed = 0;
  try {
    const std::string prefix = temporary_prefix(target);
    std::string host = host_name();
    host += '-';
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(directory_of(target), ec)) {
      const std::string name = entry.path().filename().string();
      // .NAME.tmp-HOST-PID-RANDOM (a moved-aside old directory adds ".old").
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string rest = name.substr(prefix.size());
      if (rest.compare(0, host.size(), host) != 0) continue;  // another host's, or not ours
      const std::string pid_text =
          rest.substr(host.size(), rest.find('-', host.size()) - host.size());
      long pid = 0;
      const auto [end, err] =
          std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
      if (err != std::errc() || end != pid_text.data() + pid_text.size() || pid_text.empty())
        continue;
      if (process_alive(pid)) continue;
      std::error_code rm;
      if (std::filesystem::remove_all(entry.path(), rm) > 0 && !rm) ++removed;
    }
  } catch (...) {
    // Sweeping is housekeeping: a failure here must not fail the write that asked for it.
  }
  return removed;
}

staged_output::staged_output(std::filesystem::path target, kind what)
    : target_(std::move(target)), kind_(what) {
  if (target_.filename().empty())
    throw error(errc::invalid_argument, "output path '" + target_.string() + "' has no name");
  sweep_stale(target_);
  std::random_device rd;
  std::string base = temporary_prefix(target_);
  base += host_name();
  base += '-';
  base += std::to_string(::getpid());
  base += '-';
  // A random suffix keeps two outputs of one process (threads, or the same target twice)
  // apart; retry on the rare collision instead of sharing a name.
  for (int attempt = 0; attempt < 16; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(rd()));
    std::filesystem::path candidate = directory_of(target_) / (base + suffix);
    if (kind_ == kind::directory) {
      if (::mkdir(candidate.c_str(), 0777) == 0) {
        temp_ = std::move(candidate);
        return;
      }
    } else {
      const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        ::close(fd);
        temp_ = std::move(candidate);
        return;
      }
    }
    if (errno != EEXIST) throw_system_error(errno, "cannot create", candidate.string());
  }
  throw error(errc::io_error, "cannot create a temporary name beside " + target_.string());
}

staged_output::~staged_output() { discard(); }

staged_output::staged_output(staged_output&& o) noexcept
    : target_(std::move(o.target_)),
      temp_(std::move(o.temp_)),
      kind_(o.kind_),
      committed_(o.committed_) {
  o.temp_.clear();
}

staged_output& staged_output::operator=(staged_output&& o) noexcept {
  if (this != &o) {
    discard();
    target_ = std::move(o.target_);
    temp_ = std::move(o.temp_);
    kind_ = o.kind_;
    committed_ = o.committed_;
    o.temp_.clear();
  }
  return *this;
}

void staged_output::discard() noexcept {
  if (committed_ || temp_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(temp_, ec);
  temp_.clear();
}

void staged_output::commit(directory_sync sync) {
  if (committed_) return;
  if (temp_.empty()) throw error(errc::invalid_argument, "commit of a moved-from output");
  {
    // fsync works on a read-only descriptor, for files and directories alike.
    const int fd =
        ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC | (kind_ == kind::directory ? O_DIRECTORY : 0));
    if (fd < 0) throw_system_error(errno, "cannot open", temp_.string());
    const int synced = ::fsync(fd);
    const int saved = errno;
    ::close(fd);
    if (synced != 0) throw_system_error(saved, "cannot fsync", temp_.string());
  }
  std::error_code ec;
  if (kind_ == kind::directory && std::filesystem::exists(target_, ec)) {
    // rename() cannot replace a non-empty directory: exchange the two atomically, so that the
    // target name always names a whole output, then remove the old one.
    if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
      std::filesystem::remove_all(temp_, ec);  // now the old output
    } else if (errno != EINVAL && errno != ENOSYS) {
      throw_system_error(errno, "cannot replace", target_.string());
    } else {
      // No exchange on this file system: move the old one aside (the name is briefly absent,
      // but never names a partial output), then rename.
      const std::filesystem::path aside = temp_.string() + "-old";
      if (::rename(target_.c_str(), aside.c_str()) != 0)
        throw_system_error(errno, "cannot move the old output aside", target_.string());
      if (::rename(temp_.c_str(), target_.c_str()) != 0) {
        const int saved = errno;
        ::rename(aside.c_str(), target_.c_str());
        throw_system_error(saved, "cannot rename " + temp_.string() + " to", target_.string());
      }
      std::filesystem::remove_all(aside, ec);
    }
  } else if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    throw_system_error(errno, "cannot rename " + temp_.string() + " to", target_.string());
  }
  committed_ = true;
  temp_.clear();
  if (sync == directory_sync::now) sync_directory(directory_of(target_));
}

}  // namespace colflow
