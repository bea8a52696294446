// PLINK 2 input (colflow/preprocess/pgen_source.hpp): the .psam, .pvar and .pgen header read
// and checked when opened; the .pgen mapped, and each record fetched as a view of its bytes
// with the record an LD-compressed one refers to, so that decoding needs no shared state and
// runs on any thread.
#include "colflow/preprocess/pgen_source.hpp"

#include <array>
#include <atomic>
#include <cstring>

#include "colflow/codec/genotype_codec.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "pgen_reader.hpp"

namespace colflow::preprocess {

using detail::pgen::pgen_index;
using detail::pgen::record_view;

namespace {

bool file_exists(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec);
}

// What fetch returns: views of record j and, for an LD-compressed one, of its reference
// record, in the source's mapping of the .pgen (valid while the source lives).
struct pgen_fetched final : column_source::fetched {
  const pgen_source* source = nullptr;
  std::uint64_t j = 0, reference = 0;
  std::uint8_t type = 0, reference_type = 0;
  std::span<const std::uint8_t> bytes, reference_bytes;
  std::size_t size() const noexcept override { return bytes.size() + reference_bytes.size(); }
};

bool ld_compressed(std::uint8_t type) {
  const unsigned main = type & detail::pgen::type_main_mask;
  return main == 2 || main == 3;
}

}  // namespace

pgen_paths pgen_paths::from_prefix(const std::string& prefix) {
  std::string p = prefix;
  if (p.size() > 5 && p.compare(p.size() - 5, 5, ".pgen") == 0) p.resize(p.size() - 5);
  const std::filesystem::path pvar = p + ".pvar";
  return {p + ".pgen",
          !file_exists(pvar) && file_exists(p + ".pvar.zst")
              ? std::filesystem::path(p + ".pvar.zst")
              : pvar,
          p + ".psam"};
}

struct pgen_source::state {
  file_descriptor fd;
  // The whole .pgen, read in order; a file that shrinks under it reads zeros and is reported
  // after the decode that touched the lost pages (check_intact).
  mapped_file map;
  // Bytes of the mapping before this are out of the process's resident memory (fetch).
  std::uint64_t dropped_to = 0;
  // Tells this source from any other in the threads' reference caches (decode_categories).
  std::uint64_t id = next_id.fetch_add(1, std::memory_order_relaxed);
  static inline std::atomic<std::uint64_t> next_id{1};
  pgen_index index;
  mutable std::unique_ptr<detail::pgen::pvar_reader> pvar;
  mutable std::uint64_t next_column = 0;
};

pgen_source::pgen_source(const pgen_paths& paths)
    : paths_(paths), state_(std::make_unique<state>()) {
  if (!file_exists(paths.pgen))
    throw error(errc::not_found, "missing .pgen file " + paths.pgen.string());
  samples_ = detail::pgen::read_psam(paths.psam);
  const std::uint64_t listed = detail::pgen::count_pvar(paths.pvar);
  state& s = *state_;
  s.fd = open_read(paths.pgen);
  s.index = detail::pgen::read_pgen_index(paths.pgen, s.fd, s.fd.size(), samples_.size(), listed,
                                          paths.pvar);
  s.map = mapped_file(s.fd, access_hint::sequential);
  variants_ = s.index.variants;
  for (const std::uint8_t t : s.index.types) {
    if (t & detail::pgen::type_dosage_mask) kind_ = value_type::dosage;
    if (t & (detail::pgen::type_phase | detail::pgen::type_dosage_phase)) ++phased_variants_;
  }
  s.pvar = std::make_unique<detail::pgen::pvar_reader>(paths.pvar);
}

pgen_source::~pgen_source() = default;

std::uint8_t pgen_source::storage_mode() const noexcept { return state_->index.mode; }

std::vector<std::uint64_t> pgen_source::record_types() const {
  std::vector<std::uint64_t> counts(256, 0);
  for (const std::uint8_t t : state_->index.types) ++counts[t];
  return counts;
}

std::string pgen_source::description() const { return "PLINK 2 .pgen " + paths_.pgen.string(); }

std::vector<std::string> pgen_source::notes() const {
  if (phased_variants_ == 0) return {};
  return {paths_.pgen.filename().string() + ": dropped the phase of " +
          std::to_string(phased_variants_) + " variants (colflow stores unphased values)"};
}

column_info pgen_source::column(std::uint64_t j) const {
  const state& s = *state_;
  if (j != s.next_column)
    throw error(errc::invalid_argument, "pgen_source: columns must be read in order");
  column_info c;
  if (!s.pvar->next(c))
    throw input_error(paths_.pvar, "ends before variant " + std::to_string(j) + " (it shrank)");
  ++s.next_column;
  return c;
}

