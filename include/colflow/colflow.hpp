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
