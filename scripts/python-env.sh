#!/usr/bin/env bash
# Makes the Python environment that the comparison tests and benchmarks use for peers from
# PyPI (numpy, scikit-learn), in build/venv; a no-op when it is already complete.
#
#   bash scripts/python-env.sh [PACKAGE ...]     (default: numpy scikit-learn)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=build/venv
packages=("$@")
[[ ${#packages[@]} -gt 0 ]] || packages=(numpy scikit-learn)
# The Debian interpreter (python3-venv): a python3 earlier on PATH may lack the venv module.
python=/usr/bin/python3
[[ -x $venv/bin/python3 ]] || "$python" -m venv "$venv"
modules=()
for p in "${packages[@]}"; do
  case $p in scikit-learn) modules+=(sklearn) ;; *) modules+=("${p//-/_}") ;; esac
done
if ! "$venv/bin/python3" -c "import $(IFS=,; echo "${modules[*]}")" 2>/dev/null; then
  echo "python-env: installing ${packages[*]} into $venv"
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${packages[@]}"
fi
echo "python-env: $venv has ${packages[*]}"
