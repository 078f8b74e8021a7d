"""The extension module; use the names re-exported by :mod:`fpcheck`."""

from typing import List

from fpcheck import (
    ConfigError as ConfigError,
    FpcheckError as FpcheckError,
    InputError as InputError,
    LockError as LockError,
    MarkerError as MarkerError,
    MissingObjectError as MissingObjectError,
    OutputError as OutputError,
    RepositoryError as RepositoryError,
    RevisionError as RevisionError,
    SnapshotError as SnapshotError,
    UnreadableError as UnreadableError,
    WriteError as WriteError,
    __version__ as __version__,
    ack as ack,
    analyse as analyse,
    fingerprint as fingerprint,
    fingerprint_at as fingerprint_at,
    gate as gate,
    inspect as inspect,
    snapshot as snapshot,
    status as status,
)

def cli_main(args: List[str]) -> int:
    """Run the ``fpcheck`` CLI on ``args`` (without the program name)."""
