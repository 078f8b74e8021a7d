"""fpcheck: will this release force running servers to restart, and why?

Every path argument accepts ``str`` or :class:`os.PathLike`. Every
function releases the GIL while it reads files or git objects. Errors
raise :class:`FpcheckError` subclasses named for the cause.
"""

import os
from typing import Any, Dict, Mapping, Optional, Sequence, Union

StrPath = Union[str, "os.PathLike[str]"]
JSON = Dict[str, Any]

__version__: str

class FpcheckError(Exception):
    """Base class of every error fpcheck raises."""

class ConfigError(FpcheckError):
    """Bad settings: an fpcheck.toml, extensions, excluded names, a keyword."""

class InputError(FpcheckError):
    """An input cannot be read."""

class RepositoryError(InputError):
    """Not a git repository, or the repository cannot be read."""

class RevisionError(InputError):
    """A revision (tag, branch, commit) does not resolve to a commit or tree."""

class MissingObjectError(InputError):
    """An object the answer depends on is missing (shallow or partial clone)."""

class UnreadableError(InputError):
    """The runtime directory or a file in it cannot be read."""

class SnapshotError(InputError):
    """The snapshot is unreadable, corrupt, foreign or of another schema.

    Raised by :func:`gate`, whose ``report`` attribute then holds the
    gate's conservative answer (the marker is written when possible).
    """

    report: JSON

class MarkerError(InputError):
    """The restart marker cannot be read as a JSON object."""

class OutputError(FpcheckError):
    """An output (the marker, its lock) cannot be written."""

    report: JSON

class LockError(OutputError):
    """The lock beside the marker cannot be taken."""

class WriteError(OutputError):
    """The marker cannot be written or removed."""

def fingerprint(
    root: StrPath,
    *,
    extensions: Optional[Sequence[str]] = None,
    exclude: Optional[Sequence[str]] = None,
) -> str:
    """The runtime fingerprint of the directory ``root``.

    The 64-hex SHA-256 the reference gate's
    ``compute_mcp_runtime_fingerprint`` computes, or ``""`` when it is
    unavailable (no runtime file, an unreadable file, a FIFO...), as the
    reference returns it. ``extensions`` replaces ``[".py"]``; ``exclude``
    replaces the default excluded names (``[]`` excludes nothing).

    Raises :class:`ConfigError` for bad settings.
    """

def inspect(
    root: StrPath,
    *,
    extensions: Optional[Sequence[str]] = None,
    exclude: Optional[Sequence[str]] = None,
) -> JSON:
    """The fingerprint of ``root`` with what it covers.

    Returns ``{"fingerprint": str | None, "files": [relative paths in hash
    order], "unavailable_reason": str | None}``.
    """

def fingerprint_at(
    repo: StrPath,
    rev: str = "HEAD",
    *,
    root: Optional[str] = None,
    extensions: Optional[Sequence[str]] = None,
    exclude: Optional[Sequence[str]] = None,
    runtime: Optional[str] = None,
) -> str:
    """The runtime fingerprint of ``root`` at revision ``rev``, from git objects.

    As ``fpcheck fingerprint --rev REV``: the settings are those of the
    ``fpcheck.toml`` committed at ``rev`` (what that release's gate uses;
    ``runtime`` names one of several declared runtimes), else the defaults
    (root ``src``, ``.py``, the default exclusions); ``root``,
    ``extensions`` and ``exclude`` override them. No checkout: bare clones
    and linked worktrees work. ``""`` when unavailable. Raises
    :class:`RepositoryError` (not a repository), :class:`RevisionError`
    (unknown revision), :class:`MissingObjectError`, :class:`ConfigError`
    (a bad committed fpcheck.toml, an unknown ``runtime``).
    """

def analyse(
    repo: StrPath, from_rev: str, to_rev: str = "HEAD", **settings: Any
) -> JSON:
    """Will the release ``from_rev..to_rev`` force a restart, and why?

    Exactly the object ``fpcheck FROM..TO --format json`` prints for the
    same settings: with several runtimes declared and no ``runtime``, the
    ``runtimes`` array and the top-level ``restart_required``. Settings:
    ``root``, ``extensions``, ``exclude``, ``config`` (an fpcheck.toml path;
    by default the repository's own), ``runtime`` (a runtime's name in a
    multi-runtime config, or a list of names, as the repeatable
    ``--runtime``; none: every runtime), ``worktree`` (compare ``from_rev`` with the
    working tree), ``use_cache`` (the fingerprint and change-kind caches in
    the git directory, default True), ``classify`` (each runtime change's
    ``change_kind``, the top-level ``avoidable`` and ``advice``, default
    True; False is the CLI's ``--no-classify``). ``advice``, left out when
    empty, lists what the gate cannot see (docs/advice.md): possible missed
    restarts, a restart caused only by a version string, the MCP tools
    added, removed or changed, each with ``kind``, ``cause``, ``message``,
    ``evidence`` (``file:line``) and ``changes``. ``witness`` (``"auto"``,
    the default: git's own checkout of both ends confirms a "no restart" on
    trees whose checkout fpcheck emulates; ``"always"``; ``"never"``; the
    report's ``witness`` says what it did, as the CLI's ``--witness``). An
    unknown keyword raises ``TypeError``.
    """

