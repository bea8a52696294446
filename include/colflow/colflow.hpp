/// @file colflow.hpp
/// Umbrella header: the whole library (libcolflow), layer by layer, lowest first
/// (docs/DESIGN.md §1): every public header of it (the test `umbrella` checks that none is
/// missed). The importers and the exporter (colflow/preprocess/) and the MPI communicator
/// (colflow/mpi/) are libraries of their own; machinery no client needs (the sample blocks,
/// the bit-plane products, the table writer) is private to the library.
#pragma once

// common
#include "colflow/cancellation.hpp"
#include "colflow/communicator.hpp"
#include "colflow/error.hpp"
#include "colflow/version.hpp"
// io
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"
// simd
#include "colflow/simd/vector_path.hpp"
// codec
#include "colflow/codec/codec.hpp"
#include "colflow/codec/dosage_codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
// kernels
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/kernels/king_counts.hpp"
// store
#include "colflow/store/chromosome.hpp"
#include "colflow/store/store.hpp"
#include "colflow/store/store_writer.hpp"
#include "colflow/store/verify.hpp"
// stream
#include "colflow/stream/column_stream.hpp"
#include "colflow/stream/stream_benchmark.hpp"
// analysis
#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/analysis/bayesr.hpp"
#include "colflow/analysis/case_control.hpp"
#include "colflow/analysis/chain_diagnostics.hpp"
#include "colflow/analysis/clump.hpp"
#include "colflow/analysis/grm.hpp"
#include "colflow/analysis/gwas_summary.hpp"
#include "colflow/analysis/hardy.hpp"
#include "colflow/analysis/hardy_weinberg.hpp"
#include "colflow/analysis/king.hpp"
#include "colflow/analysis/ld.hpp"
#include "colflow/analysis/ld_columns.hpp"
#include "colflow/analysis/ld_columns_in_memory.hpp"
#include "colflow/analysis/ld_matrix.hpp"
#include "colflow/analysis/ld_matrix_columns.hpp"
#include "colflow/analysis/ld_prune.hpp"
#include "colflow/analysis/p_value_table.hpp"
#include "colflow/analysis/pca.hpp"
#include "colflow/analysis/penalized.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/qc_filters.hpp"
#include "colflow/analysis/sbayesr.hpp"
#include "colflow/analysis/score.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/analysis/stats.hpp"
#include "colflow/analysis/wgr.hpp"
