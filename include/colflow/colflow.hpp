/// @file colflow.hpp
/// Umbrella header: everything a program embedding colflow needs.
#pragma once

#include "colflow/codec/codec.hpp"
#include "colflow/error.hpp"
#include "colflow/codec/genotype_codec.hpp"
#include "colflow/store/store.hpp"
#include "colflow/stream/column_stream.hpp"
#include "colflow/stream/stream_benchmark.hpp"
#include "colflow/store/store_writer.hpp"
#include "colflow/store/verify.hpp"
#include "colflow/io/tsv_writer.hpp"
#include "colflow/version.hpp"
#include "colflow/analysis/analysis.hpp"
#include "colflow/analysis/selection.hpp"
#include "colflow/analysis/phenotype.hpp"
#include "colflow/analysis/stats.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/analysis/pca.hpp"
#include "colflow/analysis/penalized.hpp"
#include "colflow/analysis/bayesr.hpp"