std::unique_ptr<column_source::fetched> pgen_source::fetch(std::uint64_t j) {
  check_read(j, samples_.size());
  const state& s = *state_;
  auto f = std::make_unique<pgen_fetched>();
  f->source = this;
  f->j = j;
  f->type = s.index.types[j];
  // The header check guarantees every record inside the file as it was opened.
  const auto* file = reinterpret_cast<const std::uint8_t*>(s.map.bytes().data());
  auto record = [&](std::uint64_t k) {
    return std::span(file + s.index.starts[k], s.index.starts[k + 1] - s.index.starts[k]);
  };
  f->bytes = record(j);
  drop_behind(s.index.starts[j]);
  if (ld_compressed(f->type)) {
    // The most recent record that is not LD-compressed; the header check guarantees one in
    // the same block of 2^16 variants.
    std::uint64_t k = j;
    while (k > 0 && ld_compressed(s.index.types[k - 1])) --k;
    f->reference = k - 1;
    f->reference_type = s.index.types[k - 1];
    f->reference_bytes = record(k - 1);
  }
  return f;
}

void pgen_source::drop_behind(std::uint64_t position) {
  // The pages well before what is fetched now were decoded long ago: out of the resident set
  // (they stay in the page cache), so that reading a biobank's .pgen does not grow the process
  // by the file's size. Only a hint: a page still being read is mapped again, unchanged.
  constexpr std::uint64_t behind = std::uint64_t{32} << 20, step = std::uint64_t{64} << 20;
  state& s = *state_;
  if (position < s.dropped_to + behind + step) return;
  s.map.drop(s.dropped_to, position - behind - s.dropped_to);
  s.dropped_to = position - behind;
}

namespace {

// The categories of the reference record a thread decoded last, kept because the LD-compressed
// records that follow it in the file all refer to it: each thread decodes it once rather than
// once per record.
struct reference_cache {
  std::uint64_t source_id = 0, reference = 0;
  std::vector<std::uint8_t> categories;
};

// The main track of a fetched record, as 2-bit categories; returns where it ends.
std::size_t decode_categories(const std::filesystem::path& file, std::uint64_t source_id,
                              const pgen_fetched& f, std::uint64_t samples,
                              std::span<std::uint8_t> cats) {
  std::span<const std::uint8_t> reference;
  if (ld_compressed(f.type)) {
    thread_local reference_cache cache;
    if (cache.source_id != source_id || cache.reference != f.reference ||
        cache.categories.size() != cats.size()) {
      cache.source_id = 0;  // not valid until decoded: the decode may throw
      cache.categories.resize(cats.size());
      detail::pgen::decode_main_track(file, {f.reference_bytes, f.reference_type, f.reference},
                                      samples, {}, cache.categories);
      cache.source_id = source_id;
      cache.reference = f.reference;
    }
    reference = cache.categories;
  }
  return detail::pgen::decode_main_track(file, {f.bytes, f.type, f.j}, samples, reference, cats);
}

const pgen_fetched& own(const pgen_source* self, const column_source::fetched& raw) {
  const auto* f = dynamic_cast<const pgen_fetched*>(&raw);
  if (!f || f->source != self)
    throw error(errc::invalid_argument, self->description() + ": a column fetched elsewhere");
  return *f;
}

}  // namespace

void pgen_source::decode_genotypes(const fetched& raw, std::span<std::uint8_t> codes) const {
  const pgen_fetched& f = own(this, raw);
  const std::uint64_t n = samples_.size(), bytes = genotype_column_bytes(n);
  if (codes.size() < bytes) throw error(errc::invalid_argument, description() + ": bad buffer");
  if (state_->index.mode == detail::pgen::mode_bed) {  // PLINK 1 codes already
    std::memcpy(codes.data(), f.bytes.data(), bytes);
    if (n % 4) codes[n / 4] &= static_cast<std::uint8_t>((1u << (2 * (n % 4))) - 1);
    check_intact();
    return;
  }
  try {
    decode_categories(paths_.pgen, state_->id, f, n, codes.first(bytes));
  } catch (const error&) {
    check_intact();  // zeros read past a new end are no malformed record
    throw;
  }
  detail::pgen::categories_to_bed_codes(codes.first(bytes), n);
  check_intact();
}

void pgen_source::decode_dosages(const fetched& raw, std::span<std::uint16_t> dosages) const {
  const pgen_fetched& f = own(this, raw);
  const std::uint64_t n = samples_.size();
  if (dosages.size() != n) throw error(errc::invalid_argument, description() + ": bad buffer");
  thread_local std::vector<std::uint8_t> cats;
  cats.resize(genotype_column_bytes(n));
  try {
    const std::size_t main_end = decode_categories(paths_.pgen, state_->id, f, n, cats);
    detail::pgen::decode_dosages(paths_.pgen, {f.bytes, f.type, f.j}, n, main_end, cats, dosages);
  } catch (const error&) {
    check_intact();  // zeros read past a new end are no malformed record
    throw;
  }
  check_intact();
}

void pgen_source::check_intact() const {
  if (state_->map.damaged())
    throw error(errc::io_error, paths_.pgen.string() +
                                    ": the file shrank while it was being read (truncated or "
                                    "rewritten by another program?)");
}

void pgen_source::read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) {
  check_read(j, samples_.size());
  decode_genotypes(*fetch(j), codes);
}

void pgen_source::read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) {
  check_read(j, dosages.size());
  decode_dosages(*fetch(j), dosages);
}

}  // namespace colflow::preprocess
