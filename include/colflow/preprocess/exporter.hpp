/// @file exporter.hpp
/// Writing a store back out: PLINK 1 binary files, a PLINK 2 fileset or a .npy matrix. Part of
/// libcolflow_preprocess (colflow::preprocess).
///
/// Every file is written through staged_output (io/staged_output.hpp): under a hidden
/// temporary name beside it, fsynced and renamed into place when complete, so an export that
/// fails, is cancelled or is killed never leaves a partial file under the final name (a killed
/// one may leave a hidden temporary, which the next export to the same name removes).
///
/// Columns are streamed through column_stream (stream/column_stream.hpp), in store order.
/// Cancellation: a stop request (cancellation.hpp) is honoured between columns; the export then
/// throws errc::cancelled and removes its temporaries.
///
/// Thread safety: the functions may run at once on distinct outputs; the store is only read.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "colflow/store/store.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow::preprocess {

/// Called during the pass over the columns (column_stream::on_progress).
using export_progress = std::function<void(const pass_progress&)>;

/// Writes PREFIX.bed, PREFIX.bim and PREFIX.fam (SNP-major). A genotype store's .bed holds its
/// codes as they are (padding bits zero), so it is byte-identical to a .bed it was made from.
/// A dosage store's .bed holds its hard calls: a dosage within `hard_call_threshold` of 0, 1
/// or 2 becomes that call, others a missing call (PLINK 2's --hard-call-threshold and its
/// default). A float store must hold dosages (0, 1, 2, NaN: made without standardisation).
///
/// The .fam and .bim are renamed into place first, the .bed last.
///
/// Errors (colflow::error): errc::invalid_argument for a float store of standardised values
/// (they cannot be turned back into calls exactly; checked before anything is written) or for
/// a value other than 0, 1, 2 or NaN; errc::already_exists when one of the files exists and
/// `overwrite` is false; errc::cancelled on a stop request; errc::io_error when a file cannot
/// be written; whatever reading the store throws.
void export_bed(const store& s, const std::string& prefix, bool overwrite,
                const export_progress& progress = {}, double hard_call_threshold = 0.1);

/// Writes PREFIX.pgen, PREFIX.pvar and PREFIX.psam (PLINK 2), which plink2 reads, as does
/// pgen_source. The .pgen's records are uncompressed (pgen_spec's storage modes): mode 0x02,
/// fixed-width records of the hard calls, for a genotype store and a float store of dosages
/// (the calls export_bed writes); mode 0x10, records of type 0x40 (the hard calls, made as
/// export_bed makes them, then every sample's ALT dosage in 1/16384, 65535 for a missing one),
/// for a dosage store. No phase; every REF allele is marked provisional (a store does not
/// record whether A2 is the reference), as plink2 marks a .bed's. The .pvar has #CHROM POS ID
/// REF ALT (and CM when some variant's is not 0) with ALT = A1 and REF = A2, so a store made
/// from the export counts the same allele; the .psam has IID and SEX, and FID, PAT and MAT,
/// PHENO1 when some sample's is not "0" (FID, PAT, MAT) or "-9" (PHENO1), the store's values
/// verbatim.
///
/// The .psam and .pvar are renamed into place first, the .pgen last.
///
/// Errors: as export_bed, and errc::invalid_argument for a store of more variants or samples
/// than a .pgen holds (2^31 - 3 and 2^31 - 2), or of dosages of so many samples that a record
/// would pass 4 GiB (checked before anything is written).
void export_pfile(const store& s, const std::string& prefix, bool overwrite,
                  const export_progress& progress = {}, double hard_call_threshold = 0.1);

/// Writes `file`, a .npy v1.0 file of float64 (or float32 when `float32`), shape (rows,
/// columns), Fortran order, column by column: standardised values for a genotype store, the
/// stored values otherwise (a dosage store's dosages, NaN for a missing one). Errors as for
/// export_bed (without the value checks).
void export_npy(const store& s, const std::filesystem::path& file, bool float32, bool overwrite,
                const export_progress& progress = {});

}  // namespace colflow::preprocess
