/// @file version.hpp
/// The library's version.
#pragma once

#include <string_view>

namespace colflow {

/// The version of the colflow library, e.g. "0.1.0".
std::string_view version() noexcept;

}  // namespace colflow
