/// @file colflow.hpp
/// Umbrella header: everything a program embedding colflow needs.
#pragma once

#include "colflow/codec.hpp"
#include "colflow/error.hpp"
#include "colflow/genotype.hpp"
#include "colflow/store.hpp"
#include "colflow/stream.hpp"
#include "colflow/store_writer.hpp"
#include "colflow/version.hpp"
#include "colflow/analysis.hpp"
#include "colflow/selection.hpp"
#include "colflow/phenotype.hpp"
#include "colflow/stats.hpp"
#include "colflow/assoc.hpp"
#include "colflow/pca.hpp"
#include "colflow/penalized.hpp"
#include "colflow/bayesr.hpp"
