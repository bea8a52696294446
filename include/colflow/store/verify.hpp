/// @file verify.hpp
/// Checking a whole store (`colflow verify`): every checksum and every frame's decode.
#pragma once

#include <cstdint>
#include <functional>

#include "colflow/store/store.hpp"

namespace colflow {

/// How far a verification has got.
struct verify_progress {
  std::uint64_t columns_done = 0, columns_total = 0;
  std::uint64_t frame_bytes = 0;  ///< bytes of the frames checked so far
  double seconds = 0;             ///< since verify() started
};

/// What a verification checked.
struct verify_report {
  std::uint64_t columns = 0, rows = 0;
  std::uint64_t frame_bytes = 0;  ///< bytes of every frame, all checked
  double seconds = 0;             ///< wall time of the checks (the store was open before)
  /// samples.tsv and columns.tsv were checked against the manifest's checksums; false for a
  /// store older than format 1.3, which records none (its lists were only parsed).
  bool list_checksums = false;
};

/// Checks an open store: checks samples.tsv and columns.tsv against the manifest's checksums
/// (format 1.3 and later) and parses them, then for every column in order checks the frame's
/// XXH3-64 checksum and decodes it (the stored values). Headers and index
/// entries were validated by store::open. `progress`, when set, is called on the calling
/// thread about ten times a second and after the last column. Throws colflow::error for the
/// first problem, naming the column or the file: checksum_mismatch, corrupt_frame, io_error, and
/// the sample and column lists' parse errors.
verify_report verify(const store& s,
                     const std::function<void(const verify_progress&)>& progress = {});

}  // namespace colflow
