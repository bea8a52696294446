// What the fuzz targets share: turning one fuzz input into the files a reader opens.
//
// The input is a sequence of parts: each part but the last is a 4-byte little-endian length
// followed by that many bytes (a length past the end takes what is left); the last part is
// the rest. Part k becomes file names[k] in a private directory made once per process, so
// readers are exercised through their real file, mmap and pread paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "colflow/error.hpp"

namespace colflow::fuzz {

class fuzz_files {
 public:
  explicit fuzz_files(std::vector<std::string> names, const std::string& subdirectory = "");
  ~fuzz_files();
  fuzz_files(const fuzz_files&) = delete;
  fuzz_files& operator=(const fuzz_files&) = delete;

  // Writes the parts of `data` to their files (parts the input lacks become empty files).
  void write(const std::uint8_t* data, std::size_t size);
  // The directory holding the files (the subdirectory, when one was asked for).
  const std::filesystem::path& dir() const noexcept { return files_dir_; }
  std::filesystem::path operator/(const std::string& name) const { return files_dir_ / name; }

 private:
  std::filesystem::path root_, files_dir_;
  std::vector<std::string> names_;
};

// Describes and reads every column of a dense column source (npy, csv), and its samples.
template <typename Source>
void read_every_column(Source& source) {
  std::vector<double> values(source.rows());
  for (std::uint64_t j = 0; j < source.columns(); ++j) {
    (void)source.column(j);
    source.read_values(j, values);
  }
  (void)source.samples();
}

// Packs files into one input of the layout above (for building seed corpora).
std::string pack_parts(const std::vector<std::string>& parts);

}  // namespace colflow::fuzz
