// What the PLINK 2 reader's tests share: the plink2 check, the expected-error check, and a
// writer of small hand-made .pgen filesets (storage mode 0x10, 8-bit record types, 1-byte
// lengths) whose every byte the test chooses.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "colflow/colflow.hpp"
#include "colflow/preprocess/pgen_source.hpp"
#include "test_support.hpp"

namespace colflow {

inline bool plink2_present() {
  std::string out;
  return test::run_command("plink2 --version", out) == 0;
}

#define REQUIRE_PLINK2()                     \
  if (!::colflow::plink2_present())          \
  GTEST_SKIP() << "plink2 is not installed " \
                  "(scripts/install-deps.sh installs it): the comparison is skipped"

// `f` throws colflow::error bad_input whose message holds every one of `parts`.
inline void expect_bad_input(const std::function<void()>& f,
                             const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming " << parts.front();
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::bad_input)) << e.what();
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "'" << p << "' not in: " << e.what();
  }
}

inline void expect_bad_input(const std::function<void()>& f, const std::string& a,
                             const std::string& b) {
  expect_bad_input(f, std::vector<std::string>{a, b});
}

// One record of a hand-made .pgen: its type and bytes.
struct pgen_record {
  std::uint8_t type;
  std::vector<std::uint8_t> bytes;
};

// Writes PREFIX.pgen (mode 0x10, one block, header format byte 0x04), PREFIX.pvar (variants
// v0, v1, ... on chromosome 1, REF A, ALT C) and PREFIX.psam (#FID IID SEX, samples f0 s0, ...
// of alternating sex) for `samples` samples. Returns the .pgen's bytes.
inline std::vector<std::uint8_t> write_pgen_fileset(const std::string& prefix,
                                                    std::uint32_t samples,
                                                    const std::vector<pgen_record>& records) {
  const auto m = static_cast<std::uint32_t>(records.size());
  std::vector<std::uint8_t> b = {0x6c, 0x1b, 0x10};
  auto u32 = [&](std::uint32_t v) {
    for (int k = 0; k < 4; ++k) b.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  };
  u32(m);
  u32(samples);
  b.push_back(0x04);
  const std::uint64_t first = 12 + 8 + 2 * std::uint64_t{m};
  for (int k = 0; k < 8; ++k) b.push_back(static_cast<std::uint8_t>(first >> (8 * k)));
  for (const pgen_record& r : records) b.push_back(r.type);
  for (const pgen_record& r : records) b.push_back(static_cast<std::uint8_t>(r.bytes.size()));
  for (const pgen_record& r : records) b.insert(b.end(), r.bytes.begin(), r.bytes.end());
  std::ofstream(prefix + ".pgen", std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  std::ofstream pvar(prefix + ".pvar");
  pvar << "##fileformat=PVARv1.0\n#CHROM\tPOS\tID\tREF\tALT\n";
  for (std::uint32_t j = 0; j < m; ++j) pvar << "1\t" << 100 + j << "\tv" << j << "\tA\tC\n";
  std::ofstream psam(prefix + ".psam");
  psam << "#FID\tIID\tSEX\n";
  for (std::uint32_t i = 0; i < samples; ++i)
    psam << "f" << i << "\ts" << i << "\t" << (i % 2 ? "F" : "1") << "\n";
  return b;
}

}  // namespace colflow
