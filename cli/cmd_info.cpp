// colflow info: a store's shape, codecs, sizes and ratio, as text or JSON.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "colflow/colflow.hpp"
#include "commands.hpp"

namespace colflow::cli {

command add_info(CLI::App& app) {
  struct options {
    std::string store;
    bool json = false;
  };
  auto o = std::make_shared<options>();
  app.add_option("STORE", o->store, "The store directory")->required();
  app.add_flag("--json", o->json,
               "Print one JSON object (keys: path, format_version, store_id, rows, columns,\n"
               "value_type, codecs, data_bytes, index_bytes, decoded_bytes, float64_bytes,\n"
               "compression_ratio, ratio_vs_float64, source; and ld for an LD store: kind,\n"
               "samples, values)");
  app.footer(
      "decoded_bytes is the payload the frames decode to (2-bit codes for a genotype store,\n"
      "16-bit dosages for a dosage store);\n"
      "float64_bytes is the same matrix held as doubles, what analyses would otherwise read.");
  return [o] {
    const store s = store::open(o->store);
    const store_summary sum = s.summary();
    const double float64_bytes = sum.float64_bytes();
    const double ratio = sum.compression_ratio();
    const double ratio64 = sum.ratio_vs_float64();
    nlohmann::ordered_json codecs = nlohmann::ordered_json::object();
    std::string codec_text;
    for (const codec_traits& t : all_codecs()) {
      const auto n = sum.columns_per_codec[static_cast<std::uint8_t>(t.id)];
      if (n == 0) continue;
      codecs[std::string(t.name)] = n;
      codec_text +=
          (codec_text.empty() ? "" : ", ") + std::string(t.name) + " " + std::to_string(n);
    }
    // An LD store (docs/FORMAT.md §13): its kind, samples and values held.
    std::optional<ld_matrix> ld;
    const auto attached = s.attached_files();
    if (std::find(attached.begin(), attached.end(), "ld.json") != attached.end())
      ld.emplace(ld_matrix::open(o->store));
    if (o->json) {
      nlohmann::ordered_json j;
      j["path"] = o->store;
      j["format_version"] =
          std::to_string(format_version_major) + "." + std::to_string(s.version_minor());
      j["store_id"] = s.store_id_text();
      j["rows"] = sum.rows;
      j["columns"] = sum.columns;
      j["value_type"] = value_type_name(sum.type);
      j["codecs"] = codecs;
      j["data_bytes"] = sum.data_bytes;
      j["index_bytes"] = sum.index_bytes;
      j["decoded_bytes"] = sum.decoded_bytes;
      j["float64_bytes"] = static_cast<std::uint64_t>(float64_bytes);
      j["compression_ratio"] = ratio;
      j["ratio_vs_float64"] = ratio64;
      j["source"] = sum.source;
      if (ld)
        j["ld"] = {{"kind", ldm_kind_name(ld->kind())},
                   {"samples", ld->samples()},
                   {"values", ld->values()}};
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    char line[256];
    std::cout << "store        " << o->store << "\n";
    std::cout << "rows         " << sum.rows << "\n";
    std::cout << "columns      " << sum.columns << "\n";
    std::cout << "value type   " << value_type_name(sum.type) << "\n";
    std::cout << "codecs       " << (codec_text.empty() ? "-" : codec_text) << "\n";
    std::cout << "data         " << human_bytes(static_cast<double>(sum.data_bytes)) << " ("
              << sum.data_bytes << " bytes)\n";
    std::cout << "index        " << human_bytes(static_cast<double>(sum.index_bytes)) << " ("
              << sum.index_bytes << " bytes)\n";
    std::cout << "decoded      " << human_bytes(static_cast<double>(sum.decoded_bytes))
              << " of payload, " << human_bytes(float64_bytes) << " as float64\n";
    std::snprintf(line, sizeof line,
                  "ratio        %.3fx against the payload, %.2fx against float64\n", ratio,
                  ratio64);
    std::cout << line;
    std::cout << "source       " << (sum.source.empty() ? "-" : sum.source) << "\n";
    std::cout << "store id     " << s.store_id_text() << "\n";
    if (ld)
      std::cout << "ld matrix    " << ldm_kind_name(ld->kind()) << ", r over " << ld->samples()
                << " samples, " << ld->values() << " values held\n";
    return 0;
  };
}

}  // namespace colflow::cli
