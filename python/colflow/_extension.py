"""The compiled extension ``colflow._core``, loaded with the process's vector path checked.

Every module of the package that calls the library takes the extension from here, so the check
below has passed before any call reaches the library.
"""

from __future__ import annotations

from . import _core

__all__ = ["_core"]

# COLFLOW_SIMD (portable, avx2, avx512) caps the vector code for the process: a value that names
# no path, or one this CPU lacks, fails the import rather than a later call.
_core.check_vector_path()
