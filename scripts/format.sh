#!/usr/bin/env bash
# Formats every C++ file of the tree with clang-format (.clang-format at the root), or with
# --check only reports the files that are not formatted and exits non-zero (what CI runs).
#
#   scripts/format.sh            # rewrite in place
#   scripts/format.sh --check    # dry run, -Werror
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh >&2
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc')
if [[ ${1:-} == --check ]]; then
  clang-format --dry-run -Werror "${files[@]}"
  echo "format: ${#files[@]} files formatted as .clang-format says"
else
  clang-format -i "${files[@]}"
fi
