// The text parts of a store, written and parsed: samples.tsv, columns.tsv, manifest.json.
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <new>
#include <nlohmann/json.hpp>
#include <string_view>

#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "colflow/store/chromosome.hpp"
#include "colflow/version.hpp"
#include "store/format_internal.hpp"
#include "store/store_text_internal.hpp"

namespace colflow::detail {
namespace {

void append_field(std::string& line, const std::string& field, bool first) {
  if (field.find_first_of("\t\n\r") != std::string::npos)
    throw error(errc::invalid_argument,
                "field '" + field + "' holds a tab or line break, which a store cannot keep");
  if (!first) line += '\t';
  line += field;
}

// The records of a table of exactly 6 tab-separated fields after a '#' header line, each made
// from its six fields straight from the text (a store of a biobank lists hundreds of thousands
// of samples and millions of columns, and every analysis reads one of the lists before its
// first column). Record: an aggregate of six strings (sample_info, column_info).
template <typename Record>
std::vector<Record> parse_table(const std::filesystem::path& file, std::string_view expected_header,
                                std::uint64_t expected_records, const char* what_counted,
                                std::optional<std::uint64_t> checksum) {
  const std::string text = read_text_file(file);
  if (checksum) check_list_checksum(file, *checksum, checksum64(std::as_bytes(std::span(text))));
  std::vector<Record> records;
  records.reserve(expected_records);
  std::array<std::string_view, 6> fields;
  const char* const end = text.data() + text.size();
  const char* at = text.data();
  std::size_t line_no = 0;
  while (at < end) {
    ++line_no;
    // One scan of the line's bytes for its tabs and its end (a call per field to find them
    // cost more than the scan on fields this short).
    const char* start = at;
    std::size_t f = 0;
    bool too_many = false;
    for (; at < end && *at != '\n'; ++at) {
      if (*at != '\t') continue;
      if (f == 5) too_many = true;
      if (f < 5) fields[f] = std::string_view(start, static_cast<std::size_t>(at - start));
      ++f;
      start = at + 1;
    }
    const std::string_view line_end(start, static_cast<std::size_t>(at - start));
    const char* const line_stop = at;
    if (at < end) ++at;  // past the line break
    if (line_no == 1) {
      const std::string_view line(text.data(), static_cast<std::size_t>(line_stop - text.data()));
      if (line != expected_header)
        throw error(errc::mismatched_store, "bad header line, expected '" +
                                                std::string(expected_header) + "' (" +
                                                file.string() + ")");
      continue;
    }
    if (f != 5 || too_many)
      throw error(errc::mismatched_store, "line " + std::to_string(line_no) +
                                              ": expected 6 tab-separated fields (" +
                                              file.string() + ")");
    fields[5] = line_end;
    records.push_back({std::string(fields[0]), std::string(fields[1]), std::string(fields[2]),
                       std::string(fields[3]), std::string(fields[4]), std::string(fields[5])});
  }
  if (records.size() != expected_records)
    throw error(errc::mismatched_store, std::to_string(records.size()) + " " + what_counted +
                                            " listed, but the index has " +
                                            std::to_string(expected_records) + " (" +
                                            file.string() + ")");
  return records;
}

}  // namespace

std::string format_samples(const std::vector<sample_info>& samples) {
  std::string text = std::string(samples_header) + '\n';
  for (const sample_info& s : samples) {
    append_field(text, s.fid, true);
    append_field(text, s.iid, false);
    append_field(text, s.father, false);
    append_field(text, s.mother, false);
    append_field(text, s.sex, false);
    append_field(text, s.phenotype, false);
    text += '\n';
  }
  return text;
}

std::string format_column_line(const column_info& c) {
  std::string line;
  append_field(line, c.chrom, true);
  append_field(line, c.id, false);
  append_field(line, c.cm, false);
  append_field(line, c.pos, false);
  append_field(line, c.a1, false);
  append_field(line, c.a2, false);
  line += '\n';
  return line;
}

std::vector<sample_info> read_samples(const std::filesystem::path& file, std::uint64_t rows,
                                      std::optional<std::uint64_t> checksum) {
  return parse_table<sample_info>(file, samples_header, rows, "samples", checksum);
}

std::vector<column_info> read_columns(const std::filesystem::path& file, std::uint64_t columns,
                                      std::optional<std::uint64_t> checksum) {
  std::vector<column_info> out =
      parse_table<column_info>(file, columns_header, columns, "columns", checksum);
  // A store written before the importers normalised codes (PLINK 1's 23 for X) reads as a new
  // store of the same input: every analysis, table and export sees the code of today. The
  // checksum above is of the bytes on disk, which stay as written.
  for (column_info& c : out) c.chrom = normalize_chromosome(c.chrom);
  return out;
}

std::vector<chromosome_run> read_chromosome_runs(const std::filesystem::path& file,
                                                 std::uint64_t columns,
                                                 std::optional<std::uint64_t> checksum) {
  const std::string text = read_text_file(file);
  if (checksum) check_list_checksum(file, *checksum, checksum64(std::as_bytes(std::span(text))));
  const std::string_view all(text);
  const std::size_t header_end = std::min(all.find('\n'), all.size());
  if (all.substr(0, header_end) != columns_header)
    throw error(
        errc::mismatched_store,
        "bad header line, expected '" + std::string(columns_header) + "' (" + file.string() + ")");
  std::vector<chromosome_run> runs;
  std::string_view last;  // the run's code as written
  std::size_t column = 0;
  for (std::size_t at = header_end + 1; at < all.size(); ++column) {
    std::size_t end = all.find('\n', at);
    if (end == std::string_view::npos) end = all.size();
    const std::string_view line = all.substr(at, end - at);
    const std::string_view chrom = line.substr(0, line.find('\t'));
    if (runs.empty() || chrom != last) {  // a new code, or another spelling of the same
      std::string code = normalize_chromosome(chrom);
      if (runs.empty() || code != runs.back().chrom) runs.push_back({std::move(code), column, 0});
      last = chrom;
    }
    ++runs.back().count;
    at = end + 1;
  }
  if (column != columns)
    throw error(errc::mismatched_store, std::to_string(column) +
                                            " columns listed, but the index has " +
                                            std::to_string(columns) + " (" + file.string() + ")");
  return runs;
}

checksum_stream::checksum_stream() : state_(XXH3_createState()) {
  if (!state_) throw std::bad_alloc();
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

checksum_stream::~checksum_stream() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void checksum_stream::update(std::span<const std::byte> bytes) noexcept {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

void checksum_stream::update(std::string_view text) noexcept {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), text.data(), text.size());
}

std::uint64_t checksum_stream::digest() const noexcept {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_));
}

