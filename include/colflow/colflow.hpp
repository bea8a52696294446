/// @file colflow.hpp
/// Umbrella header: the whole library (libcolflow), layer by layer, lowest first
/// (docs/DESIGN.md §1). The importers and the exporter are a library of their own
/// (colflow/preprocess/).
#pragma once

// common
#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"
#include "colflow/version.hpp"
// io
#include "colflow/io/file_io.hpp"
#include "colflow/io/staged_output.hpp"
#include "colflow/io/tsv_writer.hpp"
// simd
#include "colflow/simd/vector_path.hpp"
// codec
#include "colflow/codec/codec.hpp"
#include "colflow/codec/genotype_codec.hpp"
// kernels
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/kernels/sample_blocks.hpp"
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
#include "colflow/analysis/grm.hpp"
#include "colflow/analysis/ld.hpp"
#include "colflow/analysis/pca.hpp"
#include "colflow/analysis/penalized.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/score.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/sex_chromosomes.hpp"
#include "colflow/analysis/stats.hpp"
#include "colflow/analysis/wgr.hpp"
