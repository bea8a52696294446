/// @file staged_output.hpp
/// Writing a file or a directory so that it appears whole or not at all.
///
/// Every writer of colflow (stores, exports, simulated data, result tables, checkpoints) goes
/// through this one primitive. Output is written under a temporary name beside the target,
///
///     .NAME.tmp-HOST-PID-RANDOM
///
/// (hidden; in the target's directory, so the final rename never crosses a file system), and
/// commit() publishes it: the data is fsynced, the temporary renamed over the target, and the
/// directory fsynced, so after a crash the target holds either its old contents or the new
/// ones, never a mix. An output that is destroyed without commit() (an error, a cancellation,
/// an exception unwinding the writer) removes its temporary.
///
/// A process killed outright (kill -9, power loss) cannot remove its temporary. The next
/// staged_output for the same target removes the temporaries that a process of this host left
/// and that no longer runs; it never touches those of a live process or of another host (a
/// shared file system seen from several nodes), whose host name differs.
///
/// Thread safety: one object is used by one thread at a time; any number of objects (also for
/// the same target, in one or several processes) may be live at once, each with its own
/// temporary name.
#pragma once

#include <filesystem>
#include <string>

namespace colflow {

class staged_output {
 public:
  /// What is staged: a single file, or a directory the writer fills with files.
  enum class kind { file, directory };

  /// Removes stale temporaries of `target` (see above), then creates the temporary: an empty
  /// file (mode 0666 less the umask) or an empty directory. Throws colflow::error (io_error)
  /// naming the path when it cannot be created.
  explicit staged_output(std::filesystem::path target, kind what = kind::file);
  /// Removes the temporary (recursively for a directory) unless commit() succeeded.
  ~staged_output();
  staged_output(staged_output&& other) noexcept;
  staged_output& operator=(staged_output&& other) noexcept;
  staged_output(const staged_output&) = delete;
  staged_output& operator=(const staged_output&) = delete;

  /// Where the writer writes: the temporary file, or the temporary directory.
  const std::filesystem::path& path() const noexcept { return temp_; }
  /// The name the output gets on commit().
  const std::filesystem::path& target() const noexcept { return target_; }

  /// Publishes the output. A file is fsynced (the writer may have fsynced it already; closing
  /// it first is the writer's job). A directory is fsynced, its files are not: the writer
  /// fsyncs each one it writes, in the order it wants them durable. Then the temporary is
  /// renamed over the target and the target's directory is fsynced. An existing file target is
  /// replaced atomically; an existing directory target is exchanged atomically
  /// (renameat2 RENAME_EXCHANGE) and the old one removed, or, where the file system cannot
  /// exchange, moved aside just before the rename. Deciding whether a target may be replaced is
  /// the caller's job. Throws colflow::error (io_error) naming the path; the temporary is then
  /// removed by the destructor.
  ///
  /// A caller publishing many outputs in one directory may pass directory_sync::by_caller and
  /// fsync the directory once after the last rename (sync_directory, file_io.hpp): one journal
  /// commit instead of one per output. Until then a crash may lose any of the renames.
  enum class directory_sync { now, by_caller };
  void commit(directory_sync sync = directory_sync::now);

  /// True once commit() has succeeded.
  bool committed() const noexcept { return committed_; }

  /// The temporary-name prefix of `target` (".NAME.tmp-"), for tests and diagnostics.
  static std::string temporary_prefix(const std::filesystem::path& target);

  /// Removes the temporaries of `target` left by dead processes of this host; returns how
  /// many it removed. The constructor calls it; it never throws.
  static std::size_t sweep_stale(const std::filesystem::path& target) noexcept;

 private:
  void discard() noexcept;
  std::filesystem::path target_, temp_;
  kind kind_ = kind::file;
  bool committed_ = false;
};

}  // namespace colflow