std::uint64_t checksum_file(const std::filesystem::path& file) {
  const file_descriptor fd = open_read(file);
  const std::uint64_t size = fd.size();
  // Small lists hash in one piece; a long columns.tsv in pieces of bounded memory.
  std::vector<std::byte> buffer(static_cast<std::size_t>(std::min<std::uint64_t>(size, 1 << 20)));
  checksum_stream hash;
  for (std::uint64_t done = 0; done < size;) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(size - done, buffer.size()));
    fd.pread_exact(std::span(buffer).first(n), done);
    hash.update(std::span<const std::byte>(buffer).first(n));
    done += n;
  }
  return hash.digest();
}

namespace {

std::string checksum_hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace

void check_list_checksum(const std::filesystem::path& file, std::uint64_t recorded,
                         std::uint64_t computed) {
  if (recorded == computed) return;
  throw error(errc::checksum_mismatch, "checksum mismatch: " + file.filename().string() + " (" +
                                           file.string() + "): recorded 0x" +
                                           checksum_hex(recorded) + ", computed 0x" +
                                           checksum_hex(computed));
}

std::string store_id_hex(const std::array<std::uint8_t, 16>& id) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : id) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::string format_manifest(const std::array<std::uint8_t, 16>& id, std::uint16_t minor,
                            const store_summary& sum, const list_checksums& checksums) {
  nlohmann::ordered_json j;
  j["format"] = "colflow store";
  j["format_version"] = std::to_string(format_version_major) + "." + std::to_string(minor);
  j["store_id"] = store_id_hex(id);
  j["rows"] = sum.rows;
  j["columns"] = sum.columns;
  j["value_type"] = value_type_name(sum.type);
  nlohmann::ordered_json codecs = nlohmann::ordered_json::object();
  for (const codec_traits& t : all_codecs())
    if (sum.columns_per_codec[static_cast<std::uint8_t>(t.id)] > 0)
      codecs[std::string(t.name)] = sum.columns_per_codec[static_cast<std::uint8_t>(t.id)];
  j["codecs"] = codecs;
  j["data_bytes"] = sum.data_bytes;
  j["index_bytes"] = sum.index_bytes;
  j["decoded_bytes"] = sum.decoded_bytes;
  nlohmann::ordered_json sums = nlohmann::ordered_json::object();
  sums[samples_file_name] = checksum_hex(checksums.samples);
  sums[columns_file_name] = checksum_hex(checksums.columns);
  for (const auto& [name, hash] : checksums.attached) sums[name] = checksum_hex(hash);
  j["checksums"] = sums;
  j["source"] = sum.source;
  j["created_by"] = "colflow " + std::string(version());
  return j.dump(2) + "\n";
}

