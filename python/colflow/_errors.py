"""The exceptions of colflow: one class per kind of failure the library reports.

The extension raises them from the library's ``colflow::error`` (include/colflow/error.hpp):
``str(e)`` is the library's message, the same line the command prints, and ``e.kind`` the name
of its error code (``"corrupt_frame"``, ``"not_found"``...). Bad arguments checked in Python
raise the built-in ``IndexError``, ``TypeError`` and ``ValueError``, as numpy does.
"""

from __future__ import annotations


class Error(Exception):
    """A failure reported by the colflow library (base of every colflow exception)."""

    #: The library's error code, by name (``"io_error"``, ``"corrupt_index"``...).
    kind: str | None = None


class FormatError(Error):
    """A store or input file that is malformed, damaged or of an unsupported version."""


class NotFoundError(Error, FileNotFoundError):
    """A store or input file that does not exist."""


class AlreadyExistsError(Error, FileExistsError):
    """An output that exists and that the call was not allowed to replace."""


class InvalidArgumentError(Error, ValueError):
    """An option or parameter the library refused."""


# Codes whose failures are about the bytes of a file (error.hpp), rather than the call.
_FORMAT_KINDS = frozenset(
    {
        "bad_magic",
        "unsupported_version",
        "corrupt_header",
        "corrupt_index",
        "corrupt_frame",
        "checksum_mismatch",
        "mismatched_store",
        "bad_input",
    }
)


def class_for(kind: str) -> type[Error]:
    """The exception class of the library's error code named ``kind`` (used by the extension)."""
    if kind in _FORMAT_KINDS:
        return FormatError
    return {
        "not_found": NotFoundError,
        "already_exists": AlreadyExistsError,
        "invalid_argument": InvalidArgumentError,
    }.get(kind, Error)
