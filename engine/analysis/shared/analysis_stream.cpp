// How an analysis opens its column stream (analysis_stream_internal.hpp).
#include <utility>

#include "analysis/shared/analysis_stream_internal.hpp"

namespace colflow::detail {
namespace {

stream_options stored_values(const analysis_options& analysis, bool decode_values) {
  stream_options so = analysis.stream;
  so.values = decode_as::stored;
  so.decode_values = decode_values;
  return so;
}

}  // namespace

analysis_stream::analysis_stream(const store& s, const analysis_options& analysis,
                                 bool decode_values, std::string first_label)
    : label(std::move(first_label)), columns(s, stored_values(analysis, decode_values)) {
  if (analysis.progress)
    columns.on_progress([this, &analysis](const pass_progress& p) { analysis.progress(label, p); });
}

}  // namespace colflow::detail
