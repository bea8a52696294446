// One fuzz input split into the files a reader opens (fuzz_files.hpp).
#include "fuzz_files.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>

namespace colflow::fuzz {

fuzz_files::fuzz_files(std::vector<std::string> names, const std::string& subdirectory)
    : names_(std::move(names)) {
  std::string pattern = (std::filesystem::temp_directory_path() / "colflow-fuzz-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw error(errc::io_error, "cannot create " + pattern);
  root_ = pattern;
  files_dir_ = subdirectory.empty() ? root_ : root_ / subdirectory;
  std::filesystem::create_directories(files_dir_);
}

fuzz_files::~fuzz_files() {
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

void fuzz_files::write(const std::uint8_t* data, std::size_t size) {
  std::size_t at = 0;
  for (std::size_t k = 0; k < names_.size(); ++k) {
    std::size_t length = size - at;
    if (k + 1 < names_.size()) {
      std::uint32_t declared = 0;
      if (size - at >= 4) {
        std::memcpy(&declared, data + at, 4);
        at += 4;
      } else {
        at = size;
      }
      length = std::min<std::size_t>(declared, size - at);
    }
    std::ofstream out(files_dir_ / names_[k], std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + at), static_cast<std::streamsize>(length));
    at += length;
  }
}

std::string pack_parts(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (k + 1 < parts.size()) {
      const auto length = static_cast<std::uint32_t>(parts[k].size());
      out.append(reinterpret_cast<const char*>(&length), 4);
    }
    out += parts[k];
  }
  return out;
}

}  // namespace colflow::fuzz
