"""What a result was measured on: the machine, the build and the peers' versions. Written as
the header of the results file and quoted in docs/PERFORMANCE.md."""
from __future__ import annotations

import os
import platform
import re
import subprocess
from importlib import metadata


def cpu_model() -> str:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def cpu_detail() -> str:
    """The CPU family and model numbers and its widest vector unit: VMs report one model name
    ("AMD EPYC") for several generations, whose speeds differ by up to 2x."""
    fields, flags = {}, set()
    for line in open("/proc/cpuinfo"):
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("cpu family", "model") and key not in fields:
            fields[key] = value.strip()
        elif key == "flags" and not flags:
            flags = set(value.split())
    vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    return f"family {fields.get('cpu family', '?')} model {fields.get('model', '?')}; {vector}"


# colflow's vector paths, widest first, with the CPU flags each needs (COLFLOW_SIMD names them;
# colflow/simd/vector_path.hpp).
VECTOR_PATHS = {"avx512": ("avx512f", "avx2", "fma"), "avx2": ("avx2", "fma"), "portable": ()}


def vector_paths() -> list[str]:
    """The vector paths this CPU runs, widest first, without the portable one (a build's
    reference for other CPUs, measured only when named)."""
    flags = set()
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    return [p for p, needs in VECTOR_PATHS.items() if needs and flags.issuperset(needs)]


def machine_id() -> str:
    """A file-name-safe name for the kind of machine: CPU model and core count."""
    model = re.sub(r"\(R\)|\(TM\)|CPU|Processor|[0-9]+-Core", "", cpu_model())
    model = re.sub(r"@.*", "", model)
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    return f"{slug}-{os.cpu_count()}c"


def first_line(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
        return out.strip().splitlines()[0] if out.strip() else "?"
    except OSError:
        return "not installed"


def cmake_cache(build_dir: str, key: str) -> str:
    path = os.path.join(build_dir, "CMakeCache.txt")
    if os.path.exists(path):
        for line in open(path):
            if line.startswith(key + ":"):
                return line.split("=", 1)[1].strip()
    return "?"


def build_dir_of(colflow: str) -> str | None:
    """The CMake build directory that holds the colflow binary, or None for a binary copied
    out of one (a build of another commit kept for comparison)."""
    d = os.path.dirname(os.path.abspath(colflow))
    while True:
        if os.path.exists(os.path.join(d, "CMakeCache.txt")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def describe(root: str, colflow: str, build_dir: str | None) -> list[str]:
    memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    if build_dir is None:
        compiler = "unknown (the colflow binary is outside a build directory)"
        build_type, flags = "unknown", ""
    else:
        build_type = cmake_cache(build_dir, "CMAKE_BUILD_TYPE")
        flags = cmake_cache(build_dir, f"CMAKE_CXX_FLAGS_{build_type.upper()}")
        compiler = first_line([cmake_cache(build_dir, "CMAKE_CXX_COMPILER"), "--version"])
    versions = []
    for package in ("numpy", "scikit-learn", "blosc2", "bed-reader", "matplotlib"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} not installed")
    return [f"machine: {cpu_model()} ({cpu_detail()}), {os.cpu_count()} cores, {memory_gib:.0f} GiB, "
            f"Linux {platform.release()}",
            f"compiler: {compiler}",
            f"build: {build_type}, flags {flags or '(none)'}; AVX-512/AVX2/FMA/POPCNT kernels chosen at run time",
            f"colflow: {first_line([colflow, '--version'])}",
            f"plink2: {first_line(['plink2', '--version'])}",
            f"plink1.9: {first_line(['plink1.9', '--version'])}",
            f"python: {platform.python_version()}, {', '.join(versions)}"]
