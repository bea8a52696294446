#!/usr/bin/env bash
# Makes a Python environment with peers from PyPI that comparison tests and benchmarks use;
# a no-op when it is already complete.
#
#   bash scripts/python-env.sh [PACKAGE ...]     (default: numpy scikit-learn cbgen)
#   COLFLOW_VENV=DIR (default build/venv: the tests'; bench/run.sh uses bench/.venv)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=${COLFLOW_VENV:-build/venv}
packages=("$@")
[[ ${#packages[@]} -gt 0 ]] || packages=(numpy scikit-learn cbgen)
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