def status(
    runtime_root: StrPath,
    marker: StrPath,
    *,
    process_fingerprint: str,
    process_version: str = "",
    client: str = "",
    cache: Union[None, bool, StrPath] = None,
    extensions: Optional[Sequence[str]] = None,
    exclude: Optional[Sequence[str]] = None,
    verify_interval: Optional[float] = None,
) -> JSON:
    """The running process's question: must I restart?

    The object ``fpcheck status --json`` prints: ``restart_required``,
    ``reason``, ``client_action``, installed and process versions and
    fingerprints... ``process_fingerprint`` is what :func:`fingerprint`
    returned at start-up (``""`` or ``"unknown"`` if it could not).

    ``cache``: ``None`` checks everything on every call. ``True`` keeps a
    file-system watcher in this process (inotify on Linux): while it
    reports no change, the installed fingerprint is reused, and any change,
    queue overflow or doubt means a full re-hash on the very next call.
    A path does the same, and behind the watcher uses the CLI's cache file
    (``status --cache``). The version and the marker are read on every call.

    The watcher is not used where inotify cannot vouch for what it saw: a
    root on NFS, CIFS, FUSE, virtiofs, overlayfs... (only ext2/3/4, xfs,
    btrfs, tmpfs, ramfs and f2fs are trusted); any mount or unmount drops
    it. A write through a memory mapping makes no event: the watched
    fingerprint is re-verified by a full one when its last verification is
    older than ``verify_interval`` seconds (default 2; 0: every call), so
    such a write is seen by every call starting that long after it.
    """

def snapshot(
    runtime_root: StrPath,
    *,
    out: Optional[StrPath] = None,
    extensions: Optional[Sequence[str]] = None,
    exclude: Optional[Sequence[str]] = None,
) -> JSON:
    """The installed runtime's state before an update (``fpcheck snapshot``).

    Version, force_restart, fingerprint and each file's digest. With
    ``out``, also written there atomically, for :func:`gate` in another
    process.
    """

def gate(
    snapshot: Union[Mapping[str, Any], StrPath],
    runtime_root: StrPath,
    marker: StrPath,
    *,
    client: str = "",
    lock_timeout: Optional[float] = None,
) -> JSON:
    """After an update: decide, and write the restart marker if needed.

    ``snapshot`` is what :func:`snapshot` returned, or the path it wrote.
    Returns the object ``fpcheck gate --json`` prints. When the gate could
    not decide, it still answers "restart" (writing the marker when it
    can) and raises :class:`SnapshotError`, :class:`UnreadableError`,
    :class:`ConfigError`, :class:`LockError` or :class:`WriteError` with
    that answer in the exception's ``report``.
    """

def ack(
    marker: StrPath,
    client: str,
    *,
    runtime_root: StrPath,
    process_fingerprint: str,
    process_version: str = "",
    lock_timeout: Optional[float] = None,
    extensions: Optional[Sequence[str]] = None,
    exclude: Optional[Sequence[str]] = None,
) -> JSON:
    """A restarted client confirms it loaded the new code (``fpcheck ack``).

    Marks ``client`` ``"ok"`` in the marker. The marker is removed once
    every listed client is ``"ok"`` and the process is proven to run the
    installed release: ``process_fingerprint`` equal to the fingerprint of
    ``runtime_root`` (or to the marker's ``to_fingerprint``); for a marker
    without ``to_fingerprint``, ``process_version`` equal to the installed
    version when the fingerprints cannot tell. A process shown to run other
    code (a fingerprint or version that differs) is refused: nothing
    changes, and it must restart.

    Returns ``{"action": "no_marker" | "acknowledged" | "removed" |
    "refused", "installed_fingerprint", "installed_version", ...}``.
    Raises :class:`MarkerError` for a corrupt marker,
    :class:`UnreadableError` when ``runtime_root`` cannot be read,
    :class:`LockError` / :class:`WriteError` when the marker cannot be
    updated, :class:`ConfigError` for an unknown client.
    """
