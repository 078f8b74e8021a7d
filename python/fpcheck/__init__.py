"""fpcheck: will this release force running servers to restart, and why?

The runtime fingerprint (SHA-256 over the runtime ``.py`` files) and the
restart gate of a long-running Python server, computed by the fpcheck Rust
library. Each function returns the object the matching CLI command prints
with ``--json``; errors raise :class:`FpcheckError` subclasses. See the
stubs (``__init__.pyi``) for each function's documentation.
"""

from fpcheck._native import (
    ConfigError,
    FpcheckError,
    InputError,
    LockError,
    MarkerError,
    MissingObjectError,
    OutputError,
    RepositoryError,
    RevisionError,
    SnapshotError,
    UnreadableError,
    WriteError,
    __version__,
    ack,
    analyse,
    fingerprint,
    fingerprint_at,
    gate,
    inspect,
    snapshot,
    status,
)

__all__ = [
    "ConfigError",
    "FpcheckError",
    "InputError",
    "LockError",
    "MarkerError",
    "MissingObjectError",
    "OutputError",
    "RepositoryError",
    "RevisionError",
    "SnapshotError",
    "UnreadableError",
    "WriteError",
    "__version__",
    "ack",
    "analyse",
    "fingerprint",
    "fingerprint_at",
    "gate",
    "inspect",
    "snapshot",
    "status",
]
