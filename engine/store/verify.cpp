// colflow::verify: every checksum and every frame's decode of a store, with progress.
#include "colflow/store/verify.hpp"

#include <chrono>
#include <vector>

namespace colflow {

verify_report verify(const store& s, const std::function<void(const verify_progress&)>& progress) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last_report = start;
  const auto since_start = [&](clock::time_point t) {
    return std::chrono::duration<double>(t - start).count();
  };
  // The lists are parsed lazily by the store: a damaged samples.tsv or columns.tsv would
  // otherwise go unnoticed until an analysis needs them. Their checksums are checked again
  // on the bytes as they are now (they may have been parsed before, or changed since open).
  verify_report report;
  s.verify_list_checksums();
  report.list_checksums = s.has_list_checksums();
  s.samples();
  s.columns();
  report.columns = s.num_columns();
  report.rows = s.num_rows();
  std::vector<double> values(s.num_rows());
  for (std::size_t j = 0; j < s.num_columns(); ++j) {
    s.verify_checksum(j);
    s.read_column(j, values, decode_as::stored);
    report.frame_bytes += s.entry(j).frame_size;
    if (progress) {
      const auto now = clock::now();
      // Reading the clock per column is cheap next to decoding one; calling back is not.
      if (j + 1 == s.num_columns() || now - last_report >= std::chrono::milliseconds(100)) {
        last_report = now;
        progress({j + 1, report.columns, report.frame_bytes, since_start(now)});
      }
    }
  }
  report.seconds = since_start(clock::now());
  return report;
}

}  // namespace colflow
