// The file framing every Gibbs chain's checkpoint shares (docs/FORMAT.md, appendix A): an
// 8-byte magic, a u32 format version, the chain's own fields, and a u64 checksum of every byte
// before it; written as a staged output (colflow/io/staged_output.hpp: a temporary beside the
// path, synced and renamed over it), read back whole with its magic, version and checksum
// checked before any field is trusted, and every field read within the file's bytes.
//
// A chain (bayesr_checkpoint.cpp, sbayesr_checkpoint.cpp) puts and gets its fields in its
// order, checks the length its header implies (check_length) and the fingerprint of its data
// and settings (check_fingerprint).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace colflow::detail {

// What tells one chain's checkpoints from another's.
struct checkpoint_format {
  std::array<char, 8> magic;
  const char* chain;             // in messages: "BayesR", "SBayesR"
  std::uint32_t version;         // written, and the newest read
  std::uint32_t oldest_version;  // the oldest read
};

class checkpoint_writer {
 public:
  // Starts the bytes with the format's magic and version.
  explicit checkpoint_writer(const checkpoint_format& format);

  template <typename T>
  void put(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <typename T, typename Allocator>
  void put_all(const std::vector<T, Allocator>& v) {
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }

  // Appends the checksum and writes the file: staged, so that `path` only ever holds a
  // complete checkpoint (the previous one until the rename); a failure leaves no temporary.
  void write(const std::filesystem::path& path);

 private:
  std::string bytes_;
};

class checkpoint_reader {
 public:
  // Reads `path` whole and checks, in order: that it exists (not_found), its magic (bad_magic),
  // its version (unsupported_version) and its checksum (checksum_mismatch), each error naming
  // the file. `header_bytes`: the least a file of this format holds before its checksum.
  checkpoint_reader(const std::filesystem::path& path, const checkpoint_format& format,
                    std::size_t header_bytes);

  std::uint32_t version() const noexcept { return version_; }
  const std::string& name() const noexcept { return name_; }

  // The fields after the version, in the order they were put. Reading past the checksum is a
  // corrupt_header error (check_length first makes that impossible).
  template <typename T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  template <typename T>
  std::vector<T> get_all(std::size_t n) {
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }

  // A count from the header that must not exceed the file's bytes (so products of counts do
  // not overflow); corrupt_header otherwise.
  void check_count(std::uint64_t count) const;
  // The file's length must be what its header implies: `bytes` from the magic to the checksum,
  // excluded. corrupt_header otherwise.
  void check_length(std::uint64_t bytes) const;
  // The checkpoint's fingerprint against the run's: invalid_argument naming the file and what
  // a different run differs in (`settings`) otherwise.
  void check_fingerprint(std::uint64_t found, std::uint64_t expected,
                         const std::string& settings) const;
  // Throws the error of a checkpoint whose contents are inconsistent (corrupt_header).
  [[noreturn]] void corrupt(const std::string& what) const;

 private:
  const char* take(std::size_t n);

  std::string name_;
  std::string bytes_;
  std::uint32_t version_ = 0;
  std::size_t at_ = 0;
};

// Everything a chain depends on, appended as bytes and hashed into its fingerprint.
class fingerprint_builder {
 public:
  explicit fingerprint_builder(const char* tag) : bytes_(tag) {}
  template <typename T>
  void put(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T, typename Allocator>
  void put_all(const std::vector<T, Allocator>& v) {
    put(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void put_bytes(const void* data, std::size_t n) {
    bytes_.append(static_cast<const char*>(data), n);
  }
  std::uint64_t value() const;

 private:
  std::string bytes_;
};

}  // namespace colflow::detail