void check_attached_name(const std::string& name, errc code) {
  const bool plain = !name.empty() && name.size() <= 255 && name[0] != '.' &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
                     });
  const bool reserved = name == samples_file_name || name == columns_file_name ||
                        name == manifest_file_name || name == data_file_name ||
                        name == index_file_name || name == "columns.idx.partial";
  if (!plain || reserved)
    throw error(code, "'" + name +
                          "' cannot name a file attached to a store (a plain file name of "
                          "letters, digits, '.', '_' and '-', other than the store's own files)");
}

manifest read_manifest(const std::filesystem::path& file) {
  const std::string text = read_text_file(file);
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw error(errc::corrupt_header, "manifest is not valid JSON (" + file.string() + ")");
  manifest m;
  const auto id = j.find("store_id");
  const auto source = j.find("source");
  if (id == j.end() || !id->is_string() || id->get<std::string>().size() != 32)
    throw error(errc::corrupt_header, "manifest has no valid store_id (" + file.string() + ")");
  const std::string hex = id->get<std::string>();
  for (std::size_t i = 0; i < 16; ++i) {
    const auto nibble = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      throw error(errc::corrupt_header, "manifest store_id is not hex (" + file.string() + ")");
    };
    m.store_id[i] = static_cast<std::uint8_t>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
  }
  if (source != j.end() && source->is_string()) m.source = source->get<std::string>();
  // The list checksums (since 1.3): damage here must not pass for an absent checksum.
  const auto sums = j.find("checksums");
  if (sums == j.end()) return m;
  if (!sums->is_object())
    throw error(errc::corrupt_header,
                "manifest key \"checksums\" is not an object (" + file.string() + ")");
  const auto recorded = [&](const char* name) -> std::optional<std::uint64_t> {
    const auto it = sums->find(name);
    if (it == sums->end()) return std::nullopt;
    const std::string digits = it->is_string() ? it->get<std::string>() : std::string();
    const bool hex16 = digits.size() == 16 && std::all_of(digits.begin(), digits.end(), [](char c) {
                         return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                       });
    if (!hex16)
      throw error(errc::corrupt_header, "manifest checksum of " + std::string(name) +
                                            " is not 16 lowercase hex digits (" + file.string() +
                                            ")");
    std::uint64_t value = 0;
    for (const char c : digits)
      value = (value << 4) | static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    return value;
  };
  m.samples_checksum = recorded(samples_file_name);
  m.columns_checksum = recorded(columns_file_name);
  for (const auto& item : sums->items()) {
    if (item.key() == samples_file_name || item.key() == columns_file_name) continue;
    try {
      check_attached_name(item.key(), errc::corrupt_header);
    } catch (const error& e) {
      throw error(errc::corrupt_header,
                  "manifest checksums: " + std::string(e.what()) + " (" + file.string() + ")");
    }
    m.attached.emplace_back(item.key(), *recorded(item.key().c_str()));
  }
  return m;
}

}  // namespace colflow::detail
