// Shared by the preprocessor's tests (preprocess*_test.cpp): the shared datasets by name, a
// .bed fileset converted into a store, and the temporaries a staged output may leave behind.
#pragma once

#include <filesystem>
#include <string>

#include "colflow/preprocess/bed_source.hpp"
#include "colflow/preprocess/converter.hpp"
#include "shared_data.hpp"
#include "test_support.hpp"

namespace colflow::preprocess_tests {

inline std::string prefix(const std::string& name) { return test::dataset(name); }

inline store convert_to(const std::string& bed_prefix, const std::filesystem::path& out,
                        preprocess::codec_choice codec, value_type dtype = value_type::float64,
                        bool shuffle = false, bool standardize = true) {
  preprocess::bed_source source(preprocess::plink_paths::from_prefix(bed_prefix));
  preprocess::convert_options o;
  o.out = out;
  o.codec = codec;
  o.dtype = dtype;
  o.shuffle = shuffle;
  o.standardize = standardize;
  preprocess::convert(source, o);
  return store::open(out, {access_mode::mmap, true});
}

// A staged output's temporary (.NAME.tmp-HOST-PID-RANDOM, colflow/io/staged_output.hpp) in
// `dir`, or a NAME.tmp of older versions.
inline bool has_temporaries(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".tmp" || name.find(".tmp-") != std::string::npos) return true;
  }
  return false;
}

}  // namespace colflow::preprocess_tests
