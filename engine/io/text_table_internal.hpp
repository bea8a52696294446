// Whitespace-separated text tables as PLINK writes them (ID lists, phenotype and covariate
// files): the one tokenizer the readers of such files share.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace colflow::detail {

// Calls `record` for every non-empty line of `path` with its 1-based line number and its
// fields (split on spaces and tabs; a trailing '\r' is dropped). Throws errc::not_found when
// the file does not exist, errc::io_error when it cannot be read.
void for_each_record(
    const std::filesystem::path& path,
    const std::function<void(std::size_t line, std::span<const std::string_view> fields)>& record);

// "FILE:LINE: " for messages.
std::string where(const std::filesystem::path& path, std::size_t line);

}  // namespace colflow::detail
