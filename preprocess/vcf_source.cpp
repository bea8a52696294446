// VCF and BCF input through htslib (colflow/preprocess/vcf_source.hpp): the column_source, its
// construction (the header and the counting pass) and its streaming pass. The values follow
// PLINK 2.00a3.5's VCF import, checked against plink2 itself by tests/vcf_source_test.cpp. The
// parts it is made of are listed in vcf_reader.hpp.
#include "colflow/preprocess/vcf_source.hpp"

#include <new>
#include <utility>

#include "colflow/codec/genotype_codec.hpp"
#include "vcf_reader.hpp"

namespace colflow::preprocess {

using detail::bad;
using detail::dosage_field;
using detail::field_name;
using detail::quiet_htslib;

// The streaming pass (vcf_reader.hpp).
struct vcf_source::state : detail::record_stream {};

// What fetch returns: a record and the column's ALT allele in it.
struct vcf_source::fetched_column final : column_source::fetched {
  std::shared_ptr<const detail::fetched_record> record;
  int alt = 1;  // 1-based
  std::size_t size() const noexcept override {
    return record->text.s.l + record->gt.bytes.size() + record->dosage.bytes.size();
  }
};

// ---- The streaming pass --------------------------------------------------------------------

namespace detail {

std::string record_stream::site_text() const {
  const bcf1_t* rec = record.get();
  return std::string(bcf_seqname_safe(header.get(), rec)) + ":" + std::to_string(rec->pos + 1) +
         " " + rec->d.id;
}

std::string record_stream::where() const {
  if (is_bcf) return "record " + std::to_string(record_index) + " (" + site_text() + ")";
  return "line " + std::to_string(line_number) + " (record " + std::to_string(record_index) + ", " +
         site_text() + ")";
}

void record_stream::seek(std::uint64_t j) {
  if (j >= columns)
    throw error(errc::invalid_argument, "vcf_source: column " + std::to_string(j) +
                                            " is past the last column " +
                                            std::to_string(columns - 1));
  if (!file) {
    file_ptr f = open_input(*options);
    header_ptr h(bcf_hdr_read(f.get()));
    if (!h || bcf_hdr_nsamples(h.get()) != samples)
      fail("the header changed since the file was opened");
    record.reset(bcf_init());
    header = std::move(h);
    file = std::move(f);
  }
  if (record_index > 0 && j < first_column)
    throw error(errc::invalid_argument,
                "vcf_source: column " + std::to_string(j) + " asked for after column " +
                    std::to_string(first_column) +
                    "; the file is streamed, columns must be read in increasing order");
  while (record_index == 0 || j >= first_column + record_columns) advance();
}

void record_stream::advance() {
  first_column += record_columns;
  ++record_index;
  fetched.reset();
  // BCF is read a record at a time. VCF text is read a line at a time: htslib parses the
  // fixed fields (and, once for each new FORMAT, the FORMAT), the decoder the samples.
  int ret;
  if (is_bcf) {
    ret = bcf_read(file.get(), header.get(), record.get());
  } else {
    ret = read_line(file.get(), &line.s);
    if (ret >= 0) {
      line_number = static_cast<std::uint64_t>(file->lineno);
      ret = parse_site();
    }
  }
  if (ret == -1)
    fail("the file ended at record " + std::to_string(record_index) + ", the first reading found " +
         std::to_string(records) + " records (did the file change?)");
  if (ret < -1 || (record->errcode & fatal_record_errors)) {
    const std::string at = is_bcf ? "record " + std::to_string(record_index)
                                  : "line " + std::to_string(line_number) + " (record " +
                                        std::to_string(record_index) + ")";
    const std::string why = record_error_text(record->errcode);
    fail(at + ": htslib cannot parse it" + (why.empty() ? "" : " (" + why + ")"));
  }
  bcf_unpack(record.get(), BCF_UN_STR);
  const int alts = std::max(record->n_allele - 1, 0);
  if (alts > 1 && !options->split_multiallelic)
    fail(where() + ": has " + std::to_string(alts) + " ALT alleles (did the file change?)");
  record_columns = options->split_multiallelic ? std::max(alts, 1) : 1;
  if (first_column + record_columns > columns)
    fail(where() + ": more columns than the first reading found (did the file change?)");
}

const std::shared_ptr<const fetched_record>& record_stream::fetch() {
  if (fetched) return fetched;
  auto f = std::make_shared<fetched_record>();
  f->record = record_index;
  f->line = line_number;
  f->n_allele = record->n_allele;
  if (!is_bcf) {
    // A copy of the line: fetch reads the next one into the same buffer.
    if (kputsn(line.s.s, line.s.l, &f->text.s) < 0) throw std::bad_alloc();
    f->samples_at = samples_at;
    f->layout = layout;
  } else {
    fetch_stored_fields(*f);
  }
  fetched = std::move(f);
  return fetched;
}

}  // namespace detail

// ---- The column_source -------------------------------------------------------------------

vcf_source::vcf_source(const vcf_options& options)
    : options_(options), state_(std::make_unique<state>()) {
  const quiet_htslib quiet;
  detail::file_ptr file = detail::open_input(options_);
  is_bcf_ = hts_get_format(file.get())->format == bcf;
  detail::header_ptr header = detail::read_header(file.get(), options_.path);
  samples_ = detail::header_samples(header.get(), options_.path);
  detail::check_dosage_field(header.get(), options_);
  const int n = static_cast<int>(samples_.size());

  // The counting pass: the record structure only, no genotypes parsed.
  const detail::record_count count =
      is_bcf_ ? detail::count_bcf_records(file.get(), header.get(), options_, n)
              : detail::count_text_records(file.get(), options_, n);
  columns_ = count.columns;
  records_ = count.records;
  if (records_ == 0) bad(options_.path, "no records: the file has a header but no variant");
  state_->options = &options_;
  state_->samples = n;
  state_->columns = columns_;
  state_->records = records_;
  state_->is_bcf = is_bcf_;
}

vcf_source::~vcf_source() {
  const quiet_htslib quiet;
  state_.reset();
}

value_type vcf_source::kind() const {
  return options_.dosage == dosage_field::none ? value_type::genotype : value_type::dosage;
}

std::string vcf_source::description() const {
  std::string d = (is_bcf_ ? "BCF " : "VCF ") + options_.path.string();
  if (options_.dosage != dosage_field::none)
    d += std::string(", dosages from ") + field_name(options_.dosage);
  if (options_.split_multiallelic && columns_ != records_) d += ", multi-allelic records split";
  return d;
}

column_info vcf_source::column(std::uint64_t j) const {
  const quiet_htslib quiet;
  state& s = *state_;
  s.seek(j);
  const bcf1_t* rec = s.record.get();
  const int alt = static_cast<int>(j - s.first_column) + 1;
  return {bcf_seqname_safe(s.header.get(), rec),
          rec->d.id,
          "0",
          std::to_string(rec->pos + 1),
          rec->n_allele > alt ? rec->d.allele[alt] : ".",
          rec->d.allele[0]};
}

std::unique_ptr<column_source::fetched> vcf_source::fetch(std::uint64_t j) {
  const quiet_htslib quiet;
  state& s = *state_;
  s.seek(j);
  auto f = std::make_unique<fetched_column>();
  f->record = s.fetch();
  f->alt = static_cast<int>(j - s.first_column) + 1;
  return f;
}

const vcf_source::fetched_column& vcf_source::column_of(const fetched& raw) {
  const auto* f = dynamic_cast<const fetched_column*>(&raw);
  if (f == nullptr)
    throw error(errc::invalid_argument, "vcf_source: decode of what another source fetched");
  return *f;
}

void vcf_source::decode_genotypes(const fetched& raw, std::span<std::uint8_t> codes) const {
  if (options_.dosage != dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a dosage source; read_dosages reads it");
  const std::size_t bytes = genotype_column_bytes(samples_.size());
  if (codes.size() < bytes) throw error(errc::invalid_argument, "vcf_source: bad buffer");
  const fetched_column& f = column_of(raw);
  detail::column_decoder(options_, samples_, is_bcf_, *f.record, f.alt)
      .genotypes(codes.first(bytes));
}

void vcf_source::decode_dosages(const fetched& raw, std::span<std::uint16_t> dosages) const {
  if (options_.dosage == dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a genotype source; read_genotypes reads it");
  if (dosages.size() != samples_.size())
    throw error(errc::invalid_argument, "vcf_source: bad buffer");
  const fetched_column& f = column_of(raw);
  detail::column_decoder(options_, samples_, is_bcf_, *f.record, f.alt).dosages(dosages);
}

void vcf_source::read_genotypes(std::uint64_t j, std::span<std::uint8_t> codes) {
  if (options_.dosage != dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a dosage source; read_dosages reads it");
  const std::size_t bytes = genotype_column_bytes(samples_.size());
  if (j >= columns_ || codes.size() < bytes)
    throw error(errc::invalid_argument, "vcf_source: bad column or buffer");
  decode_genotypes(*fetch(j), codes);
}

void vcf_source::read_dosages(std::uint64_t j, std::span<std::uint16_t> dosages) {
  if (options_.dosage == dosage_field::none)
    throw error(errc::invalid_argument,
                "vcf_source: " + description() + " is a genotype source; read_genotypes reads it");
  check_read(j, dosages.size());
  decode_dosages(*fetch(j), dosages);
}

}  // namespace colflow::preprocess
