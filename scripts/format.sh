#!/usr/bin/env bash
# Formats every C++ file of the tree with clang-format (.clang-format at the root), or with
# --check only reports the files that are not formatted, or .cpp files that do not open with
# a comment line saying what they are for (CONTRIBUTING), and exits non-zero (what CI runs).
#
#   scripts/format.sh            # rewrite in place
#   scripts/format.sh --check    # dry run, -Werror
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh >&2
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc')
if [[ ${1:-} == --check ]]; then
  clang-format --dry-run -Werror "${files[@]}"
  unopened=()
  for f in "${files[@]}"; do
    [[ $f == *.cpp && $(head -c 2 "$f") != "//" ]] && unopened+=("$f")
  done
  if [[ ${#unopened[@]} -gt 0 ]]; then
    printf 'format: %s opens without a line saying what the file is for\n' "${unopened[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted as .clang-format says, each .cpp with its opening line"
else
  clang-format -i "${files[@]}"
fi
