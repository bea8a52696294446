// Protection of read-only file mappings against their file shrinking. Reading a page of a
// mapping past the file's current end raises SIGBUS, which would kill the process (another
// program truncated or rewrote the store mid-pass). The guard's SIGBUS handler recognises
// faults inside watched mappings, marks the mapping damaged, then maps a zero page over the
// faulting page so the read completes (in that order: a thread that reads the zero page
// without faulting finds the mark when it checks); readers check the mark after reading and
// turn it into a colflow::error, so no value read from a lost page reaches a result. Faults
// elsewhere go to the previous handler (or the default action).
#pragma once

#include <cstddef>

namespace colflow::detail {

// Watches [begin, begin + size); a slot to pass to the others, or -1 when every slot is taken
// (the mapping is then unprotected: SIGBUS keeps its default action for it).
int watch_mapping(const void* begin, std::size_t size) noexcept;
void unwatch_mapping(int slot) noexcept;
// True once a fault inside the watched mapping was absorbed.
bool mapping_damaged(int slot) noexcept;

}  // namespace colflow::detail
