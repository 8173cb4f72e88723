"""``load_dataset`` reads what ``save_dataset`` wrote when given the same name.

``save_dataset(data, "x")`` writes ``x.npz`` (``.npz`` is appended to a name that does not end in
it, as ``numpy.savez`` does) but ``load_dataset("x")`` opened ``x`` only and raised
``FileNotFoundError``, numpy's own save/load asymmetry. Now the name is tried as given, then as
``save_dataset`` would have written it.
"""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pytest

from rltheory.errors import InvalidModelError
from rltheory.mdp import EpisodeDataset, PreferenceDataset, TransitionDataset
from rltheory.mdp.dataset_io import load_dataset, save_dataset

EPISODES = EpisodeDataset(np.array([[0, 1, 1]]), np.array([[1, 0]]), np.array([[0.5, 1.0]]), 2, 2)
OTHER = EpisodeDataset(np.array([[1, 0, 0]]), np.array([[0, 1]]), np.array([[2.0, -1.0]]), 2, 2)
DATASETS = {
    "episodes": EPISODES,
    "transitions": TransitionDataset([0, 1], [1, 0], [0.5, 1.0], [1, 1], 2, 2),
    "preferences": PreferenceDataset(EPISODES, OTHER, [1]),
}


def _same(a, b) -> bool:
    if isinstance(a, PreferenceDataset):
        return (
            _same(a.first, b.first)
            and _same(a.second, b.second)
            and np.array_equal(a.labels, b.labels)
        )
    fields = ("states", "actions", "rewards") + (
        ("next_states",) if isinstance(a, TransitionDataset) else ()
    )
    return type(a) is type(b) and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields)


@pytest.mark.parametrize("kind", sorted(DATASETS))
@pytest.mark.parametrize("name", ["x", "run.v1", "données ☃"])
@pytest.mark.parametrize("as_path", [False, True])
def test_load_takes_the_name_save_was_given(tmp_path, kind, name, as_path):
    path = tmp_path / name if as_path else str(tmp_path / name)
    written = save_dataset(DATASETS[kind], path)
    assert written == tmp_path / f"{name}.npz"
    assert _same(load_dataset(path), DATASETS[kind])  # before: FileNotFoundError
    assert _same(load_dataset(written), DATASETS[kind])


def test_a_file_with_the_exact_name_comes_first(tmp_path):
    # 'x' (a dataset archive under another name) and 'x.npz' both exist: 'x' is read as given
    save_dataset(OTHER, tmp_path / "x")
    (tmp_path / "x.npz").rename(tmp_path / "x")
    save_dataset(EPISODES, tmp_path / "x")
    assert _same(load_dataset(tmp_path / "x"), OTHER)
    assert _same(load_dataset(tmp_path / "x.npz"), EPISODES)


def test_a_folder_with_the_name_does_not_hide_the_saved_file(tmp_path):
    # save_dataset(data, 'run') writes run.npz beside a folder run/: loading 'run' reads it
    # (before: IsADirectoryError); a folder with no archive beside it still raises that
    (tmp_path / "run").mkdir()
    save_dataset(EPISODES, tmp_path / "run")
    assert _same(load_dataset(tmp_path / "run"), EPISODES)
    (tmp_path / "empty").mkdir()
    with pytest.raises(IsADirectoryError):
        load_dataset(tmp_path / "empty")


def test_neither_name_exists_names_both(tmp_path):
    missing = tmp_path / "absent"
    with pytest.raises(FileNotFoundError) as err:
        load_dataset(missing)
    assert err.value.errno == errno.ENOENT
    assert str(err.value) == (
        f"[Errno 2] load_dataset: no file {str(missing)!r} nor {str(missing) + '.npz'!r} "
        "(save_dataset appends .npz to a name that does not end in it)"
    )
    # a name ending in .npz is the only candidate: the OS error, naming it
    with pytest.raises(FileNotFoundError, match=r"absent\.npz"):
        load_dataset(tmp_path / "absent.npz")


def test_errors_in_the_saved_file_name_that_file(tmp_path):
    (tmp_path / "c.npz").write_bytes(b"not a zip archive")
    with pytest.raises(InvalidModelError) as err:
        load_dataset(tmp_path / "c")
    assert str(err.value).startswith(f"{Path(tmp_path / 'c.npz')}: not a dataset archive")
