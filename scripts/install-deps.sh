#!/usr/bin/env bash
# Installs the Debian 12 packages that building, testing and benchmarking colflow need.
# Idempotent: when everything is already installed it only checks, and returns at once.
# Runs as root; otherwise uses sudo when it exists.
set -euo pipefail

packages=(
  # build: compiler, generator and the tools CMake uses to find libraries
  g++ cmake ninja-build pkg-config
  # libraries: oneTBB, Eigen, the codecs, checksums, CLI, JSON, random numbers, distributions,
  # and the test and benchmark frameworks
  libtbb-dev libeigen3-dev zlib1g-dev libdeflate-dev liblz4-dev libzstd-dev libxxhash-dev
  libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev librandom123-dev
  libboost-math-dev
  # VCF/BCF input (htslib), and bgzip/tabix and bcftools to make and check test inputs
  libhts-dev tabix bcftools
  # MPI (Open MPI): the colflow_mpi library and `mpirun -np R colflow ...` (docs/SCALING.md)
  libopenmpi-dev openmpi-bin
  # test tools: stock codec programs that must decode our frames, reference outputs, scripts
  zstd lz4 python3 python3-numpy python3-venv plink2 xxd
  # a headless browser that loads the demo's results page (python/tests/test_demo.py)
  chromium
  # formatting check (scripts/format.sh --check)
  clang-format
  # benchmark peers (bench/run.sh)
  plink1.9
  # benchmark tools: wall time and peak memory of each run
  time
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages are present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
as_root=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "install-deps: not root and sudo is not available; install as root: ${missing[*]}" >&2
    exit 1
  fi
fi
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
