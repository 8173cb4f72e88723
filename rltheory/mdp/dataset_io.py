r"""Pickle-free, atomic save/load of offline datasets (``.npz`` of plain arrays plus a JSON header)."""

from __future__ import annotations

import errno
import io
import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidModelError
from ..trace import write_atomic
from .episodes import EpisodeDataset
from .preference_data import PreferenceDataset
from .transition_data import TransitionDataset

__all__ = ["FORMAT_VERSION", "save_dataset", "load_dataset"]

#: version of the on-disk format written by :func:`save_dataset`.
FORMAT_VERSION = 1


# --------------------------------------------------------------------------- save / load
_FIELDS = {
    "EpisodeDataset": ("states", "actions", "rewards"),
    "TransitionDataset": ("states", "actions", "rewards", "next_states"),
}


def _arrays(data: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    kind = type(data).__name__
    if kind == "PreferenceDataset":
        arrs = {"labels": data.labels}
        for part in ("first", "second"):
            sub, _ = _arrays(getattr(data, part))
            arrs.update({f"{part}.{k}": v for k, v in sub.items()})
        A = data.first.A
        meta = {"S": data.first.S, "A": list(A) if isinstance(A, tuple) else A}
    elif kind in _FIELDS:
        arrs = {f: getattr(data, f) for f in _FIELDS[kind]}
        meta = {"S": data.S, "A": list(data.A) if isinstance(data.A, tuple) else data.A}
    else:
        raise TypeError(
            f"save_dataset saves EpisodeDataset, TransitionDataset or PreferenceDataset; got {kind}"
        )
    return arrs, {"kind": kind, "format_version": FORMAT_VERSION, **meta}


def _npz_path(path: str | os.PathLike) -> Path | None:
    """The file :func:`save_dataset` writes for ``path``: ``.npz`` appended when the name has
    another suffix or none; ``None`` when ``path`` names a directory (``""``, ``"."``, ``".."``,
    ``"/"`` or a path ending in a separator)."""
    raw = os.fspath(path)
    p = Path(path)
    seps = (os.sep, os.altsep) if os.altsep else (os.sep,)
    if p.name in ("", ".", "..") or str(raw).endswith(seps):
        return None
    return p if p.suffix == ".npz" else p.with_name(p.name + ".npz")


def save_dataset(
    data: EpisodeDataset | TransitionDataset | PreferenceDataset, path: str | os.PathLike
) -> Path:
    """Write a dataset to ``path`` (``.npz``) atomically, without pickle.

    The archive holds the dataset's integer/float arrays and a ``header`` entry: a
    JSON string ``{"kind", "format_version", "S", "A"}``. The archive is built in memory
    and written by :func:`rltheory.trace.write_atomic` (temporary file in the same
    directory, fsync, ``os.replace``), so a crash never leaves a half-written dataset.

    Returns
    -------
    pathlib.Path
        The path written (``.npz`` appended when missing).

    Raises
    ------
    TypeError
        ``data`` is not one of the three dataset kinds.
    ValueError
        ``path`` names a directory rather than a file (``""``, ``"."``, ``".."``, ``"/"`` or a
        path ending in a separator).
    OSError
        The file cannot be written.
    """
    arrs, meta = _arrays(data)
    p = _npz_path(path)
    if p is None:
        # Path('.').with_name failed with "PosixPath('.') has an empty name"; '..' wrote '...npz'
        # into the working directory and 'x.npz/' the file x.npz
        raw = os.fspath(path)
        raise ValueError(f"save_dataset: path must name a file, not a directory; got {raw!r}")
    buf = io.BytesIO()
    np.savez(buf, header=np.asarray(json.dumps(meta, sort_keys=True)), **arrs)
    return write_atomic(p, buf.getvalue())


def _build(kind: str, arrs: dict[str, np.ndarray], meta: dict[str, Any]) -> Any:
    A = tuple(meta["A"]) if isinstance(meta["A"], list) else meta["A"]
    if kind == "EpisodeDataset":
        return EpisodeDataset(arrs["states"], arrs["actions"], arrs["rewards"], meta["S"], A)
    if kind == "TransitionDataset":
        return TransitionDataset(
            arrs["states"], arrs["actions"], arrs["rewards"], arrs["next_states"], meta["S"], A
        )
    parts = {}
    for part in ("first", "second"):
        sub = {k.split(".", 1)[1]: v for k, v in arrs.items() if k.startswith(part + ".")}
        parts[part] = _build("EpisodeDataset", sub, meta)
    return PreferenceDataset(parts["first"], parts["second"], arrs["labels"])


def load_dataset(path: str | os.PathLike) -> EpisodeDataset | TransitionDataset | PreferenceDataset:
    """Read a dataset written by :func:`save_dataset` (``allow_pickle=False``) and re-validate it.

    ``path`` may be the name given to :func:`save_dataset`: when no file has that name and the
    name does not end in ``.npz``, the file ``save_dataset`` wrote for it (``.npz`` appended) is
    read, so ``load_dataset(name)`` reads what ``save_dataset(data, name)`` wrote.

    Raises
    ------
    InvalidModelError
        The file is not an ``.npz`` archive (a truncated, corrupted or foreign file), lacks
        the header or an array, its header is not a JSON object with
        ``S`` and ``A``, names an unknown kind or format version, or holds an invalid
        dataset (the located message of the dataset class, prefixed with the path; text
        or complex rewards included).
    OSError
        The file cannot be opened (``FileNotFoundError``, ``IsADirectoryError``, ...). When
        neither ``path`` nor ``path`` with ``.npz`` appended exists, the ``FileNotFoundError``
        names both.
    """
    p = Path(path)
    saved = _npz_path(path)
    if saved is not None and saved != p and not os.path.isfile(p):
        # numpy's asymmetry: save_dataset("x") writes x.npz, and opening "x" found no file
        if os.path.exists(saved):
            p = saved
        elif not os.path.exists(p):
            raise FileNotFoundError(
                errno.ENOENT,
                f"load_dataset: no file {str(p)!r} nor {str(saved)!r} (save_dataset appends .npz "
                "to a name that does not end in it)",
            )
    # opened outside the parsing ``try``: a missing or unreadable file keeps its own OSError
    with open(p, "rb") as fh:
        try:
            loaded = np.load(fh, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):  # a bare .npy array
                raise ValueError(f"it holds a single {type(loaded).__name__}, not an .npz archive")
            with loaded as z:
                arrs = {k: z[k] for k in z.files}
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            ValueError,
            NotImplementedError,
            RuntimeError,
            OSError,
        ) as exc:
            # numpy's and zipfile's own messages name neither the file nor the format (a text
            # file reads as "contains pickled (object) data", a truncated archive as "File is
            # not a zip file"; a corrupted directory entry gives NotImplementedError "That
            # compression method is not supported", RuntimeError "... is encrypted" or
            # OSError "Invalid argument" from a seek before the start)
            raise InvalidModelError(
                f"{p}: not a dataset archive written by save_dataset ({type(exc).__name__}: {exc})"
            ) from None
    if "header" not in arrs:
        raise InvalidModelError(
            f"{p}: not an rltheory dataset (no 'header' entry; entries: {sorted(arrs)})"
        )
    try:
        meta = json.loads(str(arrs.pop("header")))
    except json.JSONDecodeError as exc:
        raise InvalidModelError(f"{p}: header is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise InvalidModelError(
            f"{p}: header must be a JSON object with keys kind, format_version, S, A; "
            f"got a JSON {type(meta).__name__}"
        )
    kind = meta.get("kind")
    if kind not in ("EpisodeDataset", "TransitionDataset", "PreferenceDataset"):
        raise InvalidModelError(f"{p}: unknown dataset kind {kind!r}")
    version = meta.get("format_version")
    # the integer itself: JSON true and 1.0 compared equal to 1 and were read as version 1
    if type(version) is not int or version != FORMAT_VERSION:
        raise InvalidModelError(
            f"{p}: format_version {meta.get('format_version')!r} is not {FORMAT_VERSION}"
        )
    lacking = [k for k in ("S", "A") if k not in meta]
    if lacking:
        raise InvalidModelError(f"{p}: header lacks the keys {lacking}")
    need = _FIELDS.get(kind) or ("labels",) + tuple(
        f"{q}.{f}" for q in ("first", "second") for f in _FIELDS["EpisodeDataset"]
    )
    missing = [f for f in need if f not in arrs]
    if missing:
        raise InvalidModelError(f"{p}: {kind} archive lacks arrays {missing}")
    try:
        return _build(kind, arrs, meta)
    except (InvalidModelError, TypeError) as exc:
        # a TypeError here is the dataset class refusing an array of the file (text or
        # complex rewards), which escaped without the path
        raise InvalidModelError(f"{p}: {exc}") from None
