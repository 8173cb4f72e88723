"""Atomic file writes: a temporary file in the same folder, flushed and fsynced, ``os.replace``,
then an fsync of the folder (so the rename itself is durable).

Used by traces (:mod:`rltheory.trace`, which re-exports :func:`write_atomic`), datasets, sweep
results and the CLI's paired figure/JSON writes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_FILE_MODE = _umask_mode()


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, ``os.replace``,
    then fsync of the folder (so the rename itself is durable).

    Readers see either the old file or the complete new one, never a partial
    write. Returns the path written.

    Raises
    ------
    TypeError
        ``data`` is not ``bytes``/``bytearray``/``memoryview`` or ``str`` (text is written as
        UTF-8); nothing is written.
    OSError
        The write failed (a full disk, a file size limit); its message names ``path``, the
        previous file at ``path`` is unchanged and no temporary file remains.
    """
    path = Path(path)
    tmp = _stage(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    _sync_directory(path.parent)
    return path


def _sync_directory(folder: Path) -> None:
    """fsync ``folder`` so that a rename into it survives a power loss (POSIX: the new directory
    entry is durable only once the directory itself is synced). Where a directory cannot be
    opened or synced (Windows, some network file systems) the rename stands as it is."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # a folder that cannot be synced: the rename stands
            os.fsync(fd)
    finally:
        os.close(fd)


def _stage(path: Path, data: bytes | str) -> str:
    """The first half of :func:`write_atomic`: ``data`` in a fsynced temporary file next to
    ``path`` (its name is returned; renaming it onto ``path`` completes the write). Nothing is
    left behind when it fails."""
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        # bytes(5) is five NUL bytes and bytes([104, 105]) is b"hi": neither is what was meant
        raise TypeError(f"write_atomic: data must be bytes or str; got {type(data).__name__}")
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    # after the checks: a refused write creates no folders either
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:  # owns fd from here: closed on any failure below
            # mkstemp creates 0600; give the file the usual umask-based mode
            os.chmod(tmp, _FILE_MODE)
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        _discard(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # a full disk's "[Errno 28] No space left" named no file
        raise
    return tmp


def _discard(tmp: str) -> None:
    """Remove a temporary file of :func:`_stage` if it is still there."""
    if os.path.exists(tmp):
        os.unlink(tmp)
